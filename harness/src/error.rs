//! Errors the user can act on. Each message says what is wrong and how to fix it (as hyperfine's
//! do); `exit_code` maps them onto the CLI's contract: 2 for bad input, 1 for a failed
//! measurement. This module sits at the bottom of the crate: it imports nothing from it. The
//! gate and the report have error types of their own (`gate::GateError`, `report::ReportError`),
//! which the CLI maps to exit codes the same way (`ExitCode`).
use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),
    #[error("unknown counter '{name}': use one of {known} or tracepoint:SUBSYS:EVENT")]
    UnknownCounter { name: String, known: String },
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
}

/// The exit code an error maps to (each subcommand's error type implements it).
pub trait ExitCode: std::fmt::Display {
    fn exit_code(&self) -> i32;
}

impl ExitCode for Error {
    fn exit_code(&self) -> i32 {
        Error::exit_code(self)
    }
}

impl Error {
    /// 2 for anything the user must fix on the command line or in the input files; 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_)
            | Error::UnknownCounter { .. }
            | Error::Tracer(_)
            | Error::OutDir { .. }
            | Error::Pin { .. }
            | Error::Data { .. } => 2,
            _ => 1,
        }
    }

    pub fn io(path: impl AsRef<std::path::Path>, e: impl std::fmt::Display) -> Self {
        Error::Io { path: path.as_ref().display().to_string(), why: e.to_string() }
    }
}
