//! tracebench: what one tracer event costs, measured per call (Gebai & Dagenais 2018).
//!
//! Modules are named after the survey's concepts: [`clock`], [`counters`], [`disturbance`],
//! [`steady_state`], [`runner`] (pinning, threads, the timed loop, one child process per cell),
//! [`sink`] (atomic CSV/JSON), [`stats`], [`kernel`] (the kbench-module ioctl client), and the user-facing
//! [`cli`] and [`output`].
pub mod cli;
pub mod clock;
pub mod counters;
pub mod disturbance;
pub mod error;
pub mod export;
pub mod gate;
pub mod host;
pub mod kernel;
pub mod output;
pub mod plot;
pub mod report;
pub mod results;
pub mod runner;
pub mod stats;
pub mod steady_state;
