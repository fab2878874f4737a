//! Examples that cannot rot. Every `tracebench` command that README.md and the user
//! guide (the chapters docs/SUMMARY.md lists) show is parsed by the real command line; the ones in
//! fenced blocks without placeholders are run, in page order, in a fresh directory per page, with
//! `-n` and `--repeats` cut down (a run's cost is mostly its fixed start-up, so few runs matter
//! more than small -n); each must exit 0 (a gate: 0 or 1, its verdicts) and print what the page
//! shows under it. Every C and Rust snippet is built, and run where it is a whole plugin.
#[path = "docs/extract.rs"]
mod extract;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use extract::Page;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tracebench"))
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// The words clap sees: `sudo` dropped, placeholders made concrete.
fn parse_words(cmd: &str) -> Vec<String> {
    let mut ws = extract::words(cmd);
    if ws.first().is_some_and(|w| w == "sudo") {
        ws.remove(0);
    }
    // The shell's part of the line (a redirection, a pipe, a second command) is not ours.
    if let Some(i) = ws.iter().position(|w| [">", ">>", "<", "|", "&&", "||", ";", "2>", "2>&1"].contains(&w.as_str()))
    {
        ws.truncate(i);
    }
    if extract::is_synopsis(&ws) {
        ws = extract::concrete(&ws);
    }
    ws
}

#[test]
fn every_documented_command_parses() {
    let (mut bad, mut n) = (Vec::new(), 0);
    for page in extract::pages(&root()) {
        let mut check = |line: usize, mut ws: Vec<String>, what: &str| {
            n += 1;
            if what == "inline" {
                // Prose names a command with some of its options: check they exist.
                ws.push("--help".into());
            }
            if let Err(e) = tracebench::cli::parses(&ws) {
                bad.push(format!("{}:{line}: {what} `{}`: {e}", rel(&page.path), ws.join(" ")));
            }
        };
        for b in extract::blocks(&page.text) {
            for c in extract::commands(&b) {
                let ws = parse_words(&c.cmd);
                // `? 2` under a console command: the page shows bad input being refused
                // (docs/errors.md), which tests/doc_examples.rs runs and checks.
                let refused = c.output.first().is_some_and(|l| l.trim() == "? 2");
                if ws.first().is_some_and(|w| w == "tracebench") && !refused {
                    check(c.line, ws, "block");
                }
            }
        }
        for (line, span) in extract::inline(&page.text) {
            check(line, parse_words(&span), "inline");
        }
    }
    println!("docs: {n} tracebench commands parsed");
    assert!(n > 50, "the README and the guide show {n} commands: the extraction is broken");
    assert!(bad.is_empty(), "documented commands that do not parse:\n{}", bad.join("\n"));
}

/// Tracers `tracebench list` marks available here (`spin:NS[@P:SLOW]` as `spin`).
fn available() -> HashSet<String> {
    let o = Command::new(bin()).arg("list").output().unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let name = w.next()?;
            (w.next()? == "available").then(|| name.split([':', '[']).next().unwrap().to_string())
        })
        .collect()
}

/// Why a runnable-looking command is only parsed here, or None to run it.
fn not_run_here(ws: &[String], avail: &HashSet<String>, cwd: &Path) -> Option<String> {
    if ws.iter().any(|w| w == "--kernel") && !Path::new("/dev/kbench").exists() {
        return Some("--kernel needs /dev/kbench (kbench-module)".into());
    }
    for t in extract::tracers(ws) {
        if t == "all" {
            return Some("--tracer all is every tracer (make bench runs it)".into());
        }
        if let Some(p) = t.strip_prefix("plugin:") {
            let path = p.split(':').next().unwrap();
            if !cwd.join(path).exists() && !root().join(path).exists() {
                return Some(format!("plugin {path} not built (make plugins)"));
            }
        } else if !avail.contains(t.split(':').next().unwrap()) {
            return Some(format!("tracer {t} unavailable here (tracebench list says why)"));
        }
    }
    None
}

/// The command as run: -n, --repeats and --max-repeats cut down, a survey made --quick, plugin paths of the checkout made
/// absolute, and an --out added to measuring commands that have none (two default
/// results/<timestamp> directories can collide within a second).
fn cut_down(cmd: &str, ws: &[String], k: usize) -> String {
    let tracers = extract::tracers(ws);
    let n_cap = if ws.iter().any(|w| w == "singlestep") {
        30
    } else if tracers.iter().any(|t| t.contains("strace")) {
        500
    } else {
        20_000
    };
    let mut toks: Vec<String> = cmd.split(' ').map(String::from).collect();
    for i in 1..toks.len() {
        let cap = match toks[i - 1].trim_start_matches('\'') {
            "-n" | "--iterations" => n_cap,
            "--repeats" | "--max-repeats" => 2,
            _ => continue,
        };
        if let Ok(v) = toks[i].trim_end_matches('\'').parse::<usize>() {
            toks[i] = toks[i].replace(&v.to_string(), &v.min(cap).to_string());
        }
    }
    let mut out = toks.join(" ").replace("plugin:target/", &format!("plugin:{}/target/", root().display()));
    let measures = matches!(ws.get(1).map(String::as_str), Some("run" | "scale" | "sweep" | "survey"));
    // A survey's budget is minutes: its quick mode runs every step in seconds.
    if ws.get(1).is_some_and(|w| w == "survey") && !ws.iter().any(|w| w == "--quick") {
        out.push_str(" --quick");
    }
    if measures && n_cap == 30 && !ws.iter().any(|w| w == "-n" || w == "--iterations") {
        out.push_str(" -n 30"); // stepping's default, 2000 calls, takes minutes
    }
    if measures && !ws.iter().any(|w| w == "-o" || w == "--out") {
        out.push_str(&format!(" --out auto-{k}"));
    }
    out
}

fn norm(w: &str) -> String {
    match w {
        "PASS:" | "FAIL:" => "VERDICT".to_string(),
        "Agrees" | "Departs" | "Cannot" => "SURVEY".to_string(),
        _ => w.to_string(),
    }
}

/// The first two words of a shown line without digits, which a real line must have in that
/// order: the row or claim, not its numbers (they move from run to run). Verdict and survey words
/// count as one kind each, since a cut-down run may settle differently.
fn key(line: &str) -> Vec<String> {
    let mut k: Vec<String> =
        line.split_whitespace().filter(|w| !w.chars().any(|c| c.is_ascii_digit())).take(2).map(norm).collect();
    if k.first().is_some_and(|w| w == "SURVEY" || w == "VERDICT") {
        k.truncate(1); // "Agrees with" / "Departs from", "PASS: 0" / "FAIL: 1"
    }
    k
}

fn shows(output: &str, shown: &str) -> bool {
    let want = key(shown);
    output.lines().any(|l| {
        let l: Vec<String> = l.split_whitespace().map(norm).collect();
        let l = l.join(" ");
        let mut from = 0;
        want.iter().all(|w| match l[from..].find(w.as_str()) {
            Some(i) => {
                from += i + w.len();
                true
            }
            None => false,
        })
    })
}

fn run_page(page: &Page, avail: &HashSet<String>, runs: &mut usize, skipped: &mut Vec<String>) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut bad = Vec::new();
    let bin_dir = bin().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let blocks = extract::blocks(&page.text);
    for b in &blocks {
        if let Some(f) = &b.file {
            std::fs::write(dir.path().join(f), &b.body).unwrap();
        }
    }
    let mut seen = HashSet::new();
    // A `console` block is run whole, its output compared, by tests/doc_examples.rs; here only the
    // ones it skips (`console,ignore`: a shell redirection, a compiler) and the other blocks.
    let checked_there = |b: &&extract::Block| b.lang == "console" && !b.attrs.iter().any(|a| a == "ignore");
    for c in blocks.iter().filter(|b| !checked_there(b)).flat_map(extract::commands) {
        let ws = parse_words(&c.cmd);
        let ours = ws.first().is_some_and(|w| w == "tracebench");
        let at = format!("{}:{}", rel(&page.path), c.line);
        if (!ours && !c.console) || extract::is_synopsis(&extract::words(&c.cmd)) || !seen.insert(c.cmd.clone()) {
            continue;
        }
        if let Some(why) = ours.then(|| not_run_here(&ws, avail, dir.path())).flatten() {
            skipped.push(format!("PARSE-ONLY {at}: `{}`: {why}", c.cmd));
            continue;
        }
        let cmd = if ours { cut_down(c.cmd.trim_start_matches("sudo "), &ws, *runs) } else { c.cmd.clone() };
        *runs += ours as usize;
        let o = Command::new("timeout")
            .args(["300", "sh", "-c", &cmd])
            .current_dir(dir.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        let code = o.status.code().unwrap_or(-1);
        let ok_codes: &[i32] = if ws.get(1).is_some_and(|w| w == "gate") { &[0, 1] } else { &[0] };
        if !ok_codes.contains(&code) {
            bad.push(format!("{at}: `{cmd}` exited {code}:\n{}", tail(&all)));
            continue;
        }
        for s in c.output.iter().filter(|s| !s.trim().is_empty() && s.trim() != "...") {
            if !shows(&all, s) {
                bad.push(format!(
                    "{at}: `{cmd}`: the page shows\n  {s}\nbut the output has no line with {:?}:\n{}",
                    key(s),
                    tail(&all)
                ));
            }
        }
    }
    bad
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

#[test]
fn documented_commands_run_and_print_what_the_page_shows() {
    let avail = available();
    let (mut runs, mut skipped, mut bad) = (0, Vec::new(), Vec::new());
    for page in extract::pages(&root()) {
        bad.extend(run_page(&page, &avail, &mut runs, &mut skipped));
    }
    for s in &skipped {
        println!("{s}");
    }
    println!("docs: {runs} documented commands run, {} only parsed", skipped.len());
    assert!(runs >= 10, "only {runs} documented commands ran");
    assert!(bad.is_empty(), "documented commands that fail or print something else:\n{}", bad.join("\n\n"));
}

/// Every ```c and ```rust block builds; a block that defines a plugin (`tracebench_tracer_v1` or
/// v2) is loaded and measured by tracebench, which is what "runs" means for a plugin.
#[test]
fn c_and_rust_snippets_build_and_plugins_run() {
    let mut n = 0;
    for page in extract::pages(&root()) {
        for b in extract::blocks(&page.text).into_iter().filter(|b| b.lang == "c" || b.lang == "rust") {
            n += 1;
            let at = format!("{}:{}", rel(&page.path), b.line);
            let dir = tempfile::tempdir().unwrap();
            let lib = dir.path().join("libsnippet.so");
            let build = if b.lang == "c" {
                let src = dir.path().join("snippet.c");
                std::fs::write(&src, &b.body).unwrap();
                Command::new("cc")
                    .args(["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", "-I"])
                    .arg(root().join("tracers/include"))
                    .arg("-o")
                    .arg(&lib)
                    .arg(&src)
                    .output()
            } else {
                let src = dir.path().join("snippet.rs");
                std::fs::write(&src, &b.body).unwrap();
                Command::new("rustc")
                    .args(["--edition", "2021", "--crate-type", "cdylib", "-O", "-C", "panic=abort", "-o"])
                    .arg(&lib)
                    .arg(&src)
                    .output()
            }
            .unwrap();
            let err = String::from_utf8_lossy(&build.stderr);
            assert!(build.status.success(), "{at}: the {} snippet does not build:\n{err}", b.lang);
            if !b.body.contains("tracebench_tracer_v") {
                continue;
            }
            let spec = format!("plugin:{},none", lib.display());
            let o = Command::new(bin())
                .args(["run", "-q", "-n", "200", "--tracer", &spec, "--out"])
                .arg(dir.path().join("r"))
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(0), "{at}: the {} plugin snippet does not run:\n{err}", b.lang);
            assert!(dir.path().join("r/summary.csv").exists(), "{at}: no summary.csv");
            println!("{at}: {} plugin built and measured", b.lang);
        }
    }
    assert!(n >= 3, "expected the README's C plugin and the guide's C and Rust plugins, found {n} snippets");
}

#[test]
fn plugin_header_prints_the_header_plugins_are_built_against() {
    let o = Command::new(bin()).arg("plugin-header").output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let want = std::fs::read(root().join("tracers/include/tracebench.h")).unwrap();
    assert_eq!(o.stdout, want, "tracebench plugin-header must print tracers/include/tracebench.h as built");
}

/// The output check can fail: a shown row or claim that the output lacks is caught, and numbers
/// and verdicts that move between runs are not held against it.
#[test]
fn the_output_check_matches_rows_and_claims_not_numbers() {
    let out = "tracer threads    kept\nlw           1    200\nFAIL: 1 regressed\nDeparts from the survey: x";
    assert!(shows(out, "lw           1    2000         0       43.9"));
    assert!(shows(out, "PASS: 0 regressed, 0 improved"));
    assert!(shows(out, "Agrees with the survey: y"));
    assert!(!shows(out, "printf       1    2000"));
    assert!(!shows(out, "lw: single code path"));
    assert_eq!(extract::strip_comment("tracebench list   # every tracer"), "tracebench list");
    assert_eq!(extract::strip_comment("tracebench run -q --label 'a # b'"), "tracebench run -q --label 'a # b'");
}
