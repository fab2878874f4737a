//! The report as every renderer reads it: the tracer rows as measured and analysed, what the
//! code-path analysis and the survey check claim of them, and the figures drawn.
use std::path::PathBuf;

use serde_json::Value;

use crate::report::findings::{survey_check::SurveyCheck, TracerFindings};
use crate::report::model::{FigureRef, TracerReport};

pub struct Report {
    pub dir: PathBuf,
    pub run: Value,
    pub synthetic: bool,
    pub kernel: bool,
    pub tracers: Vec<TracerReport>,
    pub counters: Vec<String>,
    /// What the code-path analysis claims, per tracer row (report.json), and its lines as the
    /// terminal says them (path_line.rs).
    pub findings: Vec<TracerFindings>,
    pub code_paths: Vec<String>,
    pub survey_notes: Vec<String>,
    /// The same sentences typed (report.json's `survey_check`).
    pub survey_checks: Vec<SurveyCheck>,
    pub notes: Vec<String>,
    pub figures: Vec<FigureRef>,
}
