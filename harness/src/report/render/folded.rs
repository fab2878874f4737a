//! The picture of a tracer's paths in its card: latency against the iteration folded
//! on its main period (the costliest periodic path's), so a path taken once per period stands as
//! one column of dots above the fast path's band. The points are kept in report.json's overview
//! (at most `MAX_SLOW` calls above the slow threshold and `MAX_FAST` evenly spaced others, from
//! the first sequence), and drawn from there as an inline SVG.
use std::fmt::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::report::render::numbers::sig3;

const MAX_SLOW: usize = 1500;
const MAX_FAST: usize = 600;
/// Rows of the first sequence read at most.
const MAX_ROWS: u64 = 200_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Folded {
    pub period: u64,
    /// The latency above which a call is slow (ns).
    pub threshold: f64,
    /// (iteration modulo the period, latency in ns).
    pub points: Vec<(u64, f64)>,
}

/// The folded points of `events` (an events.csv) on `period`; None when it cannot be read.
pub fn fold(events: &Path, period: u64, threshold: f64, threads: u32) -> Option<Folded> {
    let mut ev = crate::results::read::Events::open(events).ok()?;
    let mut e = crate::results::read::Event::default();
    let (mut slow, mut fast) = (Vec::new(), Vec::new());
    let mut seq = None;
    let mut n = 0u64;
    while n < MAX_ROWS && ev.next_into(&mut e).ok()? {
        if e.threads != threads || *seq.get_or_insert(e.seq) != e.seq {
            continue;
        }
        n += 1;
        let p = (e.iteration % period.max(1), e.latency);
        if e.latency > threshold {
            if slow.len() < MAX_SLOW {
                slow.push(p);
            }
        } else {
            fast.push(p);
        }
    }
    // Evenly spaced fast calls: the band, not every dot.
    let step = fast.len().div_ceil(MAX_FAST).max(1);
    let mut points: Vec<(u64, f64)> = fast.into_iter().step_by(step).collect();
    points.extend(slow);
    (!points.is_empty()).then_some(Folded { period, threshold, points })
}

/// The inline SVG: log latency against the position in the period, slow calls in `colour`.
pub fn svg(f: &Folded, colour: &str) -> String {
    let (w, h, left, bottom) = (640.0, 190.0, 60.0, 34.0);
    let lat: Vec<f64> = f.points.iter().map(|p| p.1).filter(|v| *v > 0.0).collect();
    let lo = lat.iter().copied().fold(f64::INFINITY, f64::min).max(1.0) / 1.2;
    let hi = lat.iter().copied().fold(0.0, f64::max).max(lo * 2.0) * 1.2;
    let y = |v: f64| 8.0 + (h - bottom - 8.0) * (1.0 - (v.max(lo).log10() - lo.log10()) / (hi.log10() - lo.log10()));
    let x = |i: u64| left + (w - left - 10.0) * i as f64 / f.period.max(1) as f64;
    let mut s = format!(
        "<svg role=\"img\" aria-label=\"latency against iteration modulo {p}\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"11\">\n<rect x=\"{left}\" y=\"8\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#bbb\"/>\n",
        w - left - 10.0,
        h - bottom - 8.0,
        p = f.period
    );
    for v in [lo * 1.2, f.threshold, hi / 1.2] {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><line x1=\"{left}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/>",
            left - 4.0,
            y(v) + 4.0,
            sig3(v),
            w - 10.0,
            y(v),
            y(v)
        );
    }
    for &(i, v) in &f.points {
        let slow = v > f.threshold;
        let _ = write!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{}\" fill=\"{}\"{}/>",
            x(i),
            y(v),
            if slow { 2.2 } else { 1.5 },
            if slow { colour } else { "#999" },
            if slow { "" } else { " fill-opacity=\"0.4\"" }
        );
    }
    let _ = writeln!(
        s,
        "\n<text x=\"{left}\" y=\"{}\">0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">iteration modulo {} (calls); latency in ns, log scale; slow calls in colour</text>\n</svg>",
        h - bottom + 14.0,
        w - 10.0,
        h - bottom + 14.0,
        f.period,
        (w + left) / 2.0,
        h - 4.0,
        f.period
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_once_per_period_is_one_column() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("events.csv");
        let mut t = String::from("threads,thread,iteration,latency_ns\n");
        for i in 0..5000u64 {
            t.push_str(&format!("1,0,{i},{}\n", if i % 100 == 37 { 900 } else { 60 }));
        }
        std::fs::write(&p, t).unwrap();
        let f = fold(&p, 100, 300.0, 1).unwrap();
        let slow: Vec<u64> = f.points.iter().filter(|q| q.1 > 300.0).map(|q| q.0).collect();
        assert_eq!(slow.len(), 50);
        assert!(slow.iter().all(|&i| i == 37), "{slow:?}");
        assert!(f.points.len() <= MAX_FAST + 50 + 1);
        assert!(svg(&f, "#0072b2").contains("iteration modulo 100"));
    }
}
