//! The reports that are not one run's code-path report: a sweep's curves (`sweep`), a single-step
//! run's instruction counts (`single_step`), several runs side by side (`side_by_side`), and the
//! synthetic results written for benchmarking the report itself (`synthetic`).
pub mod function_profile;
pub mod side_by_side;
pub mod single_step;
pub mod sweep;
pub mod sweep_law;
pub mod synthetic;
