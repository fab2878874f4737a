//! Instructions per call, per tracer (survey Figure 7(d) shape), from a stepped run.
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::layout::*;
use super::*;

/// One bar per tracer at its main path's exact count, labelled above it, and a dot at each
/// rarer path's count, labelled in a column right of the bar. Labels of close counts (printf's
/// 1217, 1233, 1247 beside its 1258) are spread apart, each joined to its dot by a thin line, so
/// none prints over another.
pub struct PathBars {
    pub title: String,
    pub y_desc: String,
    /// (tracer, main count, other paths' counts).
    pub bars: Vec<(String, u64, Vec<u64>)>,
}

/// Label heights for values `ys` (ascending), at least `gap` apart, none below its value unless
/// the top `hi` forces the column down.
pub fn spread_labels(ys: &[f64], gap: f64, hi: f64) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::with_capacity(ys.len());
    for &y in ys {
        let y = out.last().map_or(y, |&p| y.max(p + gap));
        out.push(y);
    }
    // Pushed past the top: shift the column down, keeping the gaps.
    let over = out.last().map_or(0.0, |&t| t - hi);
    if over > 0.0 {
        for k in (0..out.len()).rev() {
            let cap = if k + 1 < out.len() { out[k + 1] - gap } else { hi };
            out[k] = out[k].min(cap);
        }
    }
    out
}

impl Figure for PathBars {
    fn size(&self) -> (u32, u32) {
        (1100, 600)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DResult
    where
        DB::ErrorType: 'static,
    {
        let area = titled(root, &self.title)?;
        let n = self.bars.len().max(1);
        let top =
            self.bars.iter().flat_map(|(_, m, o)| std::iter::once(*m).chain(o.iter().copied())).max().unwrap_or(1);
        let yhi = top as f64 * 1.15 + 1.0;
        let names: Vec<String> = self.bars.iter().map(|b| b.0.clone()).collect();
        let (w, h) = area.dim_in_pixel();
        let widest_tick = text_w(&fmt_num(yhi), TICK).max(text_w("0000", TICK));
        let (_, ya) = label_areas(&[], true);
        let ya = ya as f64 - px(TICK) + widest_tick;
        let slot = (w as f64 - ya - px(8.0)) / n as f64;
        let rows = category_rows(&names, slot).max(1);
        let names_h = (tick_size() * 2) as f64 + px(TICK) * 1.3 * rows as f64;
        let y_desc = fit(&[self.y_desc.clone(), "instructions per call".into()], h as f64 - names_h - px(10.0), DESC);
        let mut chart = ChartBuilder::on(&area)
            .margin(upx(4.0))
            .x_label_area_size(names_h.ceil() as u32)
            .y_label_area_size(ya.ceil() as u32)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..yhi)
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
        let base = area.get_base_pixel();
        let xs: Vec<f64> = (0..n).map(|i| (chart.backend_coord(&(i as f64, 0.0)).0 - base.0) as f64).collect();
        let y = (chart.backend_coord(&(0.0, 0.0)).1 - base.1 + tick_size() * 2) as f64;
        draw_categories(&area, &names, &xs, y, rows, slot * rows as f64 - px(2.0))?;
        // A label's height, in counts.
        let plot_h = chart.plotting_area().dim_in_pixel().1.max(1) as f64;
        let gap = px(NOTE) * 1.25 * yhi / plot_h;
        let centred = |size| TextStyle::from(font(size)).pos(Pos::new(HPos::Center, VPos::Bottom));
        let left = TextStyle::from(font(NOTE)).pos(Pos::new(HPos::Left, VPos::Center));
        for (i, (_, main, others)) in self.bars.iter().enumerate() {
            let x = i as f64;
            let c = colour(i);
            chart
                .draw_series(std::iter::once(Rectangle::new([(x - 0.3, 0.0), (x + 0.3, *main as f64)], c.filled())))
                .map_err(e)?;
            let label_at = (x, *main as f64 + gap * 0.3);
            chart.draw_series(std::iter::once(Text::new(main.to_string(), label_at, centred(TICK)))).map_err(e)?;
            let mut ys: Vec<u64> = others.clone();
            ys.sort_unstable();
            ys.dedup();
            let vals: Vec<f64> = ys.iter().map(|&v| v as f64).collect();
            for (o, at) in ys.iter().zip(spread_labels(&vals, gap, yhi - gap / 2.0)) {
                let dot = (x, *o as f64);
                let lead = [dot, (x + 0.31, at), (x + 0.34, at)];
                chart.draw_series(LineSeries::new(lead, BLACK.mix(0.45).stroke_width(1))).map_err(e)?;
                chart
                    .draw_series(std::iter::once(Circle::new(dot, px(1.8).max(3.0) as i32, BLACK.filled())))
                    .map_err(e)?;
                chart
                    .draw_series(std::iter::once(Text::new(o.to_string(), (x + 0.35, at), left.clone())))
                    .map_err(e)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// printf's paths as a stepped run of it finds them; with TRACEBENCH_KEEP_FIGURES set the
    /// directory is kept (and printed) to look at the figure.
    #[test]
    fn printf_s_rarer_paths_draw() {
        let dir = tempfile::tempdir().unwrap();
        let fig = PathBars {
            title: "User-space instructions per call".into(),
            y_desc: "instructions per call (exact)".into(),
            bars: vec![
                ("none".into(), 11, vec![]),
                ("lw".into(), 121, vec![126]),
                ("printf".into(), 1258, vec![1247, 1233, 1217, 1504, 1578]),
                ("lttng-ust".into(), 944, vec![2389, 949]),
            ],
        };
        let opts = FigureOptions::default();
        let (png, _) = save_with(&fig, dir.path(), "instructions", &opts).unwrap();
        assert!(png.is_file());
        if std::env::var_os("TRACEBENCH_KEEP_FIGURES").is_some() {
            println!("figure kept in {}", dir.keep().display());
        }
    }

    #[test]
    fn close_labels_are_spread_and_far_ones_stay() {
        // printf: 1217, 1233, 1247 within one label height of 40.
        let y = spread_labels(&[1217.0, 1233.0, 1247.0, 1504.0], 40.0, 3000.0);
        assert_eq!(y, vec![1217.0, 1257.0, 1297.0, 1504.0]);
        for w in y.windows(2) {
            assert!(w[1] - w[0] >= 40.0 - 1e-9);
        }
        // At the top: the column moves down, gaps kept.
        let y = spread_labels(&[95.0, 96.0, 97.0], 10.0, 100.0);
        assert_eq!(y, vec![80.0, 90.0, 100.0]);
    }
}
