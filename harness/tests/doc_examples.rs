//! Console examples are tests. Every ```console block of README.md and of the user
//! guide's chapters is run by trycmd against the built binary, block after block in one fresh
//! directory per page (so a page's `report demo` reads the `run -o demo` above it, and results
//! never land in the checkout), and its whole output is compared with what the page shows.
//!
//! The page shows real figures; what varies from run to run is redacted here before trycmd
//! compares, so that the words and the lines stay checked and a sentence the tool no longer prints
//! fails:
//! - every figure (a word that starts with a digit: 18.6, 20000, 0.19%, x1.48, +11.9%, 4k), with
//!   its sign, its unit (ns, µs, ms, s) and the spaces around it (column widths follow the
//!   figures), becomes trycmd's `[..]`;
//! - in `report`'s table, a row is checked up to its p99 column: the paths and tail columns say
//!   what this run's analysis found (a path or none, what sets the tail), which a rerun can change;
//!   for the same reason the header's space before `tail` and the rule under it may widen, and
//!   the legend line that two paths of one period bring (`paths: PERIOD@N ...`) may follow the
//!   `net:` line whether or not the page shows it;
//! - trycmd's own marks, written in the page: `...` alone on a line for lines cut (a warning this
//!   machine prints, rows not shown), `[..]` inside a line for words cut, `? 1` for a command's
//!   exit status when it is not 0 (a gate's regression).
//!
//! A block that cannot run here is written ```console,ignore and followed by a line
//! `*Not run by the example test: REASON*` that the reader sees; this test prints `SKIP` with the
//! reason for each, and fails on an ignored block without one. A block whose commands need a shell
//! (a redirection, a pipe) or a program other than tracebench must be ignored so: trycmd runs one
//! program per line (harness/tests/docs.rs still runs those blocks through `sh`).
//!
//! After a deliberate change of output, rerun `make docs-examples` (the README's tour, from one
//! run) or paste the new output into the page; trycmd's diff names the page line.
mod common;
// docs.rs uses the rest of the extraction (the commands of a block).
#[allow(dead_code)]
#[path = "docs/extract.rs"]
mod extract;

use std::path::{Path, PathBuf};

const REASON: &str = "Not run by the example test:";
/// The report table's legend line for two paths of one period (report/render/terminal.rs).
const LEGEND: &str = "paths: PERIOD@N";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn is_unit(w: &str) -> bool {
    matches!(w, "ns" | "µs" | "us" | "ms" | "s")
}

/// Every figure of one shown line, with its sign, unit and surrounding spaces, as `[..]`.
fn redact(line: &str) -> String {
    let c: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let word_char = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        // A sign or a ratio's x sticks to the figure (+11.9%, x1.48).
        let signed = matches!(c[i], '+' | '-' | '−' | '±' | 'x') && c.get(i + 1).is_some_and(|d| d.is_ascii_digit());
        let starts = (c[i].is_ascii_digit() || signed) && (i == 0 || !word_char(c[i - 1]));
        if !starts {
            out.push(c[i]);
            i += 1;
            continue;
        }
        // The figure: digits, then anything that sticks to them (4k, 1.2e3, 20,000, 0x1f).
        i += 1;
        while i < c.len()
            && (word_char(c[i]) || ((c[i] == '.' || c[i] == ',') && c.get(i + 1).is_some_and(|d| d.is_ascii_digit())))
        {
            i += 1;
        }
        // Its unit, which changes with the figure's size (996 ns, 1.30 µs).
        let mut j = i;
        while j < c.len() && c[j] == ' ' {
            j += 1;
        }
        let mut k = j;
        while k < c.len() && word_char(c[k]) || k < c.len() && c[k] == 'µ' {
            k += 1;
        }
        if k > j && is_unit(&c[j..k].iter().collect::<String>()) {
            i = k;
        }
        // Spaces before and after: column widths follow the figures.
        while out.ends_with(' ') {
            out.pop();
        }
        while i < c.len() && c[i] == ' ' {
            i += 1;
        }
        if !out.ends_with("[..]") {
            out.push_str("[..]");
        }
    }
    out
}

/// `report`'s table header and its rule widen with the paths column (a run that finds two paths).
fn widths(l: &str) -> String {
    // The header's columns are as wide as their widest value (a range over repetitions widens the
    // net column, a long label the tracer column): every gap of two or more spaces may change.
    if let Some(rest) = l.strip_prefix("#  tracer") {
        return format!("#  tracer{}", gaps(rest));
    }
    if l.len() > 3 && l.chars().all(|c| c == '-') {
        return "---[..]".into();
    }
    l.to_string()
}

/// Each run of two or more spaces (a gap between table columns) as `[..]`.
fn gaps(s: &str) -> String {
    let mut out = String::new();
    let mut spaces = 0;
    for c in s.chars() {
        if c == ' ' {
            spaces += 1;
            continue;
        }
        match spaces {
            0 => {}
            1 => out.push(' '),
            _ => out.push_str("[..]"),
        }
        spaces = 0;
        out.push(c);
    }
    out.replace("[..][..]", "[..]")
}

/// A block's text as trycmd reads it: commands and trycmd's marks as they are, output redacted,
/// and a blank line after each command's output (trycmd drops the last newline of what a page
/// shows, and the tool's output ends with one).
fn expected(body: &str) -> String {
    let mut out = String::new();
    let mut paths_col = None;
    let lines: Vec<&str> = body.lines().collect();
    for (i, &l) in lines.iter().enumerate() {
        if l.starts_with("$ ") && !out.is_empty() {
            out.push('\n');
        }
        let mark = l.starts_with("$ ") || l.starts_with("> ") || l.starts_with("? ") || l == "...";
        let shown = if mark {
            paths_col = None;
            l.to_string()
        } else {
            if l.starts_with("#  tracer") {
                paths_col = l.find("paths:");
            }
            let row = l.starts_with(|c: char| c.is_ascii_digit()) || l.starts_with('—');
            match paths_col {
                Some(at) if row && l.chars().count() > at => {
                    let head = gaps(&redact(&l.chars().take(at).collect::<String>()));
                    if head.ends_with("[..]") {
                        head
                    } else {
                        head + "[..]"
                    }
                }
                _ => widths(&redact(l)),
            }
        };
        out.push_str(&shown);
        out.push('\n');
        // The legend of two paths of one period (`1620@435`) comes with the paths column, which
        // is not checked: after the table's `net:` line it may come or not.
        let next = lines.get(i + 1).copied().unwrap_or("");
        if l.starts_with("net: mean ns/call") && next != "..." && !next.starts_with(LEGEND) {
            out.push_str("...\n");
        }
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// Why a block's commands cannot be run by trycmd, or None.
fn needs_a_shell(body: &str) -> Option<String> {
    for l in body.lines().filter_map(|l| l.strip_prefix("$ ")) {
        let ws = extract::words(l);
        if ws.first().is_none_or(|w| w != "tracebench") {
            return Some(format!("`{l}` runs another program than tracebench"));
        }
        if let Some(op) = ws.iter().find(|w| ["|", ">", ">>", "<", "&&", "||", ";", "2>&1"].contains(&w.as_str())) {
            return Some(format!("`{l}` needs a shell (`{op}`)"));
        }
    }
    None
}

/// The reason shown under an ignored block: the first non-blank line after its closing fence.
fn skip_reason(text: &str, b: &extract::Block) -> Option<String> {
    let close = b.line - 1 + b.body.lines().count(); // 0-based index of the closing fence
    let next = text.lines().skip(close + 1).find(|l| !l.trim().is_empty())?;
    let t = next.trim().trim_matches(|c| c == '*' || c == '_');
    t.strip_prefix(REASON).map(|r| r.trim().to_string()).filter(|r| !r.is_empty())
}

struct PageCase {
    rel: String,
    trycmd: String,
    skips: Vec<String>,
    bad: Vec<String>,
}

fn case_of(page: &extract::Page) -> PageCase {
    let rel = page.path.strip_prefix(root()).unwrap().display().to_string();
    let (mut trycmd, mut skips, mut bad) = (String::new(), Vec::new(), Vec::new());
    for b in extract::blocks(&page.text).into_iter().filter(|b| b.lang == "console") {
        let at = format!("{rel}:{}", b.line - 1);
        if b.attrs.iter().any(|a| a == "ignore") {
            match skip_reason(&page.text, &b) {
                Some(why) => skips.push(format!("SKIP console example {at}: {why}")),
                None => bad.push(format!("{at}: a console,ignore block needs a line `*{REASON} REASON*` under it")),
            }
            continue;
        }
        if let Some(why) = needs_a_shell(&b.body) {
            bad.push(format!("{at}: {why}: mark the block console,ignore with a `*{REASON} ...*` line"));
            continue;
        }
        // Blank lines keep the page's line numbers in trycmd's messages (fence at the same line).
        let fence = b.line - 1;
        let have = trycmd.lines().count();
        trycmd.push_str(&"\n".repeat(fence.saturating_sub(have + 1)));
        trycmd.push_str("```console\n");
        trycmd.push_str(&expected(&b.body));
        trycmd.push_str("```\n");
    }
    PageCase { rel, trycmd, skips, bad }
}

#[test]
fn console_examples_print_what_the_pages_show() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_tracebench"));
    let tmp = tempfile::tempdir().unwrap();
    let (mut failed, mut ran, mut bad) = (Vec::new(), 0, Vec::new());
    for page in extract::pages(&root()) {
        let case = case_of(&page);
        for s in &case.skips {
            println!("{s}");
        }
        bad.extend(case.bad.iter().cloned());
        if case.trycmd.trim().is_empty() {
            continue;
        }
        let blocks = case.trycmd.matches("```console").count();
        ran += blocks;
        // A page's examples are real runs, and what a run's analysis finds can differ in a rare
        // run, so the page is held to a rate, as claims on real runs are: it must print what it
        // shows in most fresh runs (`in_most_runs`: a page that differs in 1 run of 10 fails about
        // 1 time in 120, one that differs in half its runs fails half the time). A changed
        // sentence differs every time.
        let mut k = 0;
        let shown = common::in_most_runs(&format!("doc examples: {}", case.rel), || {
            k += 1;
            match page_prints_what_it_shows(&tmp, &case, k, &bin, blocks) {
                true => Ok(()),
                false => Err("it differed; trycmd's diff above".into()),
            }
        });
        if shown.is_err() {
            failed.push(case.rel);
        }
    }
    println!("doc examples: {ran} console blocks run");
    assert!(bad.is_empty(), "console blocks that cannot be checked:\n{}", bad.join("\n"));
    assert!(ran >= 8, "only {ran} console blocks ran: the extraction is broken");
    assert!(failed.is_empty(), "pages whose console examples print something else (trycmd's diff above): {failed:?}");
}

/// Run `k` of a page's examples through trycmd, in a fresh directory: whether the output was what
/// the page shows.
fn page_prints_what_it_shows(tmp: &tempfile::TempDir, case: &PageCase, k: u32, bin: &Path, blocks: usize) -> bool {
    // One case per page, run on its own: pages measure, so they do not run side by side, and
    // page.in/ is the working directory (trycmd's cwd for page.trycmd) where results land.
    let stem = format!("{}_{k}", case.rel.replace(['/', '.'], "_"));
    let file = tmp.path().join(format!("{stem}.trycmd"));
    std::fs::write(&file, &case.trycmd).unwrap();
    std::fs::create_dir(tmp.path().join(format!("{stem}.in"))).unwrap();
    println!("doc examples: {} ({blocks} blocks) in {}", case.rel, file.display());
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        trycmd::TestCases::new()
            .register_bin("tracebench", bin)
            .timeout(std::time::Duration::from_secs(300))
            .case(&file)
            .run();
    }))
    .is_ok()
}

/// The redaction keeps words and lines and drops only figures: a changed sentence still fails.
#[test]
fn redaction_drops_figures_not_words() {
    assert_eq!(redact("lw           1   20000         0       44.9"), "lw[..]");
    assert_eq!(redact("clock Tsc: resolution 10.0 ns, mean 18.2 ns"), "clock Tsc: resolution[..], mean[..]");
    assert_eq!(redact("slow path every 810 events (+1.30 µs, 0.12%)"), "slow path every[..]events ([..],[..]%)");
    assert_eq!(redact("printf at 1 thread(s), x1.48, p99 ns"), "printf at[..]thread(s),[..], p99 ns");
    assert_eq!(redact("spin:200 change +11.9% [+7.5%, +14.9%]"), "spin:[..]change[..]% [[..]%,[..]%]");
    assert_eq!(redact("tracebench: 0.1.0 (703abe718d89)"), "tracebench:[..]([..])");
    let row = "1  lw                25.1    40.1    50.1  fast path only               84% fast spread";
    let head = "#  tracer  net ns (range)  p50 ns  p99 ns  paths: every (extra, calls)  tail";
    assert_eq!(expected(&format!("$ tracebench report demo\n{head}\n{row}\n")).lines().nth(2), Some("[..]lw[..]"));
    assert_eq!(needs_a_shell("$ tracebench plugin-header > tracebench.h\n").map(|s| s.contains("`>`")), Some(true));
    assert!(needs_a_shell("$ cc -o x x.c\n").is_some());
    assert!(needs_a_shell("$ tracebench list\nnone\n").is_none());
}

#[test]
fn the_two_paths_legend_may_follow_the_net_line() {
    // make test, twice in three runs: lttng-ust showed 1620@a and 1620@b, and the legend line
    // this brings was not on docs/choosing.md's page.
    let net = "net: mean ns/call above none (18.6 ns), range over repetitions";
    let page = format!("$ tracebench report demo\n{net}\norder: decided, lw < lttng-ust\n");
    let want: Vec<String> = expected(&page).lines().map(String::from).collect();
    assert_eq!(want[2..4], ["...", "order: decided, lw < lttng-ust"], "{want:?}");
    // A page that shows the legend, or cuts lines there itself, gets no second mark.
    for after in [format!("{LEGEND} where two paths of one tracer share a period"), "...".into()] {
        let page = format!("$ tracebench report demo\n{net}\n{after}\norder: decided\n");
        assert_eq!(expected(&page).matches("...\n").count(), usize::from(after == "..."), "{page}");
    }
}
