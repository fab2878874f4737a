//! Curves of a mean against a swept value: thread counts (survey Figures 5, 6 and 8) and a
//! sweep's knob, with error bars where there are repetitions.
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::layout::*;
use super::*;

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
            undecided: Vec::new(),
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
    /// Per series (same order; may be shorter), per segment between point i and i + 1: whether
    /// the comparison left that step undecided. Such a segment is dashed, and a note under the
    /// legend says what a dash means, so the figure never draws as a trend what the page does not
    /// claim.
    pub undecided: Vec<Vec<bool>>,
}

/// A dash and the gap after it (logical pixels): long enough to read as dashed at a column's
/// width, where a 1-point dash blurs into a solid line.
fn dash_gap() -> (i32, i32) {
    (px(5.0).max(6.0) as i32, px(3.5).max(4.0) as i32)
}

/// The legend's note on dashed segments, longest form first.
const DASHED: [&str; 2] = ["dashed: not decided by the comparison", "dashed: not decided"];

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
        let any_dashed = self.undecided.iter().flatten().any(|d| *d);
        let area = if any_dashed { dashed_note(&area)? } else { area };
        let all = || self.series.iter().flat_map(|s| s.points.iter());
        let xlo = all().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let xhi = all().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
        let ys = all().map(|p| p.1).chain(bars.iter().flatten().flat_map(|b| [b.1, b.2]));
        let (ylo, yhi) = ys.filter(|v| *v > 0.0).fold((f64::INFINITY, 0f64), |a, y| (a.0.min(y), a.1.max(y)));
        let (ylo, yhi) = log_range(ylo, yhi);
        let names = self.x_names.clone();
        // Whole-number values (thread counts, sizes) get whole-number ticks only.
        let integer_x = all().all(|p| p.0.fract() == 0.0);
        let (w, h) = area.dim_in_pixel();
        let y_ticks = log_ticks(ylo, yhi);
        let (xa, ya) = label_areas(&labels(&y_ticks), true);
        let y_px = h as f64 - xa as f64 - px(8.0);
        let y_ticks = spaced_log_ticks(y_ticks, ylo, yhi, y_px, TICK, true);
        let y_axis = (ylo..yhi).log_scale().with_key_points(y_ticks);
        let x_px = w as f64 - ya as f64 - px(14.0);
        // At most one label per whole value (plotters then steps by 1, 2, 5...), and no more
        // than the axis has room for: no fractional ticks for a thread count.
        let room = (x_px / (text_w("0000", TICK) + px(6.0))).floor().max(2.0) as usize;
        let x_labels = if integer_x && !self.log_x { ((xhi - xlo) as usize + 1).clamp(2, 12) } else { 10 }.min(room);
        let x_desc = fit(&desc_alts(&self.x_desc), x_px, DESC);
        let y_desc = fit(&desc_alts(&self.y_desc), y_px, DESC);
        macro_rules! finish {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .max_light_lines(1)
                    .light_line_style(MINOR)
                    .set_all_tick_mark_size(tick_size())
                    .x_labels(x_labels)
                    .x_desc(x_desc.0.as_str())
                    .y_desc(y_desc.0.as_str())
                    .x_label_formatter(&|v| match &names {
                        Some(n) if (v - v.round()).abs() < 1e-9 && *v >= 0.0 => {
                            n.get(v.round() as usize).cloned().unwrap_or_default()
                        }
                        Some(_) => String::new(),
                        None if integer_x && !self.log_x && v.fract().abs() > 1e-9 => String::new(),
                        None => fmt_num(*v),
                    })
                    .y_label_formatter(&|v| fmt_num(*v))
                    .label_style(font(TICK))
                    .axis_desc_style(font(x_desc.1.min(y_desc.1)))
                    .draw()
                    .map_err(e)?;
                let (lw, dot) = (px(1.0).max(2.0) as u32, px(1.6).max(3.0) as i32);
                for (k, s) in self.series.iter().enumerate() {
                    let c = colour(s.colour);
                    for &(x, lo, hi) in bars.get(k).into_iter().flatten() {
                        let bar = [(x, lo.max(ylo)), (x, hi.max(ylo))];
                        chart.draw_series(LineSeries::new(bar, c.stroke_width(lw))).map_err(e)?;
                        for y in [lo, hi] {
                            let cap = [(x - 0.06, y.max(ylo)), (x + 0.06, y.max(ylo))];
                            chart.draw_series(LineSeries::new(cap, c.stroke_width(lw))).map_err(e)?;
                        }
                    }
                    let dashed = self.undecided.get(k);
                    for (j, seg) in s.points.windows(2).enumerate() {
                        let seg = [seg[0], seg[1]];
                        if dashed.and_then(|d| d.get(j)).copied().unwrap_or(false) {
                            let (dash, gap) = dash_gap();
                            let style = c.stroke_width(lw);
                            chart.draw_series(DashedLineSeries::new(seg, dash, gap, style)).map_err(e)?;
                        } else {
                            chart.draw_series(LineSeries::new(seg, c.stroke_width(lw))).map_err(e)?;
                        }
                    }
                    for p in &s.points {
                        if marker(s.colour) > 0 {
                            draw_marker(chart.plotting_area(), *p, s.colour)?;
                        } else {
                            chart.plotting_area().draw(&Circle::new(*p, dot, c.filled())).map_err(e)?;
                        }
                    }
                }
                Ok(())
            }};
        }
        if self.log_x {
            let (lo, hi) = log_range(xlo, xhi);
            let x_ticks = spaced_log_ticks(log_ticks(lo, hi), lo, hi, x_px, TICK, false);
            finish!(ChartBuilder::on(&area)
                .margin(upx(4.0))
                .margin_right(upx(10.0))
                .x_label_area_size(xa)
                .y_label_area_size(ya)
                .build_cartesian_2d((lo..hi).log_scale().with_key_points(x_ticks), y_axis)
                .map_err(e)?)
        } else {
            let pad = ((xhi - xlo) * 0.05).max(0.5);
            finish!(ChartBuilder::on(&area)
                .margin(upx(4.0))
                .margin_right(upx(10.0))
                .x_label_area_size(xa)
                .y_label_area_size(ya)
                .build_cartesian_2d((xlo - pad)..(xhi + pad), y_axis)
                .map_err(e)?)
        }
    }
}

/// A band under the legend: a short dashed stroke and what it means.
fn dashed_note<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> Result<DrawingArea<DB, Shift>, String>
where
    DB::ErrorType: 'static,
{
    let (w, _) = area.dim_in_pixel();
    let sw = px(12.0);
    let alts: Vec<String> = DASHED.iter().map(|s| s.to_string()).collect();
    let (text, pts) = fit(&alts, w as f64 - 2.0 * px(4.0) - sw - px(2.5), NOTE);
    let row_h = px(pts) * 1.3;
    let (band, rest) = area.split_vertically((row_h + px(2.0)).ceil() as u32);
    let yc = (row_h / 2.0) as i32;
    let (x0, x1) = (px(4.0) as i32, (px(4.0) + sw) as i32);
    let stroke = BLACK.stroke_width(px(1.0).max(2.0) as u32);
    let (dash, gap) = dash_gap();
    band.draw(&DashedPathElement::new([(x0, yc), (x1, yc)], dash, gap, stroke)).map_err(e)?;
    let style = TextStyle::from(font(pts)).pos(Pos::new(HPos::Left, VPos::Center));
    band.draw(&Text::new(text, (x1 + px(2.5) as i32, yc), style)).map_err(e)?;
    Ok(rest)
}

/// An axis description and shorter forms of it: without its parenthesis's "log scale" spelled
/// out, then without the parenthesis ("mean latency per call (ns, log scale)", "mean latency
/// per call (ns, log)", "mean latency per call").
fn desc_alts(d: &str) -> Vec<String> {
    let mut v = vec![d.to_string()];
    if d.contains("log scale") {
        v.push(d.replace("log scale", "log"));
    }
    if let Some((head, tail)) = d.split_once(" (") {
        if let Some(unit) = tail.split([',', ')']).next() {
            v.push(format!("{} ({unit})", head.split(' ').take(2).collect::<Vec<_>>().join(" ")));
        }
        v.push(head.to_string());
    }
    v[1..].sort_by_key(|x| std::cmp::Reverse(x.len()));
    v
}
