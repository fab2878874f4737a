//! The slow-path period a tracer's own geometry predicts (survey section 7.1), from run.json's
//! end-of-run snapshot of the tracer, and how many calls a run needs to show it.
use serde_json::Value;

use crate::analysis::code_paths;
use crate::report::findings::survey_reference;
use crate::report::TracerReport;

/// A run length (calls) that holds at least five periods of `period`, rounded up to 1, 2 or 5
/// times a power of ten (what to pass to `-n`).
pub(crate) fn calls_for(period: f64) -> u64 {
    let want = (5.0 * period).ceil().max(10.0) as u64;
    let mut p = 1u64;
    loop {
        for m in [1, 2, 5] {
            if m * p >= want {
                return m * p;
            }
        }
        p *= 10;
    }
}

/// The `after_run` object of a tracer's first cell in run.json.
pub(crate) fn after_run<'a>(run: &'a Value, name: &str) -> Option<&'a Value> {
    run.get("tracers")?
        .as_array()?
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))?
        .get("cells")?
        .as_array()?
        .iter()
        .find_map(|c| c.get("after_run").filter(|a| a.is_object()))
}

/// The slow-path period a tracer's own geometry predicts (survey section 7.1): LTTng-UST's
/// events per full sub-buffer, read from its end-of-run snapshot; ftrace's events per ring-buffer
/// page from its per-CPU `bytes` / `entries`; else a declared `geometry.events_per_flush` (otf*).
pub(crate) fn expected_period(run: &Value, t: &TracerReport) -> Option<code_paths::Expected> {
    let kind = survey_reference::kind(&t.spec);
    let ar = after_run(run, &t.name)?;
    if let Some(g) = ar.get("geometry").filter(|g| g.get("events_per_flush").is_some()) {
        let f = |k: &str| g.get(k).and_then(Value::as_f64).filter(|v| *v > 0.0);
        let (buf, rec, per) = (f("buffer_bytes")?, f("record_bytes")?, f("events_per_flush")?);
        return Some(code_paths::Expected {
            period: per,
            how: format!("buffer {buf:.0} B / record {rec:.0} B = {per:.0}"),
        });
    }
    if kind.starts_with("lttng") {
        let g = ar.get("geometry")?;
        let f = |k: &str| g.get(k).and_then(Value::as_f64);
        let (sub, ev, hdr) = (f("subbuf_bytes")?, f("event_bytes")?, f("header_bytes").unwrap_or(0.0));
        let per = f("events_per_subbuf")?;
        if ev <= 0.0 || per <= 0.0 {
            return None;
        }
        return Some(code_paths::Expected {
            period: per,
            how: format!(
                "sub-buffer {sub:.0} B ({hdr:.0} B header) / event {ev:.1} B = {:.0} events per sub-buffer",
                ((sub - hdr) / ev).floor()
            ),
        });
    }
    if kind.starts_with("ftrace") {
        let page = t.config.get("ring_page_data_bytes").and_then(Value::as_f64)?;
        let stats = ar.get("per_cpu_stats")?;
        let cpu = ar.get("measuring_cpus")?.as_array()?.first()?.as_u64()?;
        let s = stats.get(cpu.to_string())?;
        let (bytes, entries) = (s.get("bytes")?.as_f64()?, s.get("entries")?.as_f64()?);
        if entries <= 0.0 || bytes <= 0.0 {
            return None;
        }
        let ev = bytes / entries;
        // The syscall rows write two events per call (enter and exit).
        let per_call = t.config.get("events").and_then(Value::as_array).map(|a| a.len()).filter(|&n| n > 1);
        return Some(match per_call {
            None => code_paths::Expected {
                period: (page / ev).floor(),
                how: format!("ring-buffer page {page:.0} B / event {ev:.1} B = {:.0} events per page", (page / ev).floor()),
            },
            Some(k) => code_paths::Expected {
                period: page / ev / k as f64,
                how: format!(
                    "ring-buffer page {page:.0} B / event {ev:.1} B = {:.0} events per page, {k} events per call: one page every {:.1} calls",
                    (page / ev).floor(),
                    page / ev / k as f64
                ),
            },
        });
    }
    None
}
