//! Per-call cost per tracer as boxes (the figure survey readers expect beside Table 4).
use plotters::prelude::*;

use super::*;

/// One tracer's per-call latency quantiles (ns) and mean.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxStats {
    pub name: String,
    pub colour: usize,
    pub p5: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p95: f64,
    pub mean: f64,
}

/// Boxes from the 25th to the 75th percentile with the median across, whiskers to the 5th and
/// 95th, a cross at the mean; log y, tracers left to right in the order given (by cost).
pub struct BoxFigure {
    pub title: String,
    pub boxes: Vec<BoxStats>,
}

impl Figure for BoxFigure {
    fn size(&self) -> (u32, u32) {
        (1100, 650)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static,
    {
        let area = titled(root, &self.title)?;
        let n = self.boxes.len().max(1);
        let vals = self.boxes.iter().flat_map(|b| [b.p5, b.p95, b.mean]).filter(|v| *v > 0.0);
        let (lo, hi) = vals.fold((f64::INFINITY, 0f64), |a, v| (a.0.min(v), a.1.max(v)));
        let (lo, hi) = log_range(lo, hi);
        let names: Vec<String> = self.boxes.iter().map(|b| b.name.clone()).collect();
        let mut chart = ChartBuilder::on(&area)
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(75)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), (lo..hi).log_scale().with_key_points(log_ticks(lo, hi)))
            .map_err(e)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .max_light_lines(1)
            .light_line_style(MINOR)
            .x_labels(n)
            .x_label_formatter(&|v| {
                if (v - v.round()).abs() < 1e-9 && *v >= 0.0 {
                    names.get(v.round() as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_desc("latency of one call (ns, log scale)")
            .y_label_formatter(&|v| fmt_num(*v))
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 17))
            .draw()
            .map_err(e)?;
        let at = |v: f64| v.max(lo);
        for (i, b) in self.boxes.iter().enumerate() {
            let x = i as f64;
            let c = colour(b.colour);
            let line = |pts: [(f64, f64); 2]| LineSeries::new(pts, c.stroke_width(2));
            chart.draw_series(line([(x, at(b.p5)), (x, at(b.p25))])).map_err(e)?;
            chart.draw_series(line([(x, at(b.p75)), (x, at(b.p95))])).map_err(e)?;
            for w in [b.p5, b.p95] {
                chart.draw_series(line([(x - 0.12, at(w)), (x + 0.12, at(w))])).map_err(e)?;
            }
            let body = Rectangle::new([(x - 0.28, at(b.p25)), (x + 0.28, at(b.p75))], c.mix(0.35).filled());
            chart.draw_series(std::iter::once(body)).map_err(e)?;
            let edge = Rectangle::new([(x - 0.28, at(b.p25)), (x + 0.28, at(b.p75))], c.stroke_width(2));
            chart.draw_series(std::iter::once(edge)).map_err(e)?;
            let median = LineSeries::new([(x - 0.28, at(b.p50)), (x + 0.28, at(b.p50))], BLACK.stroke_width(3));
            chart.draw_series(median).map_err(e)?;
            chart.draw_series(std::iter::once(Cross::new((x, at(b.mean)), 6, BLACK.stroke_width(2)))).map_err(e)?;
        }
        Ok(())
    }
}
