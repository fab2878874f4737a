//! tracebench: measures what one tracer event costs (Gebai & Dagenais 2018).
pub mod error;
pub mod gate;
pub mod stats;
