//! `bpftrace`: a bpftrace one-liner on the probe site's uprobe, writing the timestamp and the
//! payload into per-CPU-keyed maps (survey section 5.1.6, eBPF through its high-level front end).
//!
//! bpftrace runs as a child of the measuring process (`-p <pid>`, so only this process's hits
//! fire), started in `new` and waited for until it says it attached. It dies with its parent
//! (PR_SET_PDEATHSIG) and is stopped with SIGINT in `after_run` (which prints its maps, our
//! proof that it recorded) or in `Drop` on any other path.
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

use crate::probe_site::{ProbeSite, SiteKind};
use crate::uprobe::kernel_release;
use crate::{CreateOptions, Tracer, TracerError};

/// Finds an executable on PATH.
pub(crate) fn which(prog: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| std::path::Path::new(d).join(prog)).find(|p| p.is_file())
}

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

/// A tracing tool running as our child: started, waited for until ready, stopped with SIGINT.
pub(crate) struct ToolProcess {
    child: Mutex<Option<Child>>,
    lines: Mutex<mpsc::Receiver<String>>,
    pub argv: Vec<String>,
}

impl ToolProcess {
    /// Starts `argv` and waits up to `timeout` for a stdout line containing `ready`.
    pub fn start(name: &str, argv: Vec<String>, ready: &str, timeout: Duration) -> Result<ToolProcess, TracerError> {
        let err = |why: String| TracerError::Setup { name: name.into(), why };
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // SAFETY: prctl is async-signal-safe; the tool must not outlive a SIGKILLed measuring
        // process (its uprobe would stay attached).
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // BPF maps are charged to memlock on older kernels; bpftrace warns when it cannot
                // raise the limit itself.
                let inf = libc::rlimit { rlim_cur: libc::RLIM_INFINITY, rlim_max: libc::RLIM_INFINITY };
                libc::setrlimit(libc::RLIMIT_MEMLOCK, &inf);
                Ok(())
            })
        };
        let mut child = cmd.spawn().map_err(|e| err(format!("starting {}: {e}", argv[0])))?;
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        let tx2 = tx.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx2.send(l);
            }
        });
        let mut errs = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = errs.read_to_string(&mut s);
            for l in s.lines() {
                let _ = tx.send(format!("stderr: {l}"));
            }
        });
        let deadline = std::time::Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(l) if l.contains(ready) => {
                    if std::env::var_os("TRACEBENCH_DEBUG").is_some() {
                        eprintln!("{} ready after {:?}: {seen:?}", argv[0], timeout - left);
                    }
                    break;
                }
                Ok(l) => seen.push(l),
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    // Collect what stderr said before giving up.
                    std::thread::sleep(Duration::from_millis(100));
                    seen.extend(rx.try_iter());
                    return Err(err(format!(
                        "{} did not report '{ready}' within {timeout:?}: {}",
                        argv[0],
                        seen.join(" | ")
                    )));
                }
            }
        }
        Ok(ToolProcess { child: Mutex::new(Some(child)), lines: Mutex::new(rx), argv })
    }

    /// Stops the tool with SIGINT and returns what it printed after becoming ready.
    pub fn stop(&self) -> Vec<String> {
        let Some(mut child) = self.child.lock().unwrap().take() else {
            return Vec::new();
        };
        // SIGINT is repeated: bpftrace 0.17 sometimes misses one that arrives right after its
        // BEGIN probe ran (seen here), and it is idempotent for stap and bpftrace alike.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut next_signal = std::time::Instant::now();
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            if std::time::Instant::now() >= next_signal {
                // SAFETY: signalling our own child, which has not been reaped yet.
                unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
                next_signal += Duration::from_millis(500);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        std::thread::sleep(Duration::from_millis(50));
        let rx = self.lines.lock().unwrap();
        let mut out = Vec::new();
        while let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
            out.push(l);
        }
        out
    }
}

impl Drop for ToolProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Sums and collects `@map[key]: value` lines of a bpftrace/stap map print.
pub(crate) fn map_values(lines: &[String], map: &str) -> Vec<(String, u64)> {
    let prefix = format!("{map}[");
    lines
        .iter()
        .filter_map(|l| {
            let r = l.trim().strip_prefix(&prefix)?;
            let (k, v) = r.split_once("]:")?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
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
