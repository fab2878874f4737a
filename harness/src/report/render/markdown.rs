//! report.md: the overview's facts, ranking and tables, the code-path lines, the survey check,
//! the figures (linked from figures/) and the notes.
use crate::report::findings::Report;
use crate::report::model::ReportError;
use crate::report::render::format::{Format, View};
use crate::report::render::md_cell;
use crate::report::render::overview::Overview;
use crate::report::render::path_line::{self, Markup};

/// report.md.
pub struct Markdown;

impl Format for Markdown {
    fn file(&self) -> Option<&'static str> {
        Some("report.md")
    }

    fn render(&self, v: &View) -> Result<String, ReportError> {
        Ok(markdown(v.report, v.overview))
    }
}

/// The code-path lines of every tracer row, in one markup (path_line.rs: the same words everywhere).
fn code_path_lines(r: &Report, markup: Markup) -> Vec<String> {
    r.tracers
        .iter()
        .zip(&r.findings)
        .flat_map(|(t, f)| f.metrics.iter().map(|m| path_line::line(&t.label, m, markup)))
        .collect()
}

/// The header of report.md: title, banner, the run's facts, the ranking, the code paths.
fn markdown_head(r: &Report, o: &Overview) -> String {
    let mut m = String::from("# tracebench report\n\n");
    if let Some(b) = &o.banner {
        m.push_str(&format!("> **{b}**\n\n"));
    }
    m.push_str(&format!("Results directory: `{}`\n\n", r.dir.display()));
    for (k, v) in &o.facts {
        match k.as_str() {
            "command" => m.push_str(&format!("- **{k}**: `{}`\n", v.replace('`', "'"))),
            "all facts" => m.push_str("- **all facts**: [run.json](run.json)\n"),
            _ => m.push_str(&format!("- **{k}**: {v}\n")),
        }
    }
    if !o.ranking.is_empty() {
        m.push_str(&format!("\n## {}\n\n", crate::report::findings::ranking::HEADING));
        m.extend(o.ranking.iter().map(|l| format!("- {l}\n")));
    }
    m.push_str("\n## Code paths (survey section 7.1)\n\n```\n");
    for l in code_path_lines(r, Markup::Markdown) {
        m.push_str(&l);
        m.push('\n');
    }
    m.push_str("```\n\n");
    m
}

fn markdown(r: &Report, o: &Overview) -> String {
    let mut m = markdown_head(r, o);
    if !r.survey_notes.is_empty() {
        m.push_str("## Against the survey\n\n");
        m.extend(r.survey_notes.iter().map(|l| format!("- {l}\n")));
        m.push('\n');
    }
    for t in &o.tables {
        m.push_str(&format!(
            "## {}\n\n| {} |\n|",
            t.title,
            t.head.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")
        ));
        m.push_str(" :--- |");
        m.push_str(&" ---: |".repeat(t.head.len() - 1));
        m.push('\n');
        for row in &t.rows {
            m.push_str(&format!("| {} |\n", row.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")));
        }
        m.push_str(&format!("\n{}\n\n", t.note));
    }
    m.push_str("## Figures\n\n");
    for f in &r.figures {
        m.push_str(&format!(
            "![{}](figures/{}.png)\n\n**{}.** {} ([SVG](figures/{}.svg))\n\n",
            f.title, f.name, f.title, f.caption, f.name
        ));
    }
    if !r.notes.is_empty() {
        m.push_str("## Notes\n\n");
        m.extend(r.notes.iter().map(|n| format!("- {n}\n")));
    }
    m
}
