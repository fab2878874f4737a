//! Opens report.html in headless Chromium, as a person would, 1280 px wide: every figure must
//! load (naturalWidth > 0) with no console or load errors, and no element may reach past the
//! viewport's right edge (no horizontal scroll). The screenshot is kept in
//! target/report-browser-test/report.png, and with the page in `$TRACEBENCH_TEST_ARTIFACTS` when
//! set. Skips, saying so, when chromium is not installed.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::report::*;

/// Injected first in <head>: records errors (script, resource load, console.error) and, on
/// load, the state of every image, into a <pre id="tb-check"> that --dump-dom prints.
const CHECK_JS: &str = r#"<script>
window.__tbErrors = [];
window.addEventListener('error', function (e) {
  var t = e.target && e.target.tagName ? e.target.tagName + ' failed to load' : (e.message || 'error');
  window.__tbErrors.push(t);
}, true);
(function () { var ce = console.error; console.error = function () {
  window.__tbErrors.push('console.error: ' + Array.prototype.join.call(arguments, ' ')); ce.apply(console, arguments); }; })();
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var r = { images: imgs.length,
    broken: imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); }).map(function (i) { return i.alt; }),
    widths: imgs.map(function (i) { return i.naturalWidth; }), errors: window.__tbErrors,
    viewport: document.documentElement.clientWidth, scroll: document.documentElement.scrollWidth,
    overflow: Array.prototype.slice.call(document.body.querySelectorAll('*')).filter(function (el) {
      var b = el.getBoundingClientRect();
      return b.width > 0 && b.right > document.documentElement.clientWidth + 1;
    }).map(function (el) { return el.tagName + (el.id ? '#' + el.id : '') + ' ' + (el.textContent || '').slice(0, 40); }) };
  var p = document.createElement('pre'); p.id = 'tb-check'; p.textContent = JSON.stringify(r);
  document.body.appendChild(p);
});
</script>"#;

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|n| {
        std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(n)).find(|p| p.is_file())
    })
}

/// Where to keep the screenshot and its page: only where the person running the test asks
/// (`TRACEBENCH_TEST_ARTIFACTS=DIR`); otherwise they stay in the test's own temp directory.
fn artifacts() -> Option<PathBuf> {
    std::env::var_os("TRACEBENCH_TEST_ARTIFACTS").map(PathBuf::from)
}

/// Runs chromium with a hard time limit; returns (stdout, stderr). Output goes through files:
/// --dump-dom prints megabytes (the embedded figures), more than a pipe holds.
fn run_chromium(bin: &Path, args: &[String]) -> (String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let (o, e) = (tmp.path().join("out"), tmp.path().join("err"));
    let mut child = Command::new(bin)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars"])
        .args(["--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0"])
        .args(args)
        .stdout(std::fs::File::create(&o).unwrap())
        .stderr(std::fs::File::create(&e).unwrap())
        .spawn()
        .expect("start chromium");
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    (read(&o), read(&e))
}

/// Loads `page` (which carries CHECK_JS) and returns the check's JSON and chromium's log.
fn page_check(bin: &Path, page: &Path) -> (serde_json::Value, String) {
    let (dom, log) = run_chromium(
        bin,
        &[
            "--window-size=1280,900".into(),
            "--virtual-time-budget=15000".into(),
            "--dump-dom".into(),
            format!("file://{}", page.display()),
        ],
    );
    let tag = "<pre id=\"tb-check\">";
    let start =
        dom.find(tag).unwrap_or_else(|| panic!("no check output for {}; chromium said:\n{log}", page.display()));
    let rest = &dom[start + tag.len()..];
    let json = rest[..rest.find("</pre>").unwrap()].replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    (serde_json::from_str(&json).unwrap(), log)
}

#[test]
fn report_html_opens_in_headless_chromium() {
    let Some(bin) = chromium() else {
        println!("SKIP report_html_opens_in_headless_chromium: chromium not installed (apt-get install chromium)");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    synthetic::write(d.path(), &synthetic::Options { tracers: 8, rows: 6000, threads: vec![1, 2], counters: true })
        .unwrap();
    let r = build(d.path(), 300, 500).unwrap();
    assert!(r.figures.len() >= 6, "all figure kinds expected, got {}", r.figures.len());
    let html = std::fs::read_to_string(d.path().join("report.html")).unwrap();
    assert!(!html.contains("<script"), "report.html is static");
    let check = d.path().join("check.html");
    std::fs::write(&check, html.replacen("<head>", &format!("<head>{CHECK_JS}"), 1)).unwrap();

    // Negative control: the check must see a broken image and a console error.
    let bad = d.path().join("bad.html");
    std::fs::write(
        &bad,
        format!("<!DOCTYPE html><html><head>{CHECK_JS}</head><body><img alt=\"bad\" src=\"data:image/png;base64,AAAA\"><div id=\"wide\" style=\"width:2000px\">x</div><script>console.error('planted')</script></body></html>"),
    )
    .unwrap();
    let (v, _) = page_check(&bin, &bad);
    assert_eq!(v["broken"], serde_json::json!(["bad"]), "{v}");
    assert!(v["errors"].as_array().unwrap().iter().any(|e| e.as_str().unwrap().contains("planted")), "{v}");
    assert!(v["overflow"].as_array().unwrap().iter().any(|e| e.as_str().unwrap().starts_with("DIV#wide")), "{v}");
    assert_eq!(v["viewport"].as_u64(), Some(1280), "the check runs 1280 px wide: {v}");

    let (v, log) = page_check(&bin, &check);
    assert_eq!(v["images"].as_u64().unwrap() as usize, r.figures.len(), "{v}");
    assert!(v["broken"].as_array().unwrap().is_empty(), "images that did not load: {v}");
    assert!(v["widths"].as_array().unwrap().iter().all(|w| w.as_u64().unwrap() > 0), "{v}");
    assert!(v["errors"].as_array().unwrap().is_empty(), "page errors: {v}");
    assert!(v["overflow"].as_array().unwrap().is_empty(), "elements past the right edge at 1280 px: {v}");
    assert!(v["scroll"].as_u64() <= v["viewport"].as_u64(), "a horizontal scroll at 1280 px: {v}");
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE(") || l.contains("Uncaught")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");

    let shot = d.path().join("report.png");
    let (_, log) = run_chromium(
        &bin,
        &[
            "--window-size=1280,3000".into(),
            format!("--screenshot={}", shot.display()),
            format!("file://{}", d.path().join("report.html").display()),
        ],
    );
    let png = std::fs::read(&shot)
        .unwrap_or_else(|e| panic!("no screenshot at {}: {e}; chromium said:\n{log}", shot.display()));
    assert_eq!(&png[1..4], b"PNG");
    // Kept where a person looks after `cargo test`: target/report-browser-test/report.png.
    let kept = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/report-browser-test");
    std::fs::create_dir_all(&kept).unwrap();
    std::fs::copy(&shot, kept.join("report.png")).unwrap();
    println!("screenshot: {}", kept.join("report.png").display());
    if let Some(dir) = artifacts() {
        // Keep the report next to its screenshot.
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(&shot, dir.join("report.png")).unwrap();
        std::fs::copy(d.path().join("report.html"), dir.join("report.html")).unwrap();
        println!("screenshot: {}", dir.join("report.png").display());
    }
}
