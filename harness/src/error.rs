//! Errors the user can act on. Each message says what is wrong and how to fix it (as hyperfine's
//! do); `exit_code` maps them onto the CLI's contract: 2 for bad input, 1 for a failed
//! measurement.
use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),
    #[error("unknown counter '{0}': use one of {known} or tracepoint:SUBSYS:EVENT", known = crate::counters::KNOWN.join(", "))]
    UnknownCounter(String),
    #[error(transparent)]
    Tracer(#[from] tracebench_tracers::TracerError),
    #[error("cannot write results to {path}: {why} (fix: choose a writable directory with --out)")]
    OutDir { path: String, why: String },
    #[error("counters: {0}")]
    Counters(String),
    #[error("disturbance detector: {0}")]
    Disturbance(String),
    #[error("cannot pin to CPU {cpu}: {why} (fix: pick an online CPU, see /sys/devices/system/cpu/online)")]
    Pin { cpu: usize, why: String },
    #[error("{path}: {why}")]
    Io { path: String, why: String },
    #[error("measurement failed: {0}")]
    Measurement(String),
    #[error("bad results data in {path}: {why}")]
    Data { path: String, why: String },
    #[error("report: {0}")]
    Report(#[from] crate::report::ReportError),
}

impl Error {
    /// 2 for anything the user must fix on the command line or in the input files; 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_)
            | Error::UnknownCounter(_)
            | Error::Tracer(_)
            | Error::OutDir { .. }
            | Error::Pin { .. }
            | Error::Data { .. } => 2,
            Error::Report(e) => e.exit_code(),
            _ => 1,
        }
    }

    pub fn io(path: impl AsRef<std::path::Path>, e: impl std::fmt::Display) -> Self {
        Error::Io { path: path.as_ref().display().to_string(), why: e.to_string() }
    }
}
