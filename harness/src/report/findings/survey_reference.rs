//! What the survey reports (Gebai & Dagenais 2018, Tables 3 and 4, Figures 5, 6 and 8), so the
//! report can say where a result agrees with it and where it departs. Absolute numbers come from
//! a 2016 i7-3770 at 3.4 GHz: they are a reference, not a target; orderings and shapes (flat or
//! contended under more threads) are what should carry over.
use serde_json::Value;

use crate::decisions::findings::FLAT_MAX;

/// (average ns, STD, 90th percentile) and the survey's label.
#[derive(Debug, Clone, Copy)]
pub struct Reference {
    pub label: &'static str,
    pub table: &'static str,
    pub mean: f64,
    pub std: f64,
    pub p90: f64,
}

/// How the survey saw a tracer scale with cores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scaling {
    Flat,
    Contended,
}

/// Tracer kind from a row name: the part before ':' or '@', lower case.
pub fn kind(name: &str) -> String {
    name.split([':', '@']).next().unwrap_or(name).to_ascii_lowercase()
}

/// Whether run.json describes a kernel-space run (`tracebench run --kernel`).
pub fn is_kernel(run: &Value) -> bool {
    run.get("kernel").and_then(Value::as_bool).unwrap_or(false)
        || run.get("mode").and_then(Value::as_str).map(|m| m.eq_ignore_ascii_case("kernel")).unwrap_or(false)
}

/// Why the run's timings cannot be compared with the survey's, if they cannot: an emulated CPU
/// (the kernel lab's qemu TCG guest records `host.emulated: true` and `host.guest`) or a clock
/// that run.json marks unstable.
pub fn emulated(run: &Value) -> Option<String> {
    let host = run.get("host");
    let guest = host.and_then(|h| h.get("guest")).and_then(Value::as_str).unwrap_or("");
    if host.and_then(|h| h.get("emulated")).and_then(Value::as_bool) == Some(true)
        || guest.to_ascii_uppercase().contains("TCG")
    {
        let what = if guest.is_empty() { "an emulated CPU".to_string() } else { guest.to_string() };
        return Some(format!("the run's timings are emulated ({what})"));
    }
    if run.get("clock").and_then(|c| c.get("stable")).and_then(Value::as_bool) == Some(false) {
        return Some("its clock is a TSC that is not invariant (run.json clock.stable = false): its rate follows the CPU's frequency".into());
    }
    None
}

/// The clock an ftrace row used, from its run.json config (`clock` or `trace_clock`).
pub fn ftrace_clock(config: &Value) -> Option<String> {
    ["clock", "trace_clock", "ftrace_clock"]
        .iter()
        .find_map(|k| config.get(*k).and_then(Value::as_str).map(String::from))
}

pub fn reference(name: &str, kernel: bool) -> Option<Reference> {
    let r = |label, table, mean, std, p90| Some(Reference { label, table, mean, std, p90 });
    let k = kind(name);
    if kernel {
        match k.as_str() {
            "none" => r("None", "Table 3", 17.0, 0.0, 17.0),
            "lttng" | "lttng-kernel" => r("LTTng", "Table 3", 92.0, 5.0, 89.0),
            "ftrace" => r("Ftrace", "Table 3", 116.0, 7.0, 114.0),
            "perf" => r("Perf", "Table 3", 121.0, 1.0, 118.0),
            "lttng-kprobe" => r("LTTng-Kprobe", "Table 3", 123.0, 5.0, 121.0),
            "ebpf-tracing" => r("eBPF-tracing", "Table 3", 128.0, 5.0, 124.0),
            "systemtap" | "stap" => r("SystemTap", "Table 3", 130.0, 5.0, 125.0),
            "ebpf" => r("eBPF", "Table 3", 140.0, 10.0, 126.0),
            _ => None,
        }
    } else {
        match k.as_str() {
            "none" => r("None", "Table 4", 17.0, 0.0, 17.0),
            "lw" | "lw-ust" => r("LW-UST", "Table 4", 66.0, 2.0, 64.0),
            "vampirtrace" => r("VampirTrace", "Table 4", 84.0, 87.0, 72.0),
            "extrae" => r("Extrae", "Table 4", 120.0, 7.0, 118.0),
            "lttng-ust" | "lttng" => r("LTTng-UST", "Table 4", 158.0, 27.0, 150.0),
            "printf" => r("Printf", "Table 4", 250.0, 65.0, 242.0),
            "lttng-tracef" | "tracef" => r("LTTng-tracef", "Table 4", 446.0, 73.0, 433.0),
            "systemtap" | "stap" | "systemtap-ust" => r("SystemTap", "Table 4", 1039.0, 52.0, 1020.0),
            _ => None,
        }
    }
}

/// The survey's scalability finding for a tracer, with the figure that shows it and why.
pub fn scaling(name: &str, config: &Value, kernel: bool) -> Option<(Scaling, &'static str)> {
    let k = kind(name);
    if k == "ftrace" || k.starts_with("ftrace-") || k.starts_with("ftrace_") {
        let clock =
            ftrace_clock(config).unwrap_or_else(|| if k.contains("local") { "local".into() } else { "global".into() });
        return Some(match clock.as_str() {
            "local" | "x86-tsc" | "mono" | "perf" => (Scaling::Flat, "Fig. 6: ftrace with a CPU-local clock scales"),
            "counter" => (Scaling::Contended, "Fig. 6: the atomic global counter clock scales poorly"),
            _ => (Scaling::Contended, "Fig. 5/6: ftrace's global clock takes a spin lock on every event"),
        });
    }
    match k.as_str() {
        "none" => Some((Scaling::Flat, "the empty call shares nothing")),
        "printf" => Some((
            Scaling::Contended,
            "Fig. 8: printf's shared FILE lock; latency more than doubles from 1 to 2 threads",
        )),
        "lw" | "lw-tsc" | "lw-ust" => Some((Scaling::Flat, "Fig. 8: per-CPU buffers, no lock")),
        "lttng-ust" | "vampirtrace" | "extrae" => {
            Some((Scaling::Flat, "Fig. 8: per-CPU / per-thread lockless buffers"))
        }
        "lttng" | "lttng-kernel" | "perf" if kernel => {
            Some((Scaling::Flat, "Fig. 5: scales with almost no added overhead"))
        }
        "ebpf" | "ebpf-tracing" | "systemtap" | "stap" => {
            Some((Scaling::Contended, "Fig. 5/8: poor scalability, internal locks suspected"))
        }
        _ => None,
    }
}

/// Growth factor of the mean from the fewest to the most threads, and its reading.
pub fn classify_growth(ratio: f64) -> Scaling {
    if ratio <= FLAT_MAX {
        Scaling::Flat
    } else {
        Scaling::Contended
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_references() {
        assert_eq!(kind("spin:100@64:1000"), "spin");
        assert_eq!(kind("LTTng-UST"), "lttng-ust");
        assert_eq!(reference("printf", false).unwrap().mean, 250.0);
        assert_eq!(reference("ftrace", true).unwrap().mean, 116.0);
        assert!(reference("spin:300", false).is_none());
    }

    #[test]
    fn emulation_is_recognised() {
        let lab = serde_json::json!({"host": {"guest": "qemu TCG, 1 vCPU", "emulated": true}});
        assert!(emulated(&lab).unwrap().contains("qemu TCG"));
        assert!(emulated(&serde_json::json!({"host": {"virtualized": "hypervisor flag set"}})).is_none());
        assert!(emulated(&serde_json::json!({"clock": {"stable": false}})).is_some());
    }

    #[test]
    fn ftrace_clock_decides_scaling() {
        let local = serde_json::json!({"clock": "local"});
        let global = serde_json::json!({"clock": "global"});
        assert_eq!(scaling("ftrace", &local, true).unwrap().0, Scaling::Flat);
        assert_eq!(scaling("ftrace", &global, true).unwrap().0, Scaling::Contended);
        assert_eq!(scaling("printf", &Value::Null, false).unwrap().0, Scaling::Contended);
        assert_eq!(classify_growth(1.1), Scaling::Flat);
        assert_eq!(classify_growth(2.3), Scaling::Contended);
    }
}
