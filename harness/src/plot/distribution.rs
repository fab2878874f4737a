//! Per-call cost per tracer as boxes (the figure survey readers expect beside Table 4).
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::layout::*;
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
    /// Tracers left to right with their names below; where the names do not fit below their
    /// boxes even on two alternating rows (ten tracers at 3.3 in), tracers top to bottom with
    /// their names at the left.
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
        let (w, h) = area.dim_in_pixel();
        let ticks = log_ticks(lo, hi);
        let (xa, ya) = label_areas(&labels(&ticks), true);
        let slot = (w as f64 - ya as f64 - px(8.0)) / n as f64;
        let rows = category_rows(&names, slot);
        let desc = ["latency of one call (ns, log scale)".to_string(), "latency (ns, log scale)".into()];
        let margin = upx(4.0);
        macro_rules! boxes {
            ($chart:expr, $at:expr) => {{
                let chart = $chart;
                let at = $at;
                for (i, b) in self.boxes.iter().enumerate() {
                    let x = i as f64;
                    let c = colour(b.colour);
                    let lw = px(1.0).max(2.0) as u32;
                    let line = |p: [(f64, f64); 2]| LineSeries::new(p.map(|(x, v)| at(x, v)), c.stroke_width(lw));
                    chart.draw_series(line([(x, b.p5), (x, b.p25)])).map_err(e)?;
                    chart.draw_series(line([(x, b.p75), (x, b.p95)])).map_err(e)?;
                    for v in [b.p5, b.p95] {
                        chart.draw_series(line([(x - 0.12, v), (x + 0.12, v)])).map_err(e)?;
                    }
                    let corners = [at(x - 0.28, b.p25), at(x + 0.28, b.p75)];
                    chart.draw_series(std::iter::once(Rectangle::new(corners, c.mix(0.35).filled()))).map_err(e)?;
                    chart.draw_series(std::iter::once(Rectangle::new(corners, c.stroke_width(lw)))).map_err(e)?;
                    let median = [at(x - 0.28, b.p50), at(x + 0.28, b.p50)];
                    chart.draw_series(LineSeries::new(median, BLACK.stroke_width(lw + 1))).map_err(e)?;
                    let cross = Cross::new(at(x, b.mean), px(2.2).max(4.0) as i32, BLACK.stroke_width(lw));
                    chart.draw_series(std::iter::once(cross)).map_err(e)?;
                }
            }};
        }
        if rows > 0 {
            let names_h = (tick_size() * 2) as f64 + px(TICK) * 1.3 * rows as f64;
            let y_desc = fit(&desc, h as f64 - names_h - px(10.0), DESC);
            let ticks = spaced_log_ticks(ticks, lo, hi, h as f64 - names_h - px(10.0), TICK, true);
            let mut chart = ChartBuilder::on(&area)
                .margin(margin)
                .x_label_area_size(names_h.ceil() as u32)
                .y_label_area_size(ya)
                .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), (lo..hi).log_scale().with_key_points(ticks))
                .map_err(e)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .max_light_lines(1)
                .light_line_style(MINOR)
                .set_all_tick_mark_size(tick_size())
                .x_labels(n)
                .x_label_formatter(&|_| String::new())
                .y_desc(y_desc.0)
                .y_label_formatter(&|v| fmt_num(*v))
                .label_style(font(TICK))
                .axis_desc_style(font(y_desc.1))
                .draw()
                .map_err(e)?;
            let lo_c = lo;
            boxes!(&mut chart, |x: f64, v: f64| (x, v.max(lo_c)));
            let base = area.get_base_pixel();
            let xs: Vec<f64> = (0..n).map(|i| (chart.backend_coord(&(i as f64, lo)).0 - base.0) as f64).collect();
            let y = (chart.backend_coord(&(0.0, lo)).1 - base.1 + tick_size() * 2) as f64;
            draw_categories(&area, &names, &xs, y, rows, slot * rows as f64 - px(2.0))?;
        } else {
            let widest = names.iter().map(|x| text_w(x, TICK)).fold(0.0, f64::max);
            let name_w = widest.min(w as f64 * 0.55) + (tick_size() * 2) as f64 + px(2.0);
            let x_px = w as f64 - name_w - px(14.0);
            let x_desc = fit(&desc, x_px, DESC);
            let ticks = spaced_log_ticks(ticks, lo, hi, x_px, TICK, false);
            let mut chart = ChartBuilder::on(&area)
                .margin(margin)
                .margin_right(upx(10.0))
                .x_label_area_size(xa)
                .y_label_area_size(name_w.ceil() as u32)
                .build_cartesian_2d((lo..hi).log_scale().with_key_points(ticks), -0.5f64..(n as f64 - 0.5))
                .map_err(e)?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .max_light_lines(1)
                .light_line_style(MINOR)
                .set_all_tick_mark_size(tick_size())
                .y_labels(n)
                .y_label_formatter(&|_| String::new())
                .x_desc(x_desc.0)
                .x_label_formatter(&|v| fmt_num(*v))
                .label_style(font(TICK))
                .axis_desc_style(font(x_desc.1))
                .draw()
                .map_err(e)?;
            // Cheapest at the top.
            let lo_c = lo;
            let top = n as f64 - 1.0;
            boxes!(&mut chart, |x: f64, v: f64| (v.max(lo_c), top - x));
            let base = area.get_base_pixel();
            let st = TextStyle::from(font(TICK)).pos(Pos::new(HPos::Right, VPos::Center));
            for (i, name) in names.iter().enumerate() {
                let (px_, py) = chart.backend_coord(&(lo, top - i as f64));
                let (t, p) = fit(std::slice::from_ref(name), name_w - (tick_size() * 2) as f64 - px(2.0), TICK);
                let x = px_ - base.0 - tick_size() * 2;
                let st = if p < TICK {
                    TextStyle::from(font(p)).pos(Pos::new(HPos::Right, VPos::Center))
                } else {
                    st.clone()
                };
                area.draw(&Text::new(t, (x, py - base.1), st)).map_err(e)?;
            }
        }
        Ok(())
    }
}
