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

use layout::{legend_band, titled};

mod bars;
mod curves;
mod distribution;
mod figures;
pub mod flame;
pub mod layout;
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
    let text = render_svg(fig, opts).map_err(|msg| PlotError::Draw { figure: name.to_string(), msg })?;
    let w = output::write_all(&text, dir, name, opts)?;
    Ok((w.png, w.svg))
}

/// The SVG of `fig` as plotters draws it under `opts`: text still `<text>` elements, sizes in
/// logical pixels (`logical_dpi` to the inch), before output.rs turns the text into outlines.
pub fn render_svg<F: Figure>(fig: &F, opts: &FigureOptions) -> Result<String, String> {
    init_font().map_err(|x| x.to_string())?;
    let per_inch = output::logical_dpi(opts.size_in.map(|s| s.0)) as f64;
    let mut text = String::new();
    layout::with_per_inch(per_inch, || -> Result<(), String> {
        let root = SVGBackend::with_string(&mut text, canvas(fig, opts)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        fig.draw(&root)?;
        root.present().map_err(e)
    })?;
    Ok(text)
}

fn grid(n: usize, max_cols: usize) -> (usize, usize) {
    let cols = n.clamp(1, max_cols);
    (n.div_ceil(cols).max(1), cols)
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

/// The ticks of a log axis `axis_px` logical pixels long whose labels (`fmt_num`, `font_pt`
/// points) do not touch: walking up the axis, a tick is kept only when its label starts a gap
/// after the last kept one's (else "500" and "1000" read as "5001000" at 3.3 in). `along_height`: a vertical axis,
/// where labels stack by their height.
pub fn spaced_log_ticks(ticks: Vec<f64>, lo: f64, hi: f64, axis_px: f64, font_pt: f64, along_height: bool) -> Vec<f64> {
    let gap = layout::px(3.0);
    let span = (hi.log10() - lo.log10()).max(1e-12);
    let mut out: Vec<f64> = Vec::new();
    let mut last_end = f64::NEG_INFINITY;
    for v in ticks {
        let at = axis_px * (v.log10() - lo.log10()) / span;
        let half = if along_height { layout::px(font_pt) * 0.6 } else { layout::text_w(&fmt_num(v), font_pt) / 2.0 };
        if at - half >= last_end + gap {
            out.push(v);
            last_end = at + half;
        }
    }
    out
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
pub use curves::{CurveFigure, ScalingFigure};
pub use distribution::{BoxFigure, BoxStats};
pub use figures::{CdfFigure, CounterGrid, HistogramGrid, IterationGrid, Series};

#[cfg(test)]
mod tests;
