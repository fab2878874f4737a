//! What the report's stages hand each other, below all of them: one tracer row as loaded and
//! analysed (`TracerReport`), a drawn figure (`FigureRef`) and the error every stage returns.
//! The whole report, with its findings, is `findings::Report`.
use std::collections::BTreeMap;

use serde_json::Value;

use crate::analysis::code_paths::TracerAnalysis;
use crate::analysis::dated;
use crate::plot::PlotError;
use crate::report::load::SummaryRow;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Reading the results directory (not one, a malformed file, a missing column, I/O).
    #[error(transparent)]
    Read(#[from] crate::results::read::ReadError),
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error("{0}")]
    Usage(String),
}

impl ReportError {
    /// 2 for input the user must fix (not a results directory, a malformed file); 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            ReportError::Read(crate::results::read::ReadError::Io { .. }) | ReportError::Plot(_) => 1,
            ReportError::Read(_) | ReportError::Usage(_) => 2,
        }
    }
}

impl crate::error::ExitCode for ReportError {
    fn exit_code(&self) -> i32 {
        ReportError::exit_code(self)
    }
}

/// One tracer row as the report sees it.
pub struct TracerReport {
    pub name: String,
    /// What was measured (`--tracer` spec, e.g. `lw` for a row labelled `lw-a`); the survey
    /// comparisons key on it.
    pub spec: String,
    /// Display name: ftrace rows get their clock, from run.json (survey Fig. 6).
    pub label: String,
    pub colour: usize,
    pub config: Value,
    /// summary.csv rows of this tracer, by thread count.
    pub by_threads: BTreeMap<u32, SummaryRow>,
    /// repetitions.csv means at the base thread count.
    pub rep_means: Vec<f64>,
    /// repetitions.csv means by thread count, as (repetition, mean): the scaling verdict's
    /// interval across repetitions (`against`).
    pub rep_by_threads: BTreeMap<u32, Vec<(u32, f64)>>,
    pub analysis: Option<TracerAnalysis>,
    /// Its levels dated over time and held against its sentinel windows (None: no analysis).
    pub dated: Option<dated::SegmentReport>,
    /// Slow calls that gather on the harness's own cycles (empty: none, or no analysis).
    pub footprint: Vec<crate::analysis::footprint::HarnessCycle>,
    /// Its latency folded at the period its geometry predicts, when the search found no path
    /// there: one phase slower than the rest (None: none, not tested, or no expected period).
    pub folded: Option<crate::analysis::folded_period::FoldedPeriod>,
    /// Its latency's slow populations held against its reference windows (None: no reference
    /// windows in the run, or no analysis).
    pub attribution: Option<crate::analysis::attribution::Attributions>,
    pub note: Option<String>,
}

impl TracerReport {
    pub fn base(&self) -> Option<&SummaryRow> {
        self.by_threads.values().next()
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FigureRef {
    pub name: String,
    pub title: String,
    pub caption: String,
}

/// Standard base64 (RFC 4648) for embedding figures in report.html.
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for ch in data.chunks(3) {
        let b = [ch[0], *ch.get(1).unwrap_or(&0), *ch.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= ch.len() {
                out.push(T[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_rfc4648() {
        assert_eq!(super::base64(b""), "");
        assert_eq!(super::base64(b"f"), "Zg==");
        assert_eq!(super::base64(b"fo"), "Zm8=");
        assert_eq!(super::base64(b"foobar"), "Zm9vYmFy");
    }
}
