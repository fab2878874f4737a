//! The report's figures (survey Figures 3-8 in our layout), each a [`Figure`] drawn by `save`.
use plotters::coord::ranged1d::AsRangedCoord;
use plotters::prelude::*;

use super::layout::*;
use super::*;

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
        // The axis spans each curve from its 0.5th to its 99.5th percentile: one slow call
        // cannot squash the curves to the left. A triangle marks a curve that goes on beyond.
        let at = |s: &Series<(f64, f64)>, q: f64| s.points.iter().find(|p| p.1 >= q).or(s.points.last()).map(|p| p.0);
        let lo = self.series.iter().filter_map(|s| at(s, Q_LO)).filter(|x| *x > 0.0).fold(f64::INFINITY, f64::min);
        let hi = self.series.iter().filter_map(|s| at(s, Q_HI)).fold(0f64, f64::max);
        let (lo, hi) = log_range(lo, hi);
        let ticks = log_ticks(lo, hi);
        let (w, h) = area.dim_in_pixel();
        let (xa, ya) = label_areas(&["0.0".to_string()], true);
        let x_px = w as f64 - ya as f64 - 2.0 * px(10.0);
        let x_desc = fit(&["latency of one call (ns, log scale)".into(), "latency (ns, log scale)".into()], x_px, DESC);
        let y_desc = fit(
            &["fraction of calls with latency ≤ x".into(), "fraction of calls ≤ x".into(), "fraction ≤ x".into()],
            h as f64 - xa as f64 - 2.0 * px(4.0),
            DESC,
        );
        let x_ticks = spaced_log_ticks(ticks, lo, hi, x_px, TICK, false);
        let mut chart = ChartBuilder::on(&area)
            .margin(upx(4.0))
            .margin_right(upx(10.0))
            .x_label_area_size(xa)
            .y_label_area_size(ya)
            .build_cartesian_2d((lo..hi).log_scale().with_key_points(x_ticks), 0f64..1.0)
            .map_err(e)?;
        chart
            .configure_mesh()
            .max_light_lines(1)
            .light_line_style(MINOR)
            .set_all_tick_mark_size(tick_size())
            .x_desc(x_desc.0)
            .y_desc(y_desc.0)
            .y_labels(((h as f64 - xa as f64) / (px(TICK) * 2.2)).clamp(2.0, 11.0) as usize)
            .x_label_formatter(&|v| fmt_num(*v))
            .y_label_formatter(&|v| format!("{:.1}", v))
            .label_style(font(TICK))
            .axis_desc_style(font(x_desc.1.min(y_desc.1)))
            .draw()
            .map_err(e)?;
        for s in &self.series {
            let c = colour(s.colour);
            let y_at = |x: f64| {
                let k = s.points.partition_point(|p| p.0 <= x);
                match (k.checked_sub(1).and_then(|i| s.points.get(i)), s.points.get(k)) {
                    (Some(a), Some(b)) if b.0 > a.0 => a.1 + (b.1 - a.1) * (x.ln() - a.0.ln()) / (b.0.ln() - a.0.ln()),
                    (Some(a), _) => a.1,
                    (None, _) => 0.0,
                }
            };
            let (ylo, yhi) = (y_at(lo), y_at(hi));
            let inside = s.points.iter().copied().filter(|p| p.0 > lo && p.0 < hi);
            let pts: Vec<(f64, f64)> = std::iter::once((lo, ylo)).chain(inside).chain([(hi, yhi)]).collect();
            chart.draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2))).map_err(e)?;
            if yhi < 1.0 - 1e-9 {
                mark_beyond(chart.plotting_area(), (hi, yhi), 2, c)?;
            }
            if ylo > 1e-9 {
                mark_beyond(chart.plotting_area(), (lo, ylo), -2, c)?;
            }
            if marker(s.colour) > 0 {
                // About 12 markers along the curve, at evenly spaced fractions of calls.
                let step = (pts.len() / 12).max(1);
                for p in pts.iter().skip(step / 2).step_by(step) {
                    draw_marker(chart.plotting_area(), *p, s.colour)?;
                }
            }
        }
        Ok(())
    }
}

/// The name of a panel, and without its last parenthesis (" (6667 calls)") when that is too long.
fn panel_names(name: &str) -> Vec<String> {
    let mut v = vec![name.to_string()];
    if let Some((short, _)) = name.rsplit_once(" (") {
        v.push(short.to_string());
    }
    v
}

/// The chart of one grid panel: its caption fitted to the panel, tick labels only (the grid
/// draws the axis descriptions once).
fn panel<'a, DB: DrawingBackend, X: AsRangedCoord, Y: AsRangedCoord>(
    a: &'a DrawingArea<DB, Shift>,
    caption: &[String],
    y_ticks: &[String],
    x: X,
    y: Y,
) -> Result<ChartContext<'a, DB, Cartesian2d<X::CoordDescType, Y::CoordDescType>>, String>
where
    DB::ErrorType: 'static,
{
    let (w, _) = a.dim_in_pixel();
    let (cap, pts) = fit(caption, w as f64 - px(4.0), PANEL);
    let (xa, ya) = label_areas(y_ticks, false);
    ChartBuilder::on(a)
        .caption(cap, font(pts))
        .margin(upx(3.0))
        .margin_right(upx(9.0))
        .x_label_area_size(xa)
        .y_label_area_size(ya)
        .build_cartesian_2d(x, y)
        .map_err(e)
}

/// Pixels of a panel's plot (width, height) before it is built, for spacing its ticks.
fn panel_px<DB: DrawingBackend>(a: &DrawingArea<DB, Shift>, y_ticks: &[String]) -> (f64, f64) {
    let (w, h) = a.dim_in_pixel();
    let (xa, ya) = label_areas(y_ticks, false);
    let x = w as f64 - ya as f64 - px(12.0);
    let y = h as f64 - xa as f64 - px(6.0) - px(PANEL) * 1.4;
    (x.max(10.0), y.max(10.0))
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
    fn panel_rows(&self) -> Option<usize> {
        Some(grid(self.panels.len(), 2).0)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static,
    {
        let area = titled(root, &self.title)?;
        let area = shared_axes(
            &area,
            &["latency of one call (ns, log scale)".into(), "latency (ns, log scale)".into()],
            &["calls per bin (log scale)".into(), "calls per bin (log)".into(), "calls (log)".into()],
        )?;
        let (rows, cols) = grid(self.panels.len(), 2);
        for (p, a) in self.panels.iter().zip(area.split_evenly((rows, cols))) {
            // Bins from the one holding the 0.5th percentile to the one holding the 99.5th
            // (all when none is far out); the calls beyond are marked by a triangle.
            let total: u64 = p.points.iter().map(|b| b.2).sum();
            let mut acc = 0u64;
            let mut q = (f64::NAN, f64::NAN);
            for &(l, h, n) in &p.points {
                acc += n;
                if q.0.is_nan() && acc as f64 >= Q_LO * total as f64 {
                    q.0 = l;
                }
                if q.1.is_nan() && acc as f64 >= Q_HI * total as f64 {
                    q.1 = h;
                }
            }
            let min = p.points.iter().map(|b| b.0).fold(f64::INFINITY, f64::min);
            let max = p.points.iter().map(|b| b.1).fold(0f64, f64::max);
            let span = (q.1 / q.0).ln();
            let lo = if (q.0 / min).ln() > span { q.0 } else { min };
            let hi = if (max / q.1).ln() > span { q.1 } else { max };
            let (lo, hi) = log_range(lo, hi);
            let top = p.points.iter().map(|b| b.2).max().unwrap_or(1) as f64 * 2.0;
            let y_ticks = log_ticks(0.7, top.max(10.0));
            let (x_px, y_px) = panel_px(&a, &labels(&y_ticks));
            let y_ticks = spaced_log_ticks(y_ticks, 0.7, top.max(10.0), y_px, TICK, true);
            let c = colour(p.colour);
            let mut chart = panel(
                &a,
                &panel_names(&p.name),
                &labels(&y_ticks),
                (lo..hi).log_scale().with_key_points(spaced_log_ticks(log_ticks(lo, hi), lo, hi, x_px, TICK, false)),
                (0.7f64..top.max(10.0)).log_scale().with_key_points(y_ticks),
            )?;
            chart
                .configure_mesh()
                .max_light_lines(1)
                .light_line_style(MINOR)
                .set_all_tick_mark_size(tick_size())
                .x_label_formatter(&|v| fmt_num(*v))
                .y_label_formatter(&|v| fmt_num(*v))
                .label_style(font(TICK))
                .draw()
                .map_err(e)?;
            let shown = p.points.iter().filter(|b| b.1 > lo && b.0 < hi);
            chart
                .draw_series(
                    shown.map(|&(l, h, n)| Rectangle::new([(l.max(lo), 0.7), (h.min(hi), n as f64)], c.filled())),
                )
                .map_err(e)?;
            if p.points.iter().any(|b| b.1 <= lo) {
                mark_beyond(chart.plotting_area(), (lo, 1.0), -2, c)?;
            }
            if p.points.iter().any(|b| b.0 >= hi) {
                mark_beyond(chart.plotting_area(), (hi, 1.0), 2, c)?;
            }
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
    fn panel_rows(&self) -> Option<usize> {
        Some(grid(self.panels.len(), 2).0)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static,
    {
        let area = titled(root, &self.title)?;
        let area = shared_axes(
            &area,
            &[
                "iteration index (calls since the end of warm-up)".into(),
                "calls since the end of warm-up".into(),
                "calls since warm-up".into(),
            ],
            &["latency of one call (ns, log scale)".into(), "latency (ns, log scale)".into(), "ns (log)".into()],
        )?;
        let (rows, cols) = grid(self.panels.len(), 2);
        for (p, a) in self.panels.iter().zip(area.split_evenly((rows, cols))) {
            let x0 = p.points.iter().map(|v| v.0).min().unwrap_or(0);
            let x1 = p.points.iter().map(|v| v.0).max().unwrap_or(1).max(x0 + 1);
            // The 0.1th to the 99.9th percentile (all when none is far out): one 10 µs call
            // cannot squash the panel; the calls beyond are triangles at the edge.
            let (ylo, yhi) = robust_log(p.points.iter().map(|v| v.1), Q_SCATTER).unwrap_or((1.0, 10.0));
            let (ylo, yhi) = log_range(ylo, yhi);
            let y_ticks = log_ticks(ylo, yhi);
            let (_, y_px) = panel_px(&a, &labels(&y_ticks));
            let y_ticks = spaced_log_ticks(y_ticks, ylo, yhi, y_px, TICK, true);
            let c = colour(p.colour);
            let mut chart = panel(
                &a,
                &panel_names(&p.name),
                &labels(&y_ticks),
                x0 as f64..x1 as f64,
                (ylo..yhi).log_scale().with_key_points(y_ticks),
            )?;
            chart
                .configure_mesh()
                .max_light_lines(1)
                .light_line_style(MINOR)
                .set_all_tick_mark_size(tick_size())
                .x_labels(4)
                .x_label_formatter(&|v| fmt_num(*v))
                .y_label_formatter(&|v| fmt_num(*v))
                .label_style(font(TICK))
                .draw()
                .map_err(e)?;
            let inside = p.points.iter().filter(|v| v.1 >= ylo && v.1 <= yhi);
            let dot = px(1.0).max(2.0) as i32;
            chart.draw_series(inside.map(|&(i, l)| Circle::new((i as f64, l), dot, c.filled()))).map_err(e)?;
            for &(i, l) in p.points.iter().filter(|v| !(v.1 >= ylo && v.1 <= yhi)) {
                let (y, dir) = if l > yhi { (yhi, 1) } else { (ylo, -1) };
                mark_beyond(chart.plotting_area(), (i as f64, y), dir, c)?;
            }
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
    /// The legend of every tracer takes a row's room above the panels.
    fn panel_rows(&self) -> Option<usize> {
        Some(grid(self.panels.len(), 2).0 + 1)
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
        let area = shared_axes(
            &area,
            &["the panel's counter per call (count)".into(), "counter per call (count)".into()],
            &["latency of one call (ns, log scale)".into(), "latency (ns, log scale)".into(), "ns (log)".into()],
        )?;
        let (rows, cols) = grid(self.panels.len(), 2);
        for ((counter, series), a) in self.panels.iter().zip(area.split_evenly((rows, cols))) {
            let all = || series.iter().flat_map(|s| s.points.iter());
            // Each axis from the 0.1th to the 99.9th percentile (all when none is far out);
            // points beyond sit on the edge as triangles.
            let (xmin, xmax) = robust(all().map(|p| p.0), Q_SCATTER).unwrap_or((0.0, 1.0));
            let xmin = xmin.min(0.0);
            let span = (xmax - xmin).max(1.0);
            let (xlo, xhi) = (xmin - 0.03 * span, xmax + 0.05 * span);
            let (ylo, yhi) = robust_log(all().map(|p| p.1), Q_SCATTER).unwrap_or((1.0, 10.0));
            let (ylo, yhi) = log_range(ylo, yhi);
            let y_ticks = log_ticks(ylo, yhi);
            let (_, y_px) = panel_px(&a, &labels(&y_ticks));
            let y_ticks = spaced_log_ticks(y_ticks, ylo, yhi, y_px, TICK, true);
            let caption = [format!("latency against {counter}"), counter.clone()];
            let mut chart =
                panel(&a, &caption, &labels(&y_ticks), xlo..xhi, (ylo..yhi).log_scale().with_key_points(y_ticks))?;
            chart
                .configure_mesh()
                .max_light_lines(1)
                .light_line_style(MINOR)
                .set_all_tick_mark_size(tick_size())
                .x_labels(4)
                .x_label_formatter(&|v| fmt_num(*v))
                .y_label_formatter(&|v| fmt_num(*v))
                .label_style(font(TICK))
                .draw()
                .map_err(e)?;
            let dot = px(1.0).max(2.0) as i32;
            for s in series {
                let c = colour(s.colour);
                let inside = |p: &&(f64, f64)| p.0 >= xlo && p.0 <= xhi && p.1 >= ylo && p.1 <= yhi;
                chart
                    .draw_series(
                        s.points.iter().filter(inside).map(|&(x, y)| Circle::new((x, y), dot, c.mix(0.6).filled())),
                    )
                    .map_err(e)?;
                for &(x, y) in s.points.iter().filter(|p| !inside(p)) {
                    let dir = if y > yhi {
                        1
                    } else if y < ylo {
                        -1
                    } else if x > xhi {
                        2
                    } else {
                        -2
                    };
                    mark_beyond(chart.plotting_area(), (x.clamp(xlo, xhi), y.clamp(ylo, yhi)), dir, c)?;
                }
            }
        }
        Ok(())
    }
}
