//! Sizes in printed points, and the pieces every figure lays out with them: titles, legends,
//! category names, label areas, axis limits from quantiles and the marks of points beyond them.
//!
//! A figure is drawn in logical pixels, `per_inch` of them to the printed inch (output.rs:
//! 100, or more for a narrow `--figure-size`), so a size of P points is `P * per_inch / 72`
//! logical pixels: text prints at the same point size whatever the figure's size (8 pt at
//! 3.3 x 2.5 in as at 7 x 4.5 in). plotters writes a font of size S as SVG `font-size` S / 1.24,
//! which `font_size` undoes.
use std::cell::Cell;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontDesc;

use super::{colour, draw_marker, e, marker, output, FAMILY};

/// Point sizes: a figure title, a panel's caption, an axis description, tick labels, legend
/// names, and the counts printed beside bars. None is under 7 pt; most are 8 or more.
pub const TITLE: f64 = 10.0;
pub const PANEL: f64 = 8.5;
pub const DESC: f64 = 8.5;
pub const TICK: f64 = 8.0;
pub const LEGEND: f64 = 8.0;
pub const NOTE: f64 = 7.5;
/// The smallest a text may shrink to so that it fits.
pub const MIN_PT: f64 = 7.5;

/// The quantiles an axis spans when its data has outliers; points beyond are marked.
pub const Q_LO: f64 = 0.005;
pub const Q_HI: f64 = 0.995;
/// A scatter of a sample of calls (1000 a tracer) spans all but its most extreme 0.1 % at
/// either end: a slow path seen twice stays on the axis, a single 10 µs call does not.
pub const Q_SCATTER: f64 = 0.001;

thread_local! {
    static PER_INCH: Cell<f64> = const { Cell::new(super::LOGICAL_DPI as f64) };
}

/// Runs `f` with `per_inch` logical pixels to the printed inch (the figure being drawn).
pub fn with_per_inch<R>(per_inch: f64, f: impl FnOnce() -> R) -> R {
    let old = PER_INCH.with(|p| p.replace(per_inch));
    let out = f();
    PER_INCH.with(|p| p.set(old));
    out
}

/// Logical pixels of `points` printed points in the figure being drawn.
pub fn px(points: f64) -> f64 {
    points * PER_INCH.with(Cell::get) / 72.0
}

/// Whole logical pixels (for label areas and margins).
pub fn upx(points: f64) -> u32 {
    px(points).ceil() as u32
}

/// The plotters font size that prints `points` tall.
pub fn font_size(points: f64) -> f64 {
    px(points) * 1.24
}

pub fn font(points: f64) -> FontDesc<'static> {
    (FAMILY, font_size(points)).into()
}

/// The width in logical pixels of `text` at `points`: 0.62 em a character, a little over
/// DejaVu Sans's average, so that a text laid out to fit does fit.
pub fn text_w(text: &str, points: f64) -> f64 {
    0.62 * px(points) * text.chars().count() as f64
}

/// The first of `alts` that fits `max_w` at `points`, else the first that fits at a smaller
/// size down to [`MIN_PT`], else the last cut with an ellipsis at [`MIN_PT`].
pub fn fit(alts: &[String], max_w: f64, points: f64) -> (String, f64) {
    if let Some(a) = alts.iter().find(|a| text_w(a, points) <= max_w) {
        return (a.clone(), points);
    }
    let mut p = points - 0.5;
    while p >= MIN_PT - 1e-9 {
        if let Some(a) = alts.iter().find(|a| text_w(a, p) <= max_w) {
            return (a.clone(), p);
        }
        p -= 0.5;
    }
    let last = alts.last().cloned().unwrap_or_default();
    let keep = ((max_w / (0.62 * px(MIN_PT))) as usize).saturating_sub(1).max(1);
    (last.chars().take(keep).collect::<String>() + "…", MIN_PT)
}

/// Draws the figure title (fitted to the width, on two lines if need be) and returns the area
/// below it; with `--no-titles`, the whole area.
pub fn titled<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> Result<DrawingArea<DB, Shift>, String>
where
    DB::ErrorType: 'static,
{
    if !output::options().titles || title.is_empty() {
        return Ok(root.clone());
    }
    let (w, _) = root.dim_in_pixel();
    let max_w = w as f64 - px(8.0);
    let mut lines = vec![title.to_string()];
    let mut pts = TITLE;
    if text_w(title, TITLE) > max_w {
        // Two lines at the nearest space to the middle, each fitted.
        let mid = title.chars().count() / 2;
        let cut = title.char_indices().filter(|(_, c)| *c == ' ').map(|(i, _)| i).min_by_key(|i| i.abs_diff(mid));
        lines = match cut {
            Some(i) => vec![title[..i].to_string(), title[i + 1..].to_string()],
            None => vec![title.to_string()],
        };
        pts = lines.iter().map(|l| fit(std::slice::from_ref(l), max_w, TITLE).1).fold(TITLE, f64::min);
        lines = lines.iter().map(|l| fit(std::slice::from_ref(l), max_w, pts).0).collect();
    }
    let line_h = px(pts) * 1.3;
    let band = (px(4.0) + line_h * lines.len() as f64 + px(3.0)).ceil() as u32;
    let (top, rest) = root.split_vertically(band);
    let style = TextStyle::from(font(pts)).pos(Pos::new(HPos::Center, VPos::Top));
    for (k, l) in lines.iter().enumerate() {
        let y = px(4.0) + line_h * k as f64;
        top.draw(&Text::new(l.clone(), (w as i32 / 2, y as i32), style.clone())).map_err(e)?;
    }
    Ok(rest)
}

/// Draws a legend band at the top of `area` and returns the rest, so legends never cover
/// data: entries (a coloured mark and the name) flow left to right and wrap like words.
pub fn legend_band<DB: DrawingBackend>(
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
    let avail = w as f64 - 2.0 * px(4.0);
    let (sw, gap, space) = (px(12.0), px(2.5), px(8.0));
    // (x, row, name as drawn) of each entry.
    let mut placed = Vec::new();
    let (mut x, mut row) = (0.0, 0usize);
    for (name, _) in entries {
        let (name, _) = fit(std::slice::from_ref(name), avail - sw - gap, LEGEND);
        let ew = sw + gap + text_w(&name, LEGEND);
        if x > 0.0 && x + ew > avail {
            x = 0.0;
            row += 1;
        }
        placed.push((x, row, name));
        x += ew + space;
    }
    let row_h = px(LEGEND) * 1.3;
    let band_h = (px(3.0) + row_h * (row + 1) as f64 + px(3.0)).ceil() as u32;
    let (band, rest) = area.split_vertically(band_h);
    let style = TextStyle::from(font(LEGEND)).pos(Pos::new(HPos::Left, VPos::Center));
    for ((x, r, name), (_, i)) in placed.into_iter().zip(entries) {
        let x = px(4.0) + x;
        let yc = (px(3.0) + row_h * (r as f64 + 0.5)) as i32;
        let c = colour(*i);
        let (x0, x1) = (x as i32, (x + sw) as i32);
        let half = (px(LEGEND) * 0.25).max(2.0) as i32;
        band.draw(&Rectangle::new([(x0, yc - half), (x1, yc + half)], c.filled())).map_err(e)?;
        if marker(*i) > 0 {
            let m = (x0 + x1) / 2;
            band.draw(&Rectangle::new([(m - 6, yc - 8), (m + 6, yc + 8)], WHITE.filled())).map_err(e)?;
            draw_marker(&band, (m, yc), *i)?;
        }
        band.draw(&Text::new(name, ((x + sw + gap) as i32, yc), style.clone())).map_err(e)?;
    }
    Ok(rest)
}

/// Space for a grid's shared axis descriptions: the left strip (y, turned) and the bottom strip
/// (x), each drawn once for all panels. Returns the panels' area.
pub fn shared_axes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x_desc: &[String],
    y_desc: &[String],
) -> Result<DrawingArea<DB, Shift>, String>
where
    DB::ErrorType: 'static,
{
    let (w, h) = area.dim_in_pixel();
    let strip = (px(DESC) * 1.6).ceil() as u32;
    let (upper, bottom) = area.split_vertically(h.saturating_sub(strip));
    let (left, panels) = upper.split_horizontally(strip);
    let (xt, xp) = fit(x_desc, w as f64 - px(6.0), DESC);
    let st = TextStyle::from(font(xp)).pos(Pos::new(HPos::Center, VPos::Center));
    bottom.draw(&Text::new(xt, (w as i32 / 2, strip as i32 / 2), st)).map_err(e)?;
    let (yt, yp) = fit(y_desc, (h - strip) as f64 - px(6.0), DESC);
    let st = TextStyle::from(font(yp)).pos(Pos::new(HPos::Center, VPos::Center)).transform(FontTransform::Rotate270);
    left.draw(&Text::new(yt, (strip as i32 / 2, (h - strip) as i32 / 2), st)).map_err(e)?;
    Ok(panels)
}

/// Label area sizes (x below, y left) for tick labels `y_ticks` (as printed) and, where the
/// chart draws its own axis descriptions, room for them.
pub fn label_areas(y_ticks: &[String], with_desc: bool) -> (u32, u32) {
    let desc = if with_desc { px(DESC) * 1.35 } else { 0.0 };
    let x = tick_size() as f64 * 2.0 + px(TICK) * 1.25 + desc + px(2.0);
    let widest = y_ticks.iter().map(|t| text_w(t, TICK)).fold(px(TICK), f64::max);
    let y = tick_size() as f64 * 2.0 + widest + desc + px(2.0);
    (x.ceil() as u32, y.ceil() as u32)
}

/// The tick labels of an axis as printed.
pub fn labels(t: &[f64]) -> Vec<String> {
    t.iter().map(|v| super::fmt_num(*v)).collect()
}

/// Tick mark length in logical pixels (plotters keeps labels twice this from the axis).
pub fn tick_size() -> i32 {
    px(2.5).round().max(2.0) as i32
}

/// The `q` quantile of `v` (sorted ascending), by nearest rank.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// The axis span of values `v`: from their `q` to their `1 - q` quantile, or min..max when
/// the values beyond reach no further than the quantiles' span again (no outlier to cut).
pub fn robust(v: impl Iterator<Item = f64>, q: f64) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = v.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let (min, max) = (v[0], v[v.len() - 1]);
    let (lo, hi) = (quantile(&v, q), quantile(&v, 1.0 - q));
    Some((if lo - min > hi - lo { lo } else { min }, if max - hi > hi - lo { hi } else { max }))
}

/// The same on a log axis (ratios, not differences): positive values only.
pub fn robust_log(v: impl Iterator<Item = f64>, q: f64) -> Option<(f64, f64)> {
    let (lo, hi) = robust(v.filter(|x| *x > 0.0).map(f64::ln), q)?;
    Some((lo.exp(), hi.exp()))
}

/// Draws a small triangle in colour `c` its tip at `at` on the plot's edge, pointing out: up (`dir` 1), down (-1),
/// right (2) or left (-2): the mark of a point beyond the axis's limits.
pub fn mark_beyond<DB: DrawingBackend, CT: plotters::coord::CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    dir: i8,
    c: RGBColor,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
    CT::From: Clone + 'static,
{
    let s = px(2.5).max(3.0) as i32;
    let pts = match dir {
        1 => vec![(-s, 2 * s), (s, 2 * s), (0, 0)],
        -1 => vec![(-s, -2 * s), (s, -2 * s), (0, 0)],
        2 => vec![(-2 * s, -s), (-2 * s, s), (0, 0)],
        _ => vec![(2 * s, -s), (2 * s, s), (0, 0)],
    };
    area.draw(&(EmptyElement::at(at) + Polygon::new(pts, c.filled()))).map_err(e)
}

/// Category names under (or, turned, beside) a categorical axis, drawn by the figure: one row
/// when they fit their slots, else alternating between two rows. Returns the rows needed, 0
/// when even two rows do not fit (the figure then lays out otherwise).
pub fn category_rows(names: &[String], slot_w: f64) -> usize {
    let widest = names.iter().map(|n| text_w(n, TICK)).fold(0.0, f64::max);
    if widest <= slot_w - px(2.0) {
        1
    } else if widest <= 2.0 * slot_w - px(4.0) {
        2
    } else {
        0
    }
}

/// Draws category `names` centred at `xs` (pixels of `area`), their tops at `y`, on `rows`
/// alternating rows (1 or 2), each kept inside the area and cut to `max_w` if need be.
pub fn draw_categories<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    names: &[String],
    xs: &[f64],
    y: f64,
    rows: usize,
    max_w: f64,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let (w, _) = area.dim_in_pixel();
    for (k, (name, &x)) in names.iter().zip(xs).enumerate() {
        let (t, p) = fit(std::slice::from_ref(name), max_w, TICK);
        let half = text_w(&t, p) / 2.0;
        let x = x.clamp(half + 1.0, (w as f64 - half - 1.0).max(half + 1.0));
        let y = y + (k % rows.max(1)) as f64 * px(TICK) * 1.3;
        let st = TextStyle::from(font(p)).pos(Pos::new(HPos::Center, VPos::Top));
        area.draw(&Text::new(t, (x as i32, y as i32), st)).map_err(e)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_scale_with_the_figure_and_fit_shrinks_then_cuts() {
        with_per_inch(194.0, || {
            assert!((px(8.0) - 8.0 * 194.0 / 72.0).abs() < 1e-9);
            let alts = vec!["a much longer axis label".to_string(), "short".to_string()];
            assert_eq!(fit(&alts, text_w("short", 8.0) + 1.0, 8.0), ("short".to_string(), 8.0));
            let (t, p) = fit(&["abcdefghij".to_string()], text_w("abcde", MIN_PT), 8.0);
            assert!(t.ends_with('…') && p == MIN_PT, "{t} {p}");
        });
        assert!((px(8.0) - 8.0 * 100.0 / 72.0).abs() < 1e-9);
    }

    #[test]
    fn an_outlier_does_not_set_the_limits() {
        let mut v: Vec<f64> = (0..1000).map(|i| 60.0 + (i % 7) as f64).collect();
        v.push(10_000.0);
        let (lo, hi) = robust_log(v.iter().copied(), Q_LO).unwrap();
        assert!(lo > 59.99 && hi < 67.0, "{lo} {hi}");
        let (lo, hi) = robust((0..100).map(|i| i as f64), Q_LO).unwrap();
        assert_eq!((lo, hi), (0.0, 99.0));
    }
}
