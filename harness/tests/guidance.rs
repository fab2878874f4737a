//! End to end: usage errors that point the way (one line, exit 2), the up-front disk
//! check on a small tmpfs, and the report's ranking, tables (CSV, LaTeX) and figure options on a
//! synthetic results directory.
mod common;
use std::path::{Path, PathBuf};

use common::*;

/// Runs tracebench with `args`; asserts exit 2 and one line on stderr; returns the line.
fn one_line(args: &[&str]) -> String {
    let o = tb().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line, got: {err}");
    err
}

#[test]
fn usage_errors_are_one_line_and_point_to_the_fix() {
    let e = one_line(&["run", "-t", "lw", "--vary", "subbuf-size=4k,8k"]);
    assert!(e.contains("`run` has no --vary: it is an option of `tracebench sweep`"), "{e}");
    let e = one_line(&["run", "-t", "lw", "--threshold", "5%"]);
    assert!(e.contains("it is an option of `tracebench gate`"), "{e}");
    let e = one_line(&["run", "-t", "lw", "--thread", "2"]);
    assert!(e.contains("did you mean '--threads'?") && e.contains("`tracebench run --help`"), "{e}");
    let e = one_line(&["run"]);
    assert!(e.contains("--tracer"), "{e}");
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let out = out.to_str().unwrap();
    let e = one_line(&["run", "-t", "lttng-usst", "-q", "-o", out]);
    assert!(e.contains("unknown tracer 'lttng-usst': did you mean lttng-ust?"), "{e}");
    let e = one_line(&["run", "-t", "plugin:/nonexistent/libmine.so", "-q", "-o", out]);
    assert!(e.contains("cc -O2 -fPIC -shared -I tracers/include -o /nonexistent/libmine.so"), "{e}");
    assert!(!Path::new(out).exists(), "nothing written for bad input");
    // --help still prints in full, exit 0.
    let o = tb().args(["run", "--help"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).lines().count() > 10);
}

/// A tmpfs of 3 MiB mounted in a private temp dir, unmounted on drop.
struct SmallFs {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl SmallFs {
    fn mount() -> Result<SmallFs, String> {
        if unsafe { libc::geteuid() } != 0 {
            return Err("needs root to mount a tmpfs".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = dir.path().join("mnt");
        std::fs::create_dir(&path).map_err(|e| e.to_string())?;
        let c = |s: &str| std::ffi::CString::new(s).unwrap();
        let target = c(path.to_str().unwrap());
        // SAFETY: valid NUL-terminated strings.
        let rc = unsafe {
            libc::mount(c("tmpfs").as_ptr(), target.as_ptr(), c("tmpfs").as_ptr(), 0, c("size=3m").as_ptr().cast())
        };
        if rc != 0 {
            return Err(format!("mount tmpfs: {}", std::io::Error::last_os_error()));
        }
        Ok(SmallFs { _dir: dir, path })
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let p = std::ffi::CString::new(self.path.to_str().unwrap()).unwrap();
        // SAFETY: a path we mounted.
        unsafe { libc::umount2(p.as_ptr(), libc::MNT_DETACH) };
    }
}

#[test]
fn a_run_that_cannot_fit_is_refused_up_front_and_one_that_barely_fits_is_warned() {
    let fs = match SmallFs::mount() {
        Ok(f) => f,
        Err(why) => {
            println!("SKIP a_run_that_cannot_fit_is_refused_up_front: {why}");
            return;
        }
    };
    let out = fs.path.join("big");
    let t0 = std::time::Instant::now();
    let e = one_line(&[
        "run",
        "-t",
        "none",
        "-n",
        "200000",
        "--counters",
        "page-faults",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(e.contains("3.0 MiB free") && e.contains("200000 rows"), "{e}");
    assert!(e.contains("free space, lower -n/--repeats/--threads, or pick another --out"), "the fix is said: {e}");
    assert!(t0.elapsed().as_secs_f64() < 30.0);
    assert_eq!(std::fs::read_dir(&fs.path).unwrap().count(), 0, "nothing written");
    // About 2.8 MiB estimated (t_ns and the sentinel rows included) against 3 MiB: it runs, with a warning.
    let out = fs.path.join("close");
    let args = ["run", "-t", "none", "-n", "25000", "--counters", "page-faults", "-q", "-o", out.to_str().unwrap()];
    let o = tb().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("warning: --out") && err.contains("only 3.0 MiB free"), "{err}");
    assert_eq!(Table::read(&out.join("none").join("events.csv")).rows.len(), 25000);
}

/// A synthetic run (none, lw, spin, printf at 1, 2, 4 threads) with three repetitions per
/// tracer written over its repetitions.csv: lw and spin swap places in one repetition.
fn synthetic_with_repetitions() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("r");
    let o = tb().arg("report").arg(&dir).args(["--synthetic", "4x3000"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = Table::read(&dir.join("summary.csv"));
    let reps: [(&str, [f64; 3]); 4] = [
        ("none", [33.0, 33.0, 33.0]),
        ("lw", [170.0, 60.0, 65.0]),
        ("spin:100@64:1000", [150.0, 150.0, 140.0]),
        ("printf", [250.0, 260.0, 255.0]),
    ];
    let mut text = format!("{},repetition,{}\n", s.header[..2].join(","), s.header[2..].join(","));
    for row in &s.rows {
        let means = reps.iter().find(|r| r.0 == row[0]).unwrap().1;
        for (k, m) in means.iter().enumerate() {
            let mut cells = row.clone();
            cells[s.col("mean_ns")] = format!("{m}");
            text.push_str(&format!("{},{k},{}\n", cells[..2].join(","), cells[2..].join(",")));
        }
    }
    std::fs::write(dir.join("repetitions.csv"), text).unwrap();
    (d, dir)
}

#[test]
fn the_report_ranks_by_net_cost_and_names_the_undecided_pairs() {
    let (_d, dir) = synthetic_with_repetitions();
    // The terminal's table: net cost with its range, in rank order; the split pair named.
    let o = tb().arg("report").arg(&dir).output().unwrap();
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lw = table.lines().find(|l| l.contains(" lw ")).unwrap_or_else(|| panic!("{table}"));
    assert!(lw.trim_start().starts_with("1  lw") && lw.contains("(27.0–137)"), "{table}");
    // Three rounds are too few for any 99.5% interval: every pair is open, with the rounds that
    // would decide it.
    assert!(table.contains("pair(s) undecided, about ") && table.contains("lw/spin:100@64:1000"), "{table}");
    // The default columns of the paper's files: tracer, mean, STD, p50, p90, p99, discarded.
    let csv = Table::read(&dir.join("tables/table4_latency.csv"));
    assert_eq!(csv.header, ["Tracer", "Average (ns)", "STD (ns)", "p50 (ns)", "p90 (ns)", "p99 (ns)", "Discarded"]);
    let all = "tracer,threads,kept,discarded,mean,std,p50,p90,p99,min,max,above-none,repetitions,survey";
    let o = tb().arg("report").arg(&dir).args(["--explain", "--columns", all]).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let rank = md.lines().find(|l| l.starts_with("- Ranked by mean cost per call above the `none` floor")).unwrap();
    assert!(stdout.contains(&rank[2..]), "printed too");
    // Cheapest first, none not ranked, the spread net of none's repetition of the same index.
    let (lw, spin, printf) = (rank.find("lw ").unwrap(), rank.find("spin:").unwrap(), rank.find("printf ").unwrap());
    assert!(lw < spin && spin < printf, "{rank}");
    assert!(rank.contains("27.0 to 137 over 3 repetitions"), "lw: 60-33 to 170-33: {rank}");
    assert!(!rank.contains("none "), "{rank}");
    let undecided = md.lines().find(|l| l.starts_with("- Not decided against each other")).unwrap();
    assert!(
        undecided.contains("lw and spin:100@64:1000 (spin:100@64:1000 against lw: ")
            && undecided.contains("over 3 interleaved rounds, too few for a 99.5% interval"),
        "{undecided}"
    );
    assert!(undecided.contains("lw and printf (printf against lw: "), "{undecided}");
    // The tables follow the ranking's order, and come as CSV and LaTeX.
    let csv = Table::read(&dir.join("tables/table4_latency.csv"));
    let order: Vec<&str> = csv.rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(order, ["none", "lw", "spin:100@64:1000", "printf"]);
    assert!(csv.header.contains(&"Above none (ns)".to_string()));
    let tex = std::fs::read_to_string(dir.join("tables/table4_latency.tex")).unwrap();
    assert!(
        tex.contains("\\begin{tabular}{lrrrrrrrrrrrrr}") && tex.contains("\\toprule") && tex.contains("\\bottomrule"),
        "{tex}"
    );
    // lw and spin are not ordered against each other (three rounds): a dagger marks them.
    assert!(tex.contains("\nlw$^\\dagger$ & 1 & "), "{tex}");
    assert!(tex.contains(" -- \\\\") || !tex.contains('–'), "dashes as LaTeX dashes: {tex}");
    assert_eq!(tex.matches(" \\\\\n").count(), 5, "a header and four rows: {tex}");
    assert!(dir.join("tables/scaling.tex").is_file() && dir.join("tables/scaling.csv").is_file());
    // No horizontally scrolling box: the full sentences fold into each tracer's card.
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<summary>Full sentences</summary>") && !html.contains("overflow-x:auto"));
    let o = tb().arg("report").arg(&dir).args(["--columns", "mean,avg"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--columns: no column 'avg'"));
}

#[test]
fn without_none_the_report_ranks_raw_means_and_asks_for_none() {
    let (_d, dir) = synthetic_with_repetitions();
    for f in ["summary.csv", "repetitions.csv"] {
        let t = std::fs::read_to_string(dir.join(f)).unwrap();
        let kept: String = t.lines().filter(|l| !l.starts_with("none,")).map(|l| format!("{l}\n")).collect();
        std::fs::write(dir.join(f), kept).unwrap();
    }
    let mut run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    run["tracers"].as_array_mut().unwrap().retain(|t| t["name"] != "none");
    std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
    std::fs::remove_dir_all(dir.join("none")).unwrap();
    let o = tb().arg("report").arg(&dir).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("- Ranked by raw mean latency per call (floor included)"), "{md}");
    assert!(md.contains("times lw (raw means))"), "{md}");
    assert!(md.contains("Add `none` to --tracer"), "{md}");
    assert!(!Table::read(&dir.join("tables/table4_latency.csv")).header.contains(&"Above none (ns)".to_string()));
}

#[test]
fn figure_size_dpi_and_pdf() {
    let (_d, dir) = synthetic_with_repetitions();
    let o = tb().arg("report").arg(&dir).args(["--figure-size", "3.5x2.5", "--dpi", "200", "--pdf"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let png = std::fs::read(dir.join("figures/latency_cdf.png")).unwrap();
    let dim = |k: usize| u32::from_be_bytes(png[k..k + 4].try_into().unwrap());
    assert_eq!((dim(16), dim(20)), (700, 500));
    for f in ["latency_cdf", "latency_boxes", "scalability", "latency_histograms"] {
        let pdf = std::fs::read(dir.join(format!("figures/{f}.pdf"))).unwrap();
        assert!(pdf.starts_with(b"%PDF"), "{f}");
        let svg = std::fs::read_to_string(dir.join(format!("figures/{f}.svg"))).unwrap();
        assert!(!svg.contains("<text") && !svg.contains("font-family"), "{f}: text as outlines");
    }
    // Error bars: three repetitions at each thread count give the scale figure its spread.
    let svg = std::fs::read_to_string(dir.join("figures/scalability.svg")).unwrap();
    assert!(svg.len() > 1000);
    // --no-titles: the same figures less their titles' glyphs.
    let o = tb().arg("report").arg(&dir).args(["--figure-size", "3.5x2.5", "--no-titles"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bare = std::fs::read_to_string(dir.join("figures/scalability.svg")).unwrap();
    let glyphs = |s: &str| s.matches("<path").count();
    assert!(glyphs(&bare) < glyphs(&svg), "no title drawn: {} paths against {}", glyphs(&bare), glyphs(&svg));
    let e = one_line(&["report", dir.to_str().unwrap(), "--figure-size", "650x400"]);
    assert!(e.contains("each side must be 1 to 40 inches"), "{e}");
}
