//! tracebench: what one tracer event costs, measured per call (Gebai & Dagenais 2018).
//!
//! Modules are named after the survey's concepts: [`clock`], [`counters`], [`disturbance`],
//! [`steady_state`], [`runner`] (plan, supervise, measure, merge, export: one child process per
//! cell, pinned), [`results`] (the output contract and the one atomic writer), [`stats`],
//! [`decisions`] (every number that decides what the analysis and the report claim),
//! [`kernel`] (the kbench-module ioctl client), the readers of results ([`report`], [`gate`],
//! [`export`]) and the user-facing [`cli`] and [`output`]. docs/ARCHITECTURE.md is the map.
pub mod analysis;
pub mod cli;
pub mod clock;
pub mod counters;
pub mod decisions;
pub mod disturbance;
pub mod error;
pub mod escape;
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
pub mod survey;
pub mod symbolize;
pub mod system;
