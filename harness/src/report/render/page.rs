//! A plain report page (report.md and report.html side by side) for the reports that are not one
//! run's: a sweep's curves (`sweep`) and several runs side by side (`compare`).
use std::fmt::Write;
use std::path::Path;

use crate::report::model::ReportError;
use crate::report::render::{esc, md_cell};
use crate::results::write_atomic_io as write_atomic;

pub struct Page {
    pub title: String,
    /// Sentences, each a claim the data on the page support.
    pub lines: Vec<String>,
    /// (caption, header, rows).
    pub tables: Vec<(String, Vec<String>, Vec<Vec<String>>)>,
    /// Figure names under figures/ (png and svg exist).
    pub figures: Vec<(String, String)>,
    /// One code path each: its flame graph with its table beside it.
    pub cards: Vec<Card>,
}

/// A path's card: `figures/<figure>.svg` (a flame graph) and a table of its top functions.
pub struct Card {
    pub title: String,
    pub figure: String,
    pub caption: String,
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

fn md_table(md: &mut String, head: &[String], rows: &[Vec<String>]) {
    let _ = writeln!(md, "| {} |", head.iter().map(|h| md_cell(h)).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(md, "|{}", "---|".repeat(head.len()));
    for r in rows {
        let _ = writeln!(md, "| {} |", r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | "));
    }
    md.push('\n');
}

fn html_table(html: &mut String, head: &[String], rows: &[Vec<String>]) {
    html.push_str("<table><tr>");
    for h in head {
        let _ = write!(html, "<th>{}</th>", esc(h));
    }
    html.push_str("</tr>\n");
    for r in rows {
        html.push_str("<tr>");
        for c in r {
            let _ = write!(html, "<td>{}</td>", esc(c));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n");
}

impl Page {
    pub fn write(&self, dir: &Path) -> Result<(), ReportError> {
        let mut md = format!("# {}\n\n", self.title);
        let mut html = format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>{t}</title><style>body{{font-family:sans-serif;max-width:1150px;margin:auto;padding:1em}}table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}th{{background:#f3f3f3}}td:first-child,th:first-child{{text-align:left}}img{{max-width:100%}}</style></head><body><h1>{t}</h1>\n",
            t = esc(&self.title)
        );
        for l in &self.lines {
            let _ = writeln!(md, "- {l}");
            let _ = writeln!(html, "<p>{}</p>", esc(l));
        }
        md.push('\n');
        for (cap, head, rows) in &self.tables {
            let _ = writeln!(md, "**{}**\n", md_cell(cap));
            md_table(&mut md, head, rows);
            let _ = write!(html, "<h3>{}</h3>", esc(cap));
            html_table(&mut html, head, rows);
        }
        for c in &self.cards {
            let _ = writeln!(md, "**{}**\n\n![{}](figures/{}.svg)\n", md_cell(&c.title), md_cell(&c.caption), c.figure);
            md_table(&mut md, &c.head, &c.rows);
            let _ = write!(
                html,
                "<div class=\"card\"><h3>{t}</h3><div style=\"display:flex;gap:1em;align-items:flex-start\"><figure style=\"flex:3;margin:0\"><img src=\"figures/{f}.svg\" alt=\"{c}\"><figcaption>{c}</figcaption></figure><div style=\"flex:2\">",
                t = esc(&c.title),
                f = c.figure,
                c = esc(&c.caption)
            );
            html_table(&mut html, &c.head, &c.rows);
            html.push_str("</div></div></div>\n");
        }
        for (name, cap) in &self.figures {
            let _ = writeln!(md, "![{}](figures/{name}.svg)\n", md_cell(cap));
            let _ = writeln!(
                html,
                "<figure><img src=\"figures/{name}.svg\" alt=\"{c}\"><figcaption>{c}</figcaption></figure>",
                c = esc(cap)
            );
        }
        html.push_str("</body></html>\n");
        for (name, text) in [("report.md", &md), ("report.html", &html)] {
            let path = dir.join(name);
            write_atomic(&path, text.as_bytes()).map_err(|source| {
                ReportError::Read(crate::results::read::ReadError::Io { path: path.clone(), source })
            })?;
        }
        Ok(())
    }
}
