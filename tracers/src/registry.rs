//! Which tracers exist, whether each can run here, and how to create one from its spec.
use crate::{lw::Lw, none::NoneTracer, printf::Printf, spin::Spin, Tracer, TracerError};

/// What the harness hands a backend at creation.
#[derive(Debug, Clone)]
pub struct CreateOptions {
    /// Calibrated TSC frequency in Hz (for backends that time themselves with the TSC).
    pub tsc_hz: f64,
}

/// One line of `tracebench list`.
#[derive(Debug, Clone)]
pub struct TracerInfo {
    pub name: &'static str,
    pub spec: &'static str,
    pub description: &'static str,
    /// `Ok(())` when it can run here; otherwise why not and how to fix it.
    pub availability: Result<(), (String, String)>,
}

/// Every tracer this build knows, with its availability on this machine.
pub fn known() -> Vec<TracerInfo> {
    vec![
        TracerInfo { name: "none", spec: "none", description: "empty non-inlined call: the floor", availability: Ok(()) },
        TracerInfo { name: "lw", spec: "lw", description: "survey's LW-ust: per-CPU ring, clock_gettime, {id,ts,payload}", availability: Ok(()) },
        TracerInfo { name: "lw-tsc", spec: "lw-tsc", description: "LW-ust with an rdtsc timestamp", availability: Ok(()) },
        TracerInfo { name: "printf", spec: "printf", description: "fprintf(ts, payload) to a fully buffered FILE on /dev/null", availability: Ok(()) },
        TracerInfo { name: "spin", spec: "spin:NS[@P:SLOW]", description: "calibration: busy-wait NS ns (every P-th call SLOW ns)", availability: Ok(()) },
    ]
}

/// Creates the tracer named by `spec` (e.g. `lw`, `spin:300`, `spin:100@64:1000`).
pub fn create(spec: &str, opts: &CreateOptions) -> Result<Box<dyn Tracer>, TracerError> {
    let (kind, arg) = match spec.split_once(':') {
        Some((k, a)) => (k, Some(a)),
        None => (spec, None),
    };
    let no_arg = |t: Box<dyn Tracer>| -> Result<Box<dyn Tracer>, TracerError> {
        match arg {
            None => Ok(t),
            Some(_) => Err(TracerError::BadSpec { spec: spec.into(), why: format!("'{kind}' takes no argument") }),
        }
    };
    match kind {
        "none" => no_arg(Box::new(NoneTracer)),
        "lw" => no_arg(Box::new(Lw::new("lw", false))),
        "lw-tsc" => no_arg(Box::new(Lw::new("lw-tsc", true))),
        "printf" => no_arg(Box::new(Printf::new()?)),
        "spin" => match arg {
            Some(a) => Ok(Box::new(Spin::parse(spec, a, opts.tsc_hz)?)),
            None => Err(TracerError::BadSpec { spec: spec.into(), why: "spin needs a cost, e.g. spin:300".into() }),
        },
        _ => Err(TracerError::Unknown(spec.to_string())),
    }
}

/// Checks a spec without creating the tracer (no side effects), for validating a command line
/// before any cell runs.
pub fn validate(spec: &str) -> Result<(), TracerError> {
    let kind = spec.split(':').next().unwrap_or("");
    let info = known().into_iter().find(|i| i.name == kind).ok_or_else(|| TracerError::Unknown(spec.to_string()))?;
    if let Err((why, fix)) = info.availability {
        return Err(TracerError::Unavailable { name: kind.into(), why, fix });
    }
    if kind == "spin" {
        let a = spec.split_once(':').map(|x| x.1).ok_or_else(|| TracerError::BadSpec { spec: spec.into(), why: "spin needs a cost, e.g. spin:300".into() })?;
        Spin::parse(spec, a, 1e9)?;
    } else if spec.contains(':') {
        return Err(TracerError::BadSpec { spec: spec.into(), why: format!("'{kind}' takes no argument") });
    }
    Ok(())
}
