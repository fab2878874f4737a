//! Figures for `tracebench report`, drawn with plotters into PNG and SVG.
//!
//! Text is drawn with a bundled DejaVu Sans (harness/assets, Bitstream Vera licence, which
//! allows redistribution inside a larger package) through plotters' `ab_glyph` feature, so a
//! figure looks the same on any machine and needs no system font. Every figure names its axes
//! with units, marks log scales in the axis title, and carries a legend, so it reads on its own.
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

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

/// Tableau-10 colours: distinguishable, and stable per tracer index across all figures.
pub fn colour(i: usize) -> RGBColor {
    const P: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    let (r, g, b) = P[i % P.len()];
    RGBColor(r, g, b)
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

type DResult = Result<(), String>;
fn e<E: std::fmt::Display>(err: E) -> String {
    err.to_string()
}

/// A figure that can be drawn on any plotters backend.
pub trait Figure {
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static;
}

/// Draws `fig` into `dir/name.png` and `dir/name.svg` (each via a temp file and a rename).
pub fn save<F: Figure>(fig: &F, dir: &Path, name: &str) -> Result<(PathBuf, PathBuf), PlotError> {
    init_font()?;
    let draw_err = |msg: String| PlotError::Draw { figure: name.to_string(), msg };
    let png = dir.join(format!("{name}.png"));
    // The encoder picks the format from the extension, so the temp name ends in .png too.
    let png_tmp = dir.join(format!(".{name}.tmp.png"));
    {
        let root = BitMapBackend::new(&png_tmp, fig.size()).into_drawing_area();
        root.fill(&WHITE).map_err(|x| draw_err(x.to_string()))?;
        fig.draw(&root).map_err(draw_err)?;
        root.present().map_err(|x| draw_err(x.to_string()))?;
    }
    std::fs::rename(&png_tmp, &png).map_err(|source| PlotError::Io { path: png.clone(), source })?;
    let svg = dir.join(format!("{name}.svg"));
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, fig.size()).into_drawing_area();
        root.fill(&WHITE).map_err(|x| draw_err(x.to_string()))?;
        fig.draw(&root).map_err(draw_err)?;
        root.present().map_err(|x| draw_err(x.to_string()))?;
    }
    crate::report::write_atomic(&svg, text.as_bytes()).map_err(|source| PlotError::Io { path: svg.clone(), source })?;
    Ok((png, svg))
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
        let c = colour(*c);
        band.draw(&Rectangle::new([(x, y + 3), (x + 22, y + 13)], c.filled())).map_err(e)?;
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
#[derive(Debug, Clone)]
pub struct Series<T> {
    pub name: String,
    pub colour: usize,
    pub points: Vec<T>,
}

/// Latency CDF of every tracer on one log-x axis.
pub struct CdfFigure {
    pub title: String,
    pub series: Vec<Series<(f64, f64)>>,
}

impl Figure for CdfFigure {
    fn size(&self) -> (u32, u32) {
        (1100, 650)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static,
    {
        let area = titled_with_legend(root, &self.title, &self.series)?;
        let xs = self.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).filter(|x| *x > 0.0);
        let (lo, hi) = xs.fold((f64::INFINITY, 0f64), |a, x| (a.0.min(x), a.1.max(x)));
        let (lo, hi) = log_range(lo, hi);
        let mut chart = ChartBuilder::on(&area)
            .margin(15)
            .x_label_area_size(55)
            .y_label_area_size(75)
            .build_cartesian_2d((lo..hi).log_scale().with_key_points(log_ticks(lo, hi)), 0f64..1.0)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("latency of one call (ns, log scale)")
            .y_desc("fraction of calls with latency <= x")
            .x_label_formatter(&|v| fmt_num(*v))
            .y_label_formatter(&|v| format!("{:.1}", v))
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 17))
            .draw()
            .map_err(e)?;
        for s in &self.series {
            let c = colour(s.colour);
            chart.draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2))).map_err(e)?;
        }
        Ok(())
    }
}

/// One histogram panel per tracer: calls per log-spaced bin, both axes log.
pub struct HistogramGrid {
    pub title: String,
    /// Per tracer: (bin low edge, bin high edge, calls).
    pub panels: Vec<Series<(f64, f64, u64)>>,
}

impl Figure for HistogramGrid {
    fn size(&self) -> (u32, u32) {
        let (rows, _) = grid(self.panels.len(), 2);
        (1200, 60 + 330 * rows as u32)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static,
    {
        let area = titled(root, &self.title)?;
        let (rows, cols) = grid(self.panels.len(), 2);
        for (p, a) in self.panels.iter().zip(area.split_evenly((rows, cols))) {
            let lo = p.points.iter().map(|b| b.0).fold(f64::INFINITY, f64::min);
            let hi = p.points.iter().map(|b| b.1).fold(0f64, f64::max);
            let (lo, hi) = log_range(lo, hi);
            let top = p.points.iter().map(|b| b.2).max().unwrap_or(1) as f64 * 2.0;
            let c = colour(p.colour);
            let mut chart = ChartBuilder::on(&a)
                .caption(&p.name, panel_font())
                .margin(10)
                .x_label_area_size(45)
                .y_label_area_size(65)
                .build_cartesian_2d(
                    (lo..hi).log_scale().with_key_points(log_ticks(lo, hi)),
                    (0.7f64..top.max(10.0)).log_scale().with_key_points(log_ticks(0.7, top.max(10.0))),
                )
                .map_err(e)?;
            chart
                .configure_mesh()
                .x_desc("latency (ns, log scale)")
                .y_desc("calls per bin (log)")
                .x_label_formatter(&|v| fmt_num(*v))
                .y_label_formatter(&|v| fmt_num(*v))
                .label_style((FAMILY, 13))
                .axis_desc_style((FAMILY, 14))
                .draw()
                .map_err(e)?;
            chart
                .draw_series(p.points.iter().map(|&(l, h, n)| Rectangle::new([(l, 0.7), (h, n as f64)], c.filled())))
                .map_err(e)?;
        }
        Ok(())
    }
}

/// One panel per tracer: latency of each call against its iteration index (log y), which
/// shows periodic slow paths as regularly spaced points above the fast path.
pub struct IterationGrid {
    pub title: String,
    pub panels: Vec<Series<(u64, f64)>>,
}

impl Figure for IterationGrid {
    fn size(&self) -> (u32, u32) {
        let (rows, _) = grid(self.panels.len(), 2);
        (1200, 60 + 330 * rows as u32)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static,
    {
        let area = titled(root, &self.title)?;
        let (rows, cols) = grid(self.panels.len(), 2);
        for (p, a) in self.panels.iter().zip(area.split_evenly((rows, cols))) {
            let x0 = p.points.iter().map(|v| v.0).min().unwrap_or(0);
            let x1 = p.points.iter().map(|v| v.0).max().unwrap_or(1).max(x0 + 1);
            let ylo = p.points.iter().map(|v| v.1).filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
            let yhi = p.points.iter().map(|v| v.1).fold(0f64, f64::max);
            let (ylo, yhi) = log_range(ylo, yhi);
            let c = colour(p.colour);
            let mut chart = ChartBuilder::on(&a)
                .caption(&p.name, panel_font())
                .margin(10)
                .x_label_area_size(45)
                .y_label_area_size(65)
                .build_cartesian_2d(x0 as f64..x1 as f64, (ylo..yhi).log_scale().with_key_points(log_ticks(ylo, yhi)))
                .map_err(e)?;
            chart
                .configure_mesh()
                .x_desc("iteration index (calls since the end of warm-up)")
                .y_desc("latency (ns, log scale)")
                .x_label_formatter(&|v| fmt_num(*v))
                .y_label_formatter(&|v| fmt_num(*v))
                .label_style((FAMILY, 13))
                .axis_desc_style((FAMILY, 14))
                .draw()
                .map_err(e)?;
            chart
                .draw_series(p.points.iter().map(|&(i, l)| Circle::new((i as f64, l.max(ylo)), 2, c.filled())))
                .map_err(e)?;
        }
        Ok(())
    }
}

/// Survey Figures 3, 4 and 7: one panel per hardware counter, latency (y) against the counter
/// value (x), one colour per tracer.
pub struct CounterGrid {
    pub title: String,
    pub panels: Vec<CounterPanel>,
}

/// (counter name, per-tracer points (counter value, latency ns)).
pub type CounterPanel = (String, Vec<Series<(f64, f64)>>);

impl Figure for CounterGrid {
    fn size(&self) -> (u32, u32) {
        let (rows, _) = grid(self.panels.len(), 2);
        (1200, 60 + 400 * rows as u32)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static,
    {
        let area = titled(root, &self.title)?;
        let mut entries: Vec<(String, usize)> = Vec::new();
        for s in self.panels.iter().flat_map(|p| p.1.iter()) {
            if !entries.iter().any(|x| x.0 == s.name) {
                entries.push((s.name.clone(), s.colour));
            }
        }
        let area = legend_band(&area, &entries)?;
        let (rows, cols) = grid(self.panels.len(), 2);
        for ((counter, series), a) in self.panels.iter().zip(area.split_evenly((rows, cols))) {
            let all = || series.iter().flat_map(|s| s.points.iter());
            let xmax = all().map(|p| p.0).fold(0f64, f64::max);
            let xmin = all().map(|p| p.0).fold(f64::INFINITY, f64::min).min(0.0);
            let span = (xmax - xmin).max(1.0);
            let ylo = all().map(|p| p.1).filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
            let yhi = all().map(|p| p.1).fold(0f64, f64::max);
            let (ylo, yhi) = log_range(ylo, yhi);
            let mut chart = ChartBuilder::on(&a)
                .caption(format!("latency against {counter}"), panel_font())
                .margin(10)
                .x_label_area_size(45)
                .y_label_area_size(65)
                .build_cartesian_2d(
                    xmin - 0.03 * span..xmax + 0.05 * span,
                    (ylo..yhi).log_scale().with_key_points(log_ticks(ylo, yhi)),
                )
                .map_err(e)?;
            chart
                .configure_mesh()
                .x_desc(format!("{counter} per call (count)"))
                .y_desc("latency (ns, log scale)")
                .x_label_formatter(&|v| fmt_num(*v))
                .y_label_formatter(&|v| fmt_num(*v))
                .label_style((FAMILY, 13))
                .axis_desc_style((FAMILY, 14))
                .draw()
                .map_err(e)?;
            for s in series {
                let c = colour(s.colour);
                chart
                    .draw_series(s.points.iter().map(|&(x, y)| Circle::new((x, y.max(ylo)), 2, c.mix(0.6).filled())))
                    .map_err(e)?;
            }
        }
        Ok(())
    }
}

/// Survey Figures 5, 6 and 8: mean latency against thread (core) count, log y, one line per
/// tracer.
pub struct ScalingFigure {
    pub title: String,
    pub series: Vec<Series<(f64, f64)>>,
}

impl Figure for ScalingFigure {
    fn size(&self) -> (u32, u32) {
        (1100, 650)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static,
    {
        let area = titled_with_legend(root, &self.title, &self.series)?;
        let all = || self.series.iter().flat_map(|s| s.points.iter());
        let xmax = all().map(|p| p.0).fold(1f64, f64::max);
        let ylo = all().map(|p| p.1).filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
        let yhi = all().map(|p| p.1).fold(0f64, f64::max);
        let (ylo, yhi) = log_range(ylo, yhi);
        let mut chart = ChartBuilder::on(&area)
            .margin(15)
            .x_label_area_size(55)
            .y_label_area_size(75)
            .build_cartesian_2d(0.5f64..xmax + 0.5, (ylo..yhi).log_scale().with_key_points(log_ticks(ylo, yhi)))
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("threads tracing at once (one per core)")
            .y_desc("mean latency per call (ns, log scale)")
            .x_labels((xmax as usize + 1).min(17))
            .x_label_formatter(&|v| {
                if (v - v.round()).abs() < 1e-9 {
                    format!("{}", v.round())
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| fmt_num(*v))
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 17))
            .draw()
            .map_err(e)?;
        for s in &self.series {
            let c = colour(s.colour);
            chart.draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2))).map_err(e)?;
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 4, c.filled()))).map_err(e)?;
        }
        Ok(())
    }
}

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
        };
        let (png, svg) = save(&fig, dir.path(), "s").unwrap();
        let bytes = std::fs::read(png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        assert!(std::fs::read_to_string(svg).unwrap().contains("<svg"));
    }
}
