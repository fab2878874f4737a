//! github-action-benchmark's `customSmallerIsBetter` input
//! (<https://github.com/benchmark-action/github-action-benchmark>): a JSON array of
//! `{name, unit, value, range?, extra?}` where `range` and `extra` are strings. The action keeps
//! one chart per `name` on GitHub Pages and shows `extra` in the tooltip of each point.
//!
//! One entry per row: `value` is `latency` (mom_ns, unit `ns`), `range` is "± half-width" of its
//! interval (the action reads the number after `±`), and `extra` carries the rest, one
//! `key: value` line each: host, kernel, clock and its resolution, tracer and tracebench versions,
//! what the interval is, p50, p99, the discard fraction, counter means, and the gate's verdict.
use serde_json::{json, Map, Value};

use super::{Benchmark, Exporter, Format};
use crate::error::Error;

pub struct GithubBenchmark;

/// The `extra` text of one benchmark.
pub fn extra(b: &Benchmark) -> String {
    let (r, m) = (&b.row, &b.meta);
    let mut l: Vec<String> = Vec::new();
    if let Some(h) = &m.host {
        l.push(format!("host: {h}"));
    }
    if let Some(k) = &m.kernel {
        l.push(format!("kernel: {k}"));
    }
    match (&m.clock, m.clock_resolution_ns) {
        (Some(c), Some(res)) => l.push(format!("clock: {c}, resolution {res:.2} ns")),
        (Some(c), None) => l.push(format!("clock: {c}")),
        (None, Some(res)) => l.push(format!("clock resolution: {res:.2} ns")),
        (None, None) => {}
    }
    if let Some(v) = &r.tracer_version {
        l.push(format!("tracer: {} {v}", r.tracer));
    }
    if let Some(v) = &m.tracebench {
        l.push(format!("tracebench: {v}"));
    }
    l.push(format!("value: mom_ns; interval: {}", r.interval.describe()));
    if let (Some(lo), Some(hi)) = (r.latency.lower, r.latency.upper) {
        l.push(format!("lower..upper: {lo:.3}..{hi:.3} ns"));
    }
    if r.p50.is_finite() && r.p99.is_finite() {
        l.push(format!("p50: {:.3} ns, p99: {:.3} ns", r.p50, r.p99));
    }
    if r.discard_fraction.is_finite() {
        l.push(format!("discarded: {:.3}%", r.discard_fraction * 100.0));
    }
    for (c, v) in &r.counters {
        l.push(format!("{c}: {v:.3} per call"));
    }
    if let Some(g) = &b.gate {
        l.push(format!("gate: {}", g.describe()));
    }
    l.join("\n")
}

/// The customSmallerIsBetter array of `benches`.
pub fn document(benches: &[Benchmark]) -> Value {
    Value::Array(
        benches
            .iter()
            .map(|b| {
                let mut o = Map::new();
                o.insert("name".into(), json!(b.name));
                o.insert("unit".into(), json!("ns"));
                o.insert("value".into(), json!(b.row.latency.value));
                // Three decimals always: the action's range parser wants a digit and more after "±".
                if let Some(h) = b.row.latency.half_width() {
                    o.insert("range".into(), json!(format!("± {h:.3}")));
                }
                o.insert("extra".into(), json!(extra(b)));
                Value::Object(o)
            })
            .collect(),
    )
}

impl Exporter for GithubBenchmark {
    fn format(&self) -> Format {
        Format::GithubBenchmark
    }
    fn render(&self, benches: &[Benchmark]) -> Result<String, Error> {
        let mut s = serde_json::to_string_pretty(&document(benches))
            .map_err(|e| Error::Data { path: "github-benchmark".into(), why: e.to_string() })?;
        s.push('\n');
        Ok(s)
    }
}
