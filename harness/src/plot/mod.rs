//! Figures for `tracebench report`, drawn with plotters into SVG, then written as SVG, PNG and
//! (`--pdf`) PDF by `output.rs`.
//!
//! Text is laid out and drawn with a bundled DejaVu Sans (harness/assets, Bitstream Vera
//! licence, which allows redistribution inside a larger package): plotters measures it through
//! its `ab_glyph` feature, the SVG carries it as outlines, the PDF embeds it, so a figure looks
//! the same on any machine and needs no system font. Every figure names its axes
//! with units, marks log scales in the axis title, and carries a legend, so it reads on its own.
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

mod bars;
mod distribution;
mod figures;
pub mod flame;
mod output;
pub mod palette;
pub use output::{parse_size, set_options, FigureOptions, LOGICAL_DPI};

/// DejaVu Sans 2.37 from Debian's fonts-dejavu-core; licence in harness/assets/.
pub const FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("cannot draw figure {figure}: {msg}")]
    Draw { figure: String, msg: String },
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("the bundled font harness/assets/DejaVuSans.ttf does not parse; restore it from fonts-dejavu-core")]
    Font,
}

static FONT_OK: OnceLock<bool> = OnceLock::new();

fn init_font() -> Result<(), PlotError> {
    let ok = *FONT_OK.get_or_init(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok()
            && plotters::style::register_font(FAMILY, FontStyle::Bold, FONT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(PlotError::Font)
    }
}

/// The colour of palette slot `i` (palette.rs: a slot per tracer name, colour-blind safe).
pub fn colour(i: usize) -> RGBColor {
    palette::rgb(i)
}

/// Beyond the ten colours, series also differ by marker: none for 0-9, circles for 10-19,
/// triangles for 20-29, crosses after (a 16-tracer CDF would otherwise repeat six colours).
pub fn marker(i: usize) -> usize {
    (i / 10).min(3)
}

/// Draws marker `kind` of colour `i` at `at` (any coordinate the area understands).
fn draw_marker<DB: DrawingBackend, C: plotters::coord::CoordTranslate>(
    area: &DrawingArea<DB, C>,
    at: C::From,
    i: usize,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
    C::From: Clone,
{
    let c = colour(i);
    match marker(i) {
        0 => Ok(()),
        1 => area.draw(&Circle::new(at, 4, c.filled())).map_err(e),
        2 => area.draw(&TriangleMarker::new(at, 6, c.filled())).map_err(e),
        _ => area.draw(&Cross::new(at, 5, c.stroke_width(2))).map_err(e),
    }
}

/// Compact number for axis labels: 1, 20, 300, 4k, 50k, 1.5M.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if x.abs() >= 100.0 || (x - x.round()).abs() < 1e-6 {
        format!("{:.0}", x)
    } else if x.abs() >= 10.0 {
        format!("{:.1}", x)
    } else {
        format!("{:.2}", x).trim_end_matches('0').trim_end_matches('.').to_string()
    };
    format!("{s}{suffix}")
}

/// Minor gridlines: one between major ticks, light enough to read as a hint.
const MINOR: RGBColor = RGBColor(236, 236, 236);

type DResult = Result<(), String>;
fn e<E: std::fmt::Display>(err: E) -> String {
    err.to_string()
}

/// A figure that can be drawn on any plotters backend.
pub trait Figure {
    /// Logical pixels (100 per inch) when no `--figure-size` is given.
    fn size(&self) -> (u32, u32);
    /// Rows of panels, for a grid figure: `--figure-size`'s height is per two rows.
    fn panel_rows(&self) -> Option<usize> {
        None
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static;
}

/// The logical canvas of `fig` under `opts` (its own size, or `--figure-size`).
fn canvas<F: Figure>(fig: &F, opts: &FigureOptions) -> (u32, u32) {
    match opts.size_in {
        None => fig.size(),
        Some((w, h)) => {
            let per_inch = output::logical_dpi(Some(w));
            let (w, h) = ((w * per_inch).round() as u32, (h * per_inch).round() as u32);
            match fig.panel_rows() {
                None => (w, h),
                // H per two rows, titles included: a grid of one or two rows is exactly H tall.
                Some(rows) => (w, h * rows.max(2) as u32 / 2),
            }
        }
    }
}

/// Draws `fig` into `dir/name.svg` and `dir/name.png` (and `.pdf` with `--pdf`), each written
/// atomically, under this report's figure options.
pub fn save<F: Figure>(fig: &F, dir: &Path, name: &str) -> Result<(PathBuf, PathBuf), PlotError> {
    save_with(fig, dir, name, &output::options())
}

pub fn save_with<F: Figure>(
    fig: &F,
    dir: &Path,
    name: &str,
    opts: &FigureOptions,
) -> Result<(PathBuf, PathBuf), PlotError> {
    init_font()?;
    let draw_err = |msg: String| PlotError::Draw { figure: name.to_string(), msg };
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, canvas(fig, opts)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| draw_err(x.to_string()))?;
        fig.draw(&root).map_err(draw_err)?;
        root.present().map_err(|x| draw_err(x.to_string()))?;
    }
    let w = output::write_all(&text, dir, name, opts)?;
    Ok((w.png, w.svg))
}

fn grid(n: usize, max_cols: usize) -> (usize, usize) {
    let cols = n.clamp(1, max_cols);
    (n.div_ceil(cols).max(1), cols)
}

fn title_font() -> (&'static str, u32) {
    (FAMILY, 22)
}
fn panel_font() -> (&'static str, u32) {
    (FAMILY, 17)
}

/// Draws the figure title and returns the area below it.
fn titled<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> Result<DrawingArea<DB, Shift>, String>
where
    DB::ErrorType: 'static,
{
    if !output::options().titles {
        return Ok(root.clone());
    }
    root.titled(title, title_font()).map_err(e)
}

fn log_range(lo: f64, hi: f64) -> (f64, f64) {
    let lo = if lo > 0.0 { lo } else { 1.0 };
    let hi = if hi > lo { hi } else { lo * 10.0 };
    (lo / 1.3, hi * 1.3)
}

/// Tick values for a log axis over lo..hi: the coarsest of the mantissa sets that gives at
/// least four ticks (1; 1-2-5; 1-2-3-5; ...), so that labels neither vanish (a range inside one
/// decade) nor pile up (plotters' default labels only powers of ten).
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    const SETS: [&[f64]; 5] = [
        &[1.0],
        &[1.0, 2.0, 5.0],
        &[1.0, 2.0, 3.0, 5.0],
        &[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0],
        &[1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0],
    ];
    if !(lo > 0.0 && hi > lo) {
        return vec![];
    }
    let mut best = Vec::new();
    for set in SETS {
        let mut t = Vec::new();
        let mut e = lo.log10().floor() as i32 - 1;
        while 10f64.powi(e) <= hi * 10.0 {
            for m in set {
                let v = m * 10f64.powi(e);
                if v >= lo && v <= hi {
                    t.push(v);
                }
            }
            e += 1;
        }
        if t.len() > 16 {
            // Too many decades for even one label each: every other decade.
            let step = t.len().div_ceil(12);
            t = t.into_iter().step_by(step).collect();
        }
        best = t;
        if best.len() >= 4 {
            return best;
        }
    }
    if best.len() >= 2 {
        return best;
    }
    // A very narrow range: evenly spaced round values.
    let raw = (hi - lo) / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(raw);
    let mut v = (lo / step).ceil() * step;
    let mut t = Vec::new();
    while v <= hi {
        t.push(v);
        v += step;
    }
    t
}

/// The ticks of a log axis `axis_px` logical pixels long whose labels (`fmt_num`, `font_px`
/// high) do not touch: walking up the axis, a tick is kept only when its label starts a gap
/// after the last kept one's (else "500" and "1000" read as "5001000" at 3.3 in). `along_height`: a vertical axis,
/// where labels stack by their height.
pub fn spaced_log_ticks(ticks: Vec<f64>, lo: f64, hi: f64, axis_px: f64, font_px: u32, along_height: bool) -> Vec<f64> {
    const GAP: f64 = 6.0;
    let span = (hi.log10() - lo.log10()).max(1e-12);
    let font = (FAMILY, font_px).into_font();
    let mut out: Vec<f64> = Vec::new();
    let mut last_end = f64::NEG_INFINITY;
    for v in ticks {
        let at = axis_px * (v.log10() - lo.log10()) / span;
        let (w, h) = font.box_size(&fmt_num(v)).unwrap_or((font_px * 3, font_px));
        let half = if along_height { h as f64 / 2.0 } else { w as f64 / 2.0 };
        if at - half >= last_end + GAP {
            out.push(v);
            last_end = at + half;
        }
    }
    out
}

/// Draws a legend band (coloured marks and names in columns) at the top of `area` and returns
/// the rest, so legends never cover data.
fn legend_band<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, usize)],
) -> Result<DrawingArea<DB, Shift>, String>
where
    DB::ErrorType: 'static,
{
    if entries.is_empty() {
        return Ok(area.clone());
    }
    let (w, _) = area.dim_in_pixel();
    let cols = 5usize.min(entries.len()).max(1);
    let rows = entries.len().div_ceil(cols);
    let band_h = 12 + 24 * rows as u32;
    let (band, rest) = area.split_vertically(band_h);
    let col_w = (w as i32 - 40) / cols as i32;
    for (k, (name, c)) in entries.iter().enumerate() {
        let (r, col) = (k / cols, k % cols);
        let x = 30 + col as i32 * col_w;
        let y = 10 + r as i32 * 24;
        let i = *c;
        let c = colour(i);
        band.draw(&Rectangle::new([(x, y + 3), (x + 22, y + 13)], c.filled())).map_err(e)?;
        if marker(i) > 0 {
            band.draw(&Rectangle::new([(x + 5, y), (x + 17, y + 16)], WHITE.filled())).map_err(e)?;
            draw_marker(&band, (x + 11, y + 8), i)?;
        }
        band.draw(&Text::new(name.clone(), (x + 28, y), (FAMILY, 15).into_font())).map_err(e)?;
    }
    Ok(rest)
}

/// The title, then a legend band naming every series: the frame of each one-chart figure.
fn titled_with_legend<DB: DrawingBackend, T>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    series: &[Series<T>],
) -> Result<DrawingArea<DB, Shift>, String>
where
    DB::ErrorType: 'static,
{
    let area = titled(root, title)?;
    let entries: Vec<(String, usize)> = series.iter().map(|s| (s.name.clone(), s.colour)).collect();
    legend_band(&area, &entries)
}

/// A named series with its tracer colour index.
pub use bars::PathBars;
pub use distribution::{BoxFigure, BoxStats};
pub use figures::{CdfFigure, CounterGrid, CurveFigure, HistogramGrid, IterationGrid, ScalingFigure, Series};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_format() {
        assert_eq!(fmt_num(100.0), "100");
        assert_eq!(fmt_num(1500.0), "1500");
        assert_eq!(fmt_num(25000.0), "25k");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_num(1.5e6), "1.5M");
    }

    #[test]
    fn log_ticks_label_every_range() {
        assert_eq!(log_ticks(1.0, 1e4), vec![1.0, 10.0, 100.0, 1000.0, 10000.0]);
        assert_eq!(log_ticks(90.0, 1100.0), vec![100.0, 200.0, 500.0, 1000.0]);
        let t = log_ticks(300.0, 360.0);
        assert!(t.len() >= 2 && t.iter().all(|v| (300.0..=360.0).contains(v)), "{t:?}");
        assert!(log_ticks(0.5, 1e10).len() <= 12);
    }

    #[test]
    fn draws_png_and_svg_with_the_bundled_font() {
        let dir = tempfile::tempdir().unwrap();
        let fig = ScalingFigure {
            title: "t".into(),
            series: vec![Series { name: "a".into(), colour: 0, points: vec![(1.0, 100.0), (2.0, 250.0)] }],
            spread: vec![vec![(1.0, 90.0, 110.0), (2.0, 240.0, 260.0)]],
        };
        let (png, svg) = save_with(&fig, dir.path(), "s", &FigureOptions::default()).unwrap();
        let bytes = std::fs::read(png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        let svg = std::fs::read_to_string(svg).unwrap();
        // Text as outlines: no <text> element, no font the viewer must have.
        assert!(svg.contains("<svg") && !svg.contains("<text") && !svg.contains("font-family"), "{svg}");
    }

    /// The histogram grid at a paper column's size: its tick labels measured in the drawing
    /// (plotters' SVG, before the text becomes outlines) never overlap, and its PDF is the
    /// documented 3.3 x 2.5 in (docs/figures.md).
    #[test]
    fn tick_labels_never_collide_at_a_column_width() {
        init_font().unwrap();
        let bins = |lo: f64| -> Vec<(f64, f64, u64)> {
            (0..75)
                .map(|i| {
                    (
                        lo * 10f64.powf(i as f64 / 25.0),
                        lo * 10f64.powf((i + 1) as f64 / 25.0),
                        1 + (i as u64 * 37) % 900,
                    )
                })
                .collect()
        };
        let fig = HistogramGrid {
            title: "Latency histogram per tracer".into(),
            panels: [20.0, 45.0, 90.0, 300.0]
                .iter()
                .enumerate()
                .map(|(i, &lo)| Series { name: format!("t{i}"), colour: i, points: bins(lo) })
                .collect(),
        };
        let opts = FigureOptions { size_in: Some((3.3, 2.5)), dpi: 300, pdf: true, titles: true };
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, canvas(&fig, &opts)).into_drawing_area();
            fig.draw(&root).unwrap();
            root.present().unwrap();
        }
        // (x, y, font size, text) of every <text>.
        let attr = |t: &str, k: &str| -> Option<String> {
            let i = t.find(&format!(" {k}=\""))? + k.len() + 3;
            Some(t[i..i + t[i..].find('"')?].to_string())
        };
        let texts: Vec<(f64, f64, u32, String, String)> = svg
            .split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..t.find("</text>")?];
                Some((
                    attr(t, "x")?.parse().ok()?,
                    attr(t, "y")?.parse().ok()?,
                    attr(t, "font-size")?.parse::<f64>().ok()?.ceil() as u32,
                    attr(t, "text-anchor").unwrap_or_default(),
                    body.trim().to_string(),
                ))
            })
            .collect();
        let ticks = texts.iter().filter(|t| t.4.starts_with(|c: char| c.is_ascii_digit())).count();
        assert!(ticks >= 16, "tick labels expected: {texts:?}");
        let mut boxes = Vec::new();
        for (x, y, size, anchor, body) in &texts {
            let (w, h) = (FAMILY, *size).into_font().box_size(body).unwrap();
            let x0 = match anchor.as_str() {
                "middle" => x - w as f64 / 2.0,
                "end" => x - w as f64,
                _ => *x,
            };
            boxes.push((x0, x0 + w as f64, *y, *y + h as f64, body.clone()));
        }
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                // Touching reads as one number ("5001000"): at least 3 px apart.
                let overlap = a.0 < b.1 + 3.0 && b.0 < a.1 + 3.0 && a.2 < b.3 && b.2 < a.3;
                assert!(!overlap, "labels '{}' and '{}' closer than 3 px at 3.3 in: {a:?} {b:?}", a.4, b.4);
            }
        }
        let dir = tempfile::tempdir().unwrap();
        save_with(&fig, dir.path(), "h", &opts).unwrap();
        let pdf = String::from_utf8_lossy(&std::fs::read(dir.path().join("h.pdf")).unwrap()).into_owned();
        let mb = pdf.split("MediaBox [").nth(1).and_then(|x| x.split(']').next()).unwrap_or("").to_string();
        let v: Vec<f64> = mb.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        assert!(
            v.len() == 4 && (v[2] - 237.6).abs() < 0.5 && (v[3] - 180.0).abs() < 0.5,
            "3.3 x 2.5 in expected: {mb}"
        );
    }

    #[test]
    fn size_dpi_and_pdf_follow_the_options() {
        let dir = tempfile::tempdir().unwrap();
        let fig = ScalingFigure {
            title: "t".into(),
            series: vec![Series { name: "a".into(), colour: 0, points: vec![(1.0, 100.0), (2.0, 250.0)] }],
            spread: vec![],
        };
        let opts = FigureOptions { size_in: Some((3.5, 2.5)), dpi: 300, pdf: true, titles: true };
        let (png, _) = save_with(&fig, dir.path(), "s", &opts).unwrap();
        let bytes = std::fs::read(png).unwrap();
        let (w, h) = (
            u32::from_be_bytes(bytes[16..20].try_into().unwrap()),
            u32::from_be_bytes(bytes[20..24].try_into().unwrap()),
        );
        assert_eq!((w, h), (1050, 750));
        let pdf = std::fs::read(dir.path().join("s.pdf")).unwrap();
        assert!(pdf.starts_with(b"%PDF"));
        // 3.5 x 2.5 in = 252 x 180 pt (to a logical pixel), the font embedded.
        let text = String::from_utf8_lossy(&pdf);
        let mb = text.split("MediaBox [").nth(1).and_then(|x| x.split(']').next()).unwrap_or("");
        let v: Vec<f64> = mb.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        assert!(v.len() == 4 && (v[2] - 252.0).abs() < 0.5 && (v[3] - 180.0).abs() < 0.5, "page size: {mb}");
        assert!(text.contains("FontFile"), "font");
    }
}
