//! Figures and tables as a paper prints them: every figure of a synthetic run's
//! report, drawn at a column's 3.3 x 2.5 in and a page's 7 x 4.5 in, has every text at 7 pt or
//! more and inside the page, measured from the SVG as plotters drew it (NAME.text.svg, written
//! under TRACEBENCH_FIGURE_TEXT_SVG); every LaTeX table compiles in a two-column article
//! without an overfull box (with pdflatex, when installed).
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// A synthetic run of ten tracers at 1, 2 and 4 threads with hardware counters, reported with
/// `args`.
fn report(args: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("r");
    let o = tb()
        .arg("report")
        .arg(&dir)
        .args(["--synthetic", "10x20000", "--synthetic-counters"])
        .args(args)
        .env("TRACEBENCH_FIGURE_TEXT_SVG", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (d, dir)
}

fn attr(tag: &str, k: &str) -> Option<String> {
    let i = tag.find(&format!(" {k}=\""))? + k.len() + 3;
    Some(tag[i..i + tag[i..].find('"')?].to_string())
}

/// Each text of `svg` as (text, points, left, right, top, bottom) in logical pixels; width
/// estimated as 0.6 x font size a character.
fn texts(svg: &str, per_inch: f64) -> Vec<(String, f64, [f64; 4])> {
    let mut out = Vec::new();
    for t in svg.split("<text").skip(1) {
        let (Some(end), Some(close)) = (t.find('>'), t.find("</text>")) else { continue };
        let (tag, body) = (&t[..end], t[end + 1..close].trim());
        if body.is_empty() {
            continue;
        }
        let num = |k| attr(tag, k).and_then(|v| v.parse::<f64>().ok());
        let (Some(x), Some(y), Some(fs)) = (num("x"), num("y"), num("font-size")) else { continue };
        let w = 0.6 * fs * body.chars().count() as f64;
        let x0 = match attr(tag, "text-anchor").as_deref() {
            Some("middle") => x - w / 2.0,
            Some("end") => x - w,
            _ => x,
        };
        let y0 = match attr(tag, "dy").as_deref() {
            Some("0.76em") => y,
            Some("0.5ex") => y - fs / 2.0,
            _ => y - fs,
        };
        let mut b = [x0, x0 + w, y0, y0 + fs];
        if attr(tag, "transform").is_some_and(|t| t.starts_with("rotate(270") || t.starts_with("rotate(90")) {
            // Turned a quarter about (x, y): the run of the text is vertical.
            b = [x - fs / 2.0, x + fs / 2.0, y - (b[1] - x), y + (x - b[0])];
        }
        out.push((body.to_string(), fs * 72.0 / per_inch, b));
    }
    out
}

fn check_figures(dir: &Path, width_in: f64, label: &str) -> Vec<(String, f64)> {
    let mut smallest = Vec::new();
    let mut bad = Vec::new();
    let fdir = dir.join("figures");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&fdir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".text.svg"))
        .collect();
    names.sort();
    assert!(names.len() >= 7, "every figure of the run: {names:?}");
    for p in names {
        let svg = std::fs::read_to_string(&p).unwrap();
        let head = &svg[svg.find("<svg").unwrap()..];
        let head = &head[..head.find('>').unwrap()];
        let (w, h) = (
            attr(head, "width").unwrap().parse::<f64>().unwrap(),
            attr(head, "height").unwrap().parse::<f64>().unwrap(),
        );
        let per_inch = w / width_in;
        let fig = p.file_name().unwrap().to_string_lossy().trim_end_matches(".text.svg").to_string();
        let ts = texts(&svg, per_inch);
        assert!(!ts.is_empty(), "{fig}: no text");
        let mut min = f64::INFINITY;
        for (text, pt, b) in &ts {
            min = min.min(*pt);
            if *pt < 7.0 - 1e-6 {
                bad.push(format!("{label} {fig}: '{text}' is {pt:.2} pt (7 pt at least)"));
            }
            if b[0] < -0.5 || b[1] > w + 0.5 || b[2] < -0.5 || b[3] > h + 0.5 {
                bad.push(format!("{label} {fig}: '{text}' ({pt:.1} pt) lies outside the {w}x{h} page: {b:?}"));
            }
        }
        let caption = fdir.join(format!("{fig}.caption.txt"));
        if !caption.is_file() {
            bad.push(format!("{label} {fig}: no {}", caption.display()));
        }
        smallest.push((fig, min));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    smallest
}

#[test]
fn every_figure_prints_its_text_at_7_pt_or_more_inside_the_page() {
    for (size, w) in [("3.3x2.5", 3.3), ("7x4.5", 7.0)] {
        for titles in [true, false] {
            let mut args = vec!["--figure-size", size];
            if !titles {
                args.push("--no-titles");
            }
            let (_d, dir) = report(&args);
            let label = format!("{size}{}", if titles { "" } else { " --no-titles" });
            for (fig, min) in check_figures(&dir, w, &label) {
                println!("{label}: {fig}: smallest text {min:.2} pt");
            }
            let box_caption = std::fs::read_to_string(dir.join("figures/latency_boxes.caption.txt")).unwrap();
            assert!(box_caption.contains("5th and 95th"), "{box_caption}");
            let bars = std::fs::read_to_string(dir.join("figures/scalability.caption.txt")).unwrap();
            assert!(bars.contains("error bars span the lowest to the highest repetition's mean"), "{bars}");
        }
    }
}

#[test]
fn every_table_fits_a_two_column_article() {
    let name = "every_table_fits_a_two_column_article";
    let (_d, dir) = report(&[
        "--columns",
        "tracer,threads,mean,std,p50,p90,p99,discarded,scaling.tracer,scaling.1,scaling.4,scaling.growth",
    ]);
    let tables = dir.join("tables");
    // --columns chose the scaling table's columns too.
    let scaling = std::fs::read_to_string(tables.join("scaling.csv")).unwrap();
    assert_eq!(scaling.lines().next().unwrap(), "Tracer,1 thr. (ns),4 thr. (ns),Growth", "{scaling}");
    let tex = std::fs::read_to_string(tables.join("scaling.tex")).unwrap();
    assert!(tex.contains("$\\times$") && !tex.contains(" x0.") && !tex.contains(" x1."), "{tex}");
    let latency = std::fs::read_to_string(tables.join("table4_latency.tex")).unwrap();
    assert!(latency.contains("p99 (ns)") && latency.contains("$^\\dagger$"), "units and marks: {latency}");
    if Command::new("sh").args(["-c", "command -v pdflatex"]).output().map(|o| !o.status.success()).unwrap_or(true) {
        println!("SKIP {name}: pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)");
        eprintln!("SKIP {name}: pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)");
        return;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&tables)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "tex"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    let work = tempfile::tempdir().unwrap();
    let mut bad = Vec::new();
    for f in files {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        let doc = format!(
            "\\documentclass[twocolumn]{{article}}\n\\usepackage{{booktabs}}\n\\usepackage{{graphicx}}\n\\begin{{document}}\n\\begin{{table}}[t]\n\\input{{{}}}\n\\caption{{A table.}}\n\\end{{table}}\nText.\n\\end{{document}}\n",
            f.display()
        );
        std::fs::write(work.path().join(format!("{stem}.tex")), doc).unwrap();
        let o = Command::new("pdflatex")
            .args(["-interaction=nonstopmode", "-halt-on-error", &format!("{stem}.tex")])
            .current_dir(work.path())
            .output()
            .unwrap();
        let log = std::fs::read_to_string(work.path().join(format!("{stem}.log"))).unwrap_or_default();
        if !o.status.success() {
            bad.push(format!("{stem}.tex does not compile:\n{}", String::from_utf8_lossy(&o.stdout)));
        }
        for l in log.lines().filter(|l| l.starts_with("Overfull")) {
            bad.push(format!("{stem}.tex: {l}"));
        }
        println!("{stem}.tex: compiled, {} overfull box(es)", log.matches("Overfull").count());
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
