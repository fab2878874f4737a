//! The one seam every format of a run's report goes through: a format reads the `View` (the
//! report and its overview) and returns its text, which `write` puts in the results directory
//! through the one atomic writer. report.md, report.json, report.html and the terminal's lines
//! are the formats; the figures are drawn before them (figures.rs) and the tables' CSV and LaTeX
//! files are written with the tables (tables.rs).
use std::io::Write;

use crate::report::findings::{Report, ReportJson, REPORT_JSON_SCHEMA};
use crate::report::model::ReportError;
use crate::report::render::overview::Overview;
use crate::results::read::ReadError;

/// What every format reads: the report, and its overview (the ranking, the tables, the facts,
/// one row per tracer). report.html and the terminal get the overview read back from
/// report.json, so they say what report.json says.
pub struct View<'a> {
    pub report: &'a Report,
    pub overview: &'a Overview,
}

/// One format of the report (as hyperfine's exporters and criterion's reports are).
pub trait Format {
    /// Its file in the results directory; None for the terminal (standard output).
    fn file(&self) -> Option<&'static str>;
    /// The whole text of the format.
    fn render(&self, v: &View) -> Result<String, ReportError>;
}

/// Renders `f` and writes it: to its file in the report's directory, atomically, or to standard
/// output, where a closed stdout (`| head`) is not an error (the files are written already).
pub fn emit(f: &dyn Format, v: &View) -> Result<(), ReportError> {
    let text = f.render(v)?;
    match f.file() {
        Some(name) => {
            let path = v.report.dir.join(name);
            crate::results::write_atomic_io(&path, text.as_bytes())
                .map_err(|source| ReportError::Read(ReadError::Io { path, source }))
        }
        None => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            Ok(())
        }
    }
}

/// report.json: the findings, and what the terminal and report.html show, ready to render
/// (overview.rs; added in schema 1).
#[derive(serde::Serialize)]
struct WithOverview<'a> {
    #[serde(flatten)]
    findings: ReportJson<'a>,
    overview: &'a Overview,
}

/// DIR/report.json: the findings (findings/mod.rs) for other tools.
pub struct Json;

impl Format for Json {
    fn file(&self) -> Option<&'static str> {
        Some("report.json")
    }

    fn render(&self, v: &View) -> Result<String, ReportError> {
        let r = v.report;
        let json = WithOverview {
            findings: ReportJson { schema: REPORT_JSON_SCHEMA, tracers: &r.findings, survey_check: &r.survey_checks },
            overview: v.overview,
        };
        let mut text = serde_json::to_string_pretty(&json)
            .map_err(|e| ReportError::Read(ReadError::Io { path: r.dir.join("report.json"), source: e.into() }))?;
        text.push('\n');
        Ok(text)
    }
}
