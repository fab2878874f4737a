//! Bencher Metric Format (<https://bencher.dev/docs/reference/bencher-metric-format>):
//! `{benchmark: {measure: {value, lower_value?, upper_value?}}}`, read by
//! `bencher run --adapter json --file FILE`. Bencher's built-in `latency` measure is in
//! nanoseconds, which is our unit; each machine of a fleet is a Bencher "testbed".
//!
//! Measures per benchmark: `latency` (mom_ns, with its interval), `latency-p50`, `latency-p99`,
//! `discard-fraction`, and one per counter that was measured, named after the counter (its mean
//! per call). BMF holds numbers only, so the gate's verdict has no place here (github-benchmark
//! carries it).
use serde_json::{json, Map, Value};

use super::{Benchmark, Exporter, Format, Metric};
use crate::error::Error;

pub struct Bmf;

fn metric(m: &Metric) -> Value {
    let mut o = Map::new();
    o.insert("value".into(), json!(m.value));
    if let Some(l) = m.lower {
        o.insert("lower_value".into(), json!(l));
    }
    if let Some(u) = m.upper {
        o.insert("upper_value".into(), json!(u));
    }
    Value::Object(o)
}

/// The BMF document of `benches`. Non-finite values are left out (JSON has no NaN).
pub fn document(benches: &[Benchmark]) -> Value {
    let mut doc = Map::new();
    for b in benches {
        let r = &b.row;
        let mut m = Map::new();
        m.insert("latency".into(), metric(&r.latency));
        let mut point = |name: &str, v: f64| {
            if v.is_finite() {
                m.insert(name.to_string(), metric(&Metric::point(v)));
            }
        };
        point("latency-p50", r.p50);
        point("latency-p99", r.p99);
        point("discard-fraction", r.discard_fraction);
        for (c, v) in &r.counters {
            point(c, *v);
        }
        doc.insert(b.name.clone(), Value::Object(m));
    }
    Value::Object(doc)
}

impl Exporter for Bmf {
    fn format(&self) -> Format {
        Format::Bmf
    }
    fn render(&self, benches: &[Benchmark]) -> Result<String, Error> {
        let mut s = serde_json::to_string_pretty(&document(benches))
            .map_err(|e| Error::Data { path: "bmf".into(), why: e.to_string() })?;
        s.push('\n');
        Ok(s)
    }
}
