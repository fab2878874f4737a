//! A tracing tool (bpftrace, stap) running as a child of the measuring process: started, waited
//! for until it says it attached, stopped with SIGINT, its map prints parsed. Shared by the
//! `bpftrace` and `systemtap` backends.
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

use crate::TracerError;

/// A tracing tool running as our child: started, waited for until ready, stopped with SIGINT.
pub(crate) struct ToolProcess {
    pub(crate) child: Mutex<Option<Child>>,
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
