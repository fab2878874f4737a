//! `bpftrace`: a bpftrace one-liner on the probe site's uprobe, writing the timestamp and the
//! payload into per-CPU-keyed maps (survey section 5.1.6, eBPF through its high-level front end).
//!
//! bpftrace runs as a child of the measuring process (`-p <pid>`, so only this process's hits
//! fire), started in `new` and waited for until it says it attached. It dies with its parent
//! (PR_SET_PDEATHSIG) and is stopped with SIGINT in `after_run` (which prints its maps, our
//! proof that it recorded) or in `Drop` on any other path.
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use crate::probe_site::{ProbeSite, SiteKind};
use crate::sys::kernel_release;
use crate::tool_process::{map_values, ToolProcess};
use crate::{CreateOptions, Tracer, TracerError};

use crate::sys::which;

pub fn availability() -> Result<(), (String, String)> {
    if which("bpftrace").is_none() {
        return Err(("bpftrace is not installed".into(), "apt-get install bpftrace".into()));
    }
    if !std::path::Path::new("/sys/fs/bpf").exists()
        && !std::path::Path::new("/proc/sys/kernel/bpf_stats_enabled").exists()
    {
        return Err(("kernel without BPF syscall support".into(), "use a kernel with CONFIG_BPF_SYSCALL=y".into()));
    }
    Ok(())
}

pub struct Bpftrace {
    name: String,
    version: String,
    script: String,
    site: ProbeSite,
    tool: ToolProcess,
    result: Mutex<Option<serde_json::Value>>,
}

impl Bpftrace {
    pub fn new(name: &str, opts: &CreateOptions) -> Result<Bpftrace, TracerError> {
        availability().map_err(|(why, fix)| TracerError::Unavailable { name: name.into(), why, fix })?;
        let kind = SiteKind::parse(opts.probe_site.as_deref())?;
        let site = ProbeSite::locate(kind).map_err(|e| TracerError::Setup { name: name.into(), why: e })?;
        let version = Command::new("bpftrace")
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        // Per-CPU keys, like the other backends' per-CPU buffers; nsecs is bpf_ktime_get_ns.
        let script = format!(
            "uprobe:{}:{} {{ @ts[cpu] = nsecs; @payload[cpu] = arg0; @hits[cpu] = count(); }} \
             BEGIN {{ printf(\"tracebench-ready\\n\") }} END {{ clear(@ts); }}",
            site.path,
            kind.symbol()
        );
        let argv =
            vec!["bpftrace".to_string(), "-p".into(), std::process::id().to_string(), "-e".into(), script.clone()];
        // BEGIN runs once every probe is attached, so its line means the uprobe is live.
        let tool = ToolProcess::start(name, argv, "tracebench-ready", Duration::from_secs(60))?;
        Ok(Bpftrace { name: name.into(), version, script, site, tool, result: Mutex::new(None) })
    }
}

impl Tracer for Bpftrace {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> String {
        format!("{} on linux {}", self.version, kernel_release())
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "mechanism": "bpftrace uprobe program, BPF hash maps keyed by cpu",
            "command": self.tool.argv,
            "script": self.script,
            "consumer_during_run": false,
            "site": self.site.config(),
        })
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        self.site.call(payload);
    }
    fn after_run(&self) -> serde_json::Value {
        let mut r = self.result.lock().unwrap();
        if let Some(v) = r.as_ref() {
            return v.clone();
        }
        // bpftrace prints its maps on exit: stop it now (the run is over) to read them.
        // Read before stopping: detaching restores the original instruction.
        let site = self.site.patched_state();
        let out = self.tool.stop();
        if std::env::var_os("TRACEBENCH_DEBUG").is_some() {
            eprintln!("bpftrace output: {out:?}");
        }
        let hits = map_values(&out, "@hits");
        let payloads = map_values(&out, "@payload");
        let v = serde_json::json!({
            "hits": hits.iter().map(|(_, v)| v).sum::<u64>(),
            "hits_per_cpu": hits.iter().map(|(k, v)| (k.clone(), *v)).collect::<std::collections::BTreeMap<_, _>>(),
            "last_payload_per_cpu": payloads.iter().map(|(k, v)| (k.clone(), *v)).collect::<std::collections::BTreeMap<_, _>>(),
            // Maps keyed by cpu are overwritten in place: nothing to lose, no counter to report.
            "site": site,
        });
        *r = Some(v.clone());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_values_parse() {
        let l = vec!["@hits[1]: 20".to_string(), "@hits[0]: 3".into(), "@payload[0]: 7".into()];
        assert_eq!(map_values(&l, "@hits"), vec![("1".into(), 20), ("0".into(), 3)]);
    }

    #[test]
    fn records_payloads() {
        let _g = crate::probe_site::test_lock();
        if let Err((why, _)) = availability() {
            println!("SKIP records_payloads: {why}");
            return;
        }
        let t = Bpftrace::new("bpftrace", &CreateOptions::default()).unwrap();
        for i in 0..500u32 {
            t.fire(i);
        }
        let a = t.after_run();
        assert_eq!(a["hits"].as_u64(), Some(500), "{a}");
        let last: Vec<u64> =
            a["last_payload_per_cpu"].as_object().unwrap().values().filter_map(|v| v.as_u64()).collect();
        assert!(last.contains(&499), "{a}");
        // after_run stopped bpftrace: its probe is detached.
        assert!(t.tool.child.lock().unwrap().is_none());
    }
}
