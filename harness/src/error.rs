//! Crate-wide error type. Every variant prints as one line that says what is wrong and how to
//! fix it; `main` prints it and exits non-zero.
use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Gate(#[from] crate::gate::GateError),
}

impl Error {
    /// The process exit status for this error. The gate reserves 1 for "a regression", so
    /// usage and data errors exit 2 (issue 7).
    pub fn exit_code(&self) -> i32 {
        2
    }
}
