//! `systemtap`: a SystemTap probe on the site function, recording the timestamp and the payload
//! into a global array keyed by CPU (survey section 5.2.2 / Table 4, "SystemTap" userspace).
//!
//! SystemTap compiles its script into a kernel module (default runtime), which needs a kernel
//! with loadable modules and that kernel's build tree; its other runtimes are dyninst (only in
//! builds with DYNINST among `stap --version`'s enabled features) and bpf (which also needs the
//! kernel build tree). `availability` says which of these is missing here.
//!
//! Where it can run, `stap -x <pid>` runs as a child of the measuring process, like `bpftrace`;
//! the probe is dwarfless (the site is assembly with only an ELF symbol), so the payload is
//! `uint_arg(1)`. This path is written but could not be run on the development machine (no
//! modules, no build tree); treat its first run elsewhere as untested.
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use crate::probe_site::{ProbeSite, SiteKind};
use crate::sys::kernel_release;
use crate::sys::which;
use crate::tool_process::{map_values, ToolProcess};
use crate::{CreateOptions, Tracer, TracerError};

/// Which SystemTap runtime can run here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    Kernel,
    Dyninst,
}

fn stap_features() -> String {
    Command::new("stap")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr))
        .unwrap_or_default()
}

/// The runtime to use, or (why not, how to fix).
pub fn runtime() -> Result<Runtime, (String, String)> {
    if which("stap").is_none() {
        return Err((
            "SystemTap is not installed".into(),
            "apt-get install systemtap linux-headers-$(uname -r), on a kernel with CONFIG_MODULES=y".into(),
        ));
    }
    let features = stap_features();
    let dyninst = features.lines().any(|l| l.contains("enabled features") && l.contains("DYNINST"));
    let modules = Path::new("/proc/modules").exists();
    let build = Path::new(&format!("/lib/modules/{}/build", kernel_release())).exists();
    if modules && build {
        return Ok(Runtime::Kernel);
    }
    if dyninst && which("stapdyn").is_some() {
        return Ok(Runtime::Dyninst);
    }
    let mut why = Vec::new();
    if !modules {
        why.push("the kernel cannot load modules (CONFIG_MODULES off: no /proc/modules)".to_string());
    }
    if !build {
        why.push(format!("no kernel build tree at /lib/modules/{}/build", kernel_release()));
    }
    why.push("this SystemTap has no dyninst runtime (no DYNINST in `stap --version`, no stapdyn)".into());
    Err((
        why.join("; "),
        "boot a kernel with CONFIG_MODULES=y and install systemtap + linux-headers-$(uname -r), \
         or a SystemTap built with dyninst (stap --runtime=dyninst)"
            .into(),
    ))
}

pub fn availability() -> Result<(), (String, String)> {
    runtime().map(|_| ())
}

pub struct SystemTap {
    name: String,
    version: String,
    runtime: Runtime,
    script: String,
    site: ProbeSite,
    tool: ToolProcess,
    result: Mutex<Option<serde_json::Value>>,
}

impl SystemTap {
    pub fn new(name: &str, opts: &CreateOptions) -> Result<SystemTap, TracerError> {
        let runtime = runtime().map_err(|(why, fix)| TracerError::Unavailable { name: name.into(), why, fix })?;
        let kind = SiteKind::parse(opts.probe_site.as_deref())?;
        let site = ProbeSite::locate(kind).map_err(|e| TracerError::Setup { name: name.into(), why: e })?;
        let version = stap_features().lines().next().unwrap_or("").trim().to_string();
        let script = format!(
            "global ts, payload, hits\n\
             probe process(\"{}\").function(\"{}\") {{ ts[cpu()] = local_clock_ns(); payload[cpu()] = uint_arg(1); hits[cpu()]++ }}\n\
             probe begin {{ printf(\"tracebench-ready\\n\") }}\n\
             probe end {{ foreach (c in hits) printf(\"@hits[%d]: %d\\n\", c, hits[c]); \
             foreach (c in payload) printf(\"@payload[%d]: %d\\n\", c, payload[c]) }}",
            site.path,
            kind.symbol()
        );
        let mut argv = vec!["stap".to_string()];
        if runtime == Runtime::Dyninst {
            argv.push("--runtime=dyninst".into());
        }
        argv.extend(["-x".into(), std::process::id().to_string(), "-e".into(), script.clone()]);
        // Compiling a module takes tens of seconds on a cold cache.
        let tool = ToolProcess::start(name, argv, "tracebench-ready", Duration::from_secs(300))?;
        Ok(SystemTap { name: name.into(), version, runtime, script, site, tool, result: Mutex::new(None) })
    }
}

impl Tracer for SystemTap {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> String {
        self.version.clone()
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "runtime": match self.runtime { Runtime::Kernel => "kernel module", Runtime::Dyninst => "dyninst" },
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
        let out = self.tool.stop();
        let hits = map_values(&out, "@hits");
        // stap reports skipped probes (its own "lost" count) in a WARNING line on exit.
        let skipped = out.iter().find(|l| l.contains("Number of skipped probes")).cloned();
        let v = serde_json::json!({
            "hits": hits.iter().map(|(_, v)| v).sum::<u64>(),
            "last_payload_per_cpu": map_values(&out, "@payload").into_iter().collect::<std::collections::BTreeMap<_, _>>(),
            "skipped_probes": skipped,
        });
        *r = Some(v.clone());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdict follows the facts the test reads itself (stap on PATH, module loading, the
    /// kernel's build tree), and a refusal names the missing one with its fix.
    #[test]
    fn availability_explains_itself() {
        let stap = which("stap").is_some();
        let modules = Path::new("/proc/modules").exists();
        let build = Path::new(&format!("/lib/modules/{}/build", kernel_release())).exists();
        match runtime() {
            Ok(Runtime::Kernel) => assert!(stap && modules && build),
            Ok(Runtime::Dyninst) => assert!(stap && !(modules && build) && which("stapdyn").is_some()),
            Err((why, fix)) if !stap => {
                assert_eq!(why, "SystemTap is not installed");
                assert!(fix.starts_with("apt-get install systemtap"), "{fix}");
            }
            Err((why, fix)) => {
                assert!(!(modules && build), "refused with modules and a build tree: {why}");
                assert_eq!(why.contains("/proc/modules"), !modules, "{why}");
                assert_eq!(why.contains("no kernel build tree"), !build, "{why}");
                assert!(why.contains("no dyninst runtime") && fix.contains("CONFIG_MODULES=y"), "{why} / {fix}");
            }
        }
    }
}
