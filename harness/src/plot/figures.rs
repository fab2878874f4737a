//! The report's figures (survey Figures 3-8 in our layout), each a [`Figure`] drawn by `save`.
use plotters::prelude::*;

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
            .max_light_lines(1)
            .light_line_style(MINOR)
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
            if marker(s.colour) > 0 {
                // About 12 markers along the curve, at evenly spaced fractions of calls.
                let step = (s.points.len() / 12).max(1);
                for p in s.points.iter().skip(step / 2).step_by(step) {
                    draw_marker(chart.plotting_area(), *p, s.colour)?;
                }
            }
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
    fn panel_rows(&self) -> Option<usize> {
        Some(grid(self.panels.len(), 2).0)
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
            // The plotting area inside the panel's margins, caption and label areas.
            let (pw, ph) = a.dim_in_pixel();
            let (x_px, y_px) = ((pw as f64 - 20.0 - 65.0).max(10.0), (ph as f64 - 20.0 - 30.0 - 45.0).max(10.0));
            let c = colour(p.colour);
            let mut chart = ChartBuilder::on(&a)
                .caption(&p.name, panel_font())
                .margin(10)
                .x_label_area_size(45)
                .y_label_area_size(65)
                .build_cartesian_2d(
                    (lo..hi).log_scale().with_key_points(spaced_log_ticks(log_ticks(lo, hi), lo, hi, x_px, 13, false)),
                    (0.7f64..top.max(10.0)).log_scale().with_key_points(spaced_log_ticks(
                        log_ticks(0.7, top.max(10.0)),
                        0.7,
                        top.max(10.0),
                        y_px,
                        13,
                        true,
                    )),
                )
                .map_err(e)?;
            chart
                .configure_mesh()
                .max_light_lines(1)
                .light_line_style(MINOR)
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
    fn panel_rows(&self) -> Option<usize> {
        Some(grid(self.panels.len(), 2).0)
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
            let y_px = (a.dim_in_pixel().1 as f64 - 20.0 - 30.0 - 45.0).max(10.0);
            let c = colour(p.colour);
            let mut chart = ChartBuilder::on(&a)
                .caption(&p.name, panel_font())
                .margin(10)
                .x_label_area_size(45)
                .y_label_area_size(65)
                .build_cartesian_2d(
                    x0 as f64..x1 as f64,
                    (ylo..yhi).log_scale().with_key_points(spaced_log_ticks(
                        log_ticks(ylo, yhi),
                        ylo,
                        yhi,
                        y_px,
                        13,
                        true,
                    )),
                )
                .map_err(e)?;
            chart
                .configure_mesh()
                .max_light_lines(1)
                .light_line_style(MINOR)
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
    fn panel_rows(&self) -> Option<usize> {
        Some(grid(self.panels.len(), 2).0)
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
                .max_light_lines(1)
                .light_line_style(MINOR)
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
/// tracer, with the spread of the repetitions' means as error bars.
pub struct ScalingFigure {
    pub title: String,
    pub series: Vec<Series<(f64, f64)>>,
    /// Per series (same order; may be shorter): (threads, lowest, highest repetition mean).
    pub spread: Vec<Vec<(f64, f64, f64)>>,
}

/// A sweep over thread counts: drawn as a [`CurveFigure`].
impl Figure for ScalingFigure {
    fn size(&self) -> (u32, u32) {
        (1100, 650)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static,
    {
        CurveFigure {
            title: self.title.clone(),
            x_desc: "threads tracing at once (one per core)".into(),
            y_desc: "mean latency per call (ns, log scale)".into(),
            log_x: false,
            x_names: None,
            series: self.series.clone(),
        }
        .draw_with_bars(root, &self.spread)
    }
}

/// One line per series of y (log scale) against x: a sweep's curve (survey Figure 9 shape).
/// `x_names` labels categorical values (x = 0, 1, 2...); `log_x` when numeric values span
/// decades. Whole-number x (thread counts) gets a tick and a label at each value drawn, and
/// no fractional ones.
pub struct CurveFigure {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub log_x: bool,
    pub x_names: Option<Vec<String>>,
    pub series: Vec<Series<(f64, f64)>>,
}

impl Figure for CurveFigure {
    fn size(&self) -> (u32, u32) {
        (1100, 650)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static,
    {
        self.draw_with_bars(root, &[])
    }
}

impl CurveFigure {
    fn draw_with_bars<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        bars: &[Vec<(f64, f64, f64)>],
    ) -> DResult
    where
        DB::ErrorType: 'static,
    {
        let area = titled_with_legend(root, &self.title, &self.series)?;
        let all = || self.series.iter().flat_map(|s| s.points.iter());
        let xlo = all().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let xhi = all().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
        let ys = all().map(|p| p.1).chain(bars.iter().flatten().flat_map(|b| [b.1, b.2]));
        let (ylo, yhi) = ys.filter(|v| *v > 0.0).fold((f64::INFINITY, 0f64), |a, y| (a.0.min(y), a.1.max(y)));
        let (ylo, yhi) = log_range(ylo, yhi);
        let names = self.x_names.clone();
        // Whole-number values (thread counts, sizes) get whole-number ticks only.
        let integer_x = all().all(|p| p.0.fract() == 0.0);
        let y_axis = (ylo..yhi).log_scale().with_key_points(log_ticks(ylo, yhi));
        // At most one label per whole value (plotters then steps by 1, 2, 5...): no fractional
        // ticks for a thread count.
        let x_labels = if integer_x && !self.log_x { ((xhi - xlo) as usize + 1).clamp(2, 12) } else { 10 };
        macro_rules! finish {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .max_light_lines(1)
                    .light_line_style(MINOR)
                    .x_labels(x_labels)
                    .x_desc(self.x_desc.as_str())
                    .y_desc(self.y_desc.as_str())
                    .x_label_formatter(&|v| match &names {
                        Some(n) if (v - v.round()).abs() < 1e-9 && *v >= 0.0 => {
                            n.get(v.round() as usize).cloned().unwrap_or_default()
                        }
                        Some(_) => String::new(),
                        None if integer_x && !self.log_x && v.fract().abs() > 1e-9 => String::new(),
                        None => fmt_num(*v),
                    })
                    .y_label_formatter(&|v| fmt_num(*v))
                    .label_style((FAMILY, 15))
                    .axis_desc_style((FAMILY, 17))
                    .draw()
                    .map_err(e)?;
                for (k, s) in self.series.iter().enumerate() {
                    let c = colour(s.colour);
                    for &(x, lo, hi) in bars.get(k).into_iter().flatten() {
                        let bar = [(x, lo.max(ylo)), (x, hi.max(ylo))];
                        chart.draw_series(LineSeries::new(bar, c.stroke_width(2))).map_err(e)?;
                        for y in [lo, hi] {
                            let cap = [(x - 0.06, y.max(ylo)), (x + 0.06, y.max(ylo))];
                            chart.draw_series(LineSeries::new(cap, c.stroke_width(2))).map_err(e)?;
                        }
                    }
                    chart.draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2))).map_err(e)?;
                    for p in &s.points {
                        if marker(s.colour) > 0 {
                            draw_marker(chart.plotting_area(), *p, s.colour)?;
                        } else {
                            chart.plotting_area().draw(&Circle::new(*p, 4, c.filled())).map_err(e)?;
                        }
                    }
                }
                Ok(())
            }};
        }
        if self.log_x {
            let (lo, hi) = log_range(xlo, xhi);
            finish!(ChartBuilder::on(&area)
                .margin(15)
                .x_label_area_size(55)
                .y_label_area_size(75)
                .build_cartesian_2d((lo..hi).log_scale().with_key_points(log_ticks(lo, hi)), y_axis)
                .map_err(e)?)
        } else {
            let pad = ((xhi - xlo) * 0.05).max(0.5);
            finish!(ChartBuilder::on(&area)
                .margin(15)
                .x_label_area_size(55)
                .y_label_area_size(75)
                .build_cartesian_2d((xlo - pad)..(xhi + pad), y_axis)
                .map_err(e)?)
        }
    }
}
