//! Names from a tracer are data, not markup: a plugin named with Markdown and HTML goes
//! through run and gate into gate.md, JUnit XML and JSON as text; a name with an escape sequence
//! is refused with the character shown, never sent to the terminal raw; and a results directory a
//! pull request wrote (its tracer column holding control characters) renders inert too.
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_tracebench");
const MARKUP: &str = "<img src=x onerror=alert(1)>|**bold**";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A do-nothing plugin whose `name` is `name` (written as a C string literal), or None without cc.
fn plugin(dir: &Path, file: &str, name: &str) -> Option<PathBuf> {
    let lit: String = name.bytes().map(|b| format!("\\x{b:02x}\"\"")).collect();
    let src = dir.join(format!("{file}.c"));
    fs::write(
        &src,
        format!(
            "#include \"tracebench.h\"\n\
             static int init(const char *a, void **c, char *e, size_t n) {{ (void)a; (void)e; (void)n; *c = 0; return 0; }}\n\
             static uint64_t be(void *c) {{ (void)c; return 0; }}\n\
             static void fire(void *c, uint32_t p) {{ (void)c; (void)p; }}\n\
             static void fini(void *c) {{ (void)c; }}\n\
             const struct tracebench_tracer_v1 tracebench_tracer_v1 = \
             {{ TRACEBENCH_ABI_VERSION, \"{lit}\", \"1\", init, be, 0, fire, fini }};\n"
        ),
    )
    .unwrap();
    let so = dir.join(format!("{file}.so"));
    let st = Command::new("cc")
        .args(["-O2", "-fPIC", "-shared", "-I"])
        .arg(root().join("tracers/include"))
        .arg("-o")
        .arg(&so)
        .arg(&src)
        .status();
    match st {
        Ok(s) if s.success() => Some(so),
        _ => {
            println!("SKIP names: cc could not build a plugin");
            None
        }
    }
}

fn tb(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new(BIN).args(args).current_dir(cwd).output().unwrap()
}

/// The text of `md` outside single-backtick code spans.
fn outside_code(md: &str) -> String {
    md.split('`').step_by(2).collect()
}

/// Table rows of gate.md: each must have as many unescaped `|` as the header.
fn cell_breaks(line: &str) -> usize {
    let b = line.as_bytes();
    (0..b.len()).filter(|&i| b[i] == b'|' && (i == 0 || b[i - 1] != b'\\')).count()
}

#[test]
fn a_plugin_named_with_markup_is_text_in_every_gate_output() {
    let t = tempfile::tempdir().unwrap();
    let Some(so) = plugin(t.path(), "markup", MARKUP) else { return };
    let spec = format!("plugin:{}", so.display());
    for side in ["base", "head"] {
        let o = tb(&["run", "-q", "-t", &spec, "-n", "300", "--repeats", "3", "--out", side], t.path());
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = tb(
        &[
            "gate",
            "--baseline",
            "base",
            "--candidate",
            "head",
            "--markdown",
            "gate.md",
            "--junit",
            "gate.xml",
            "--json",
            "gate.json",
        ],
        t.path(),
    );
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
    let md = fs::read_to_string(t.path().join("gate.md")).unwrap();
    // The name is a code span in the table (its '|' escaped for the table) and in the notes: no
    // markup outside a code span, where Markdown and HTML are read.
    assert!(md.contains("| `<img src=x onerror=alert(1)>\\|**bold**` |"), "{md}");
    assert!(!outside_code(&md).contains("<img") && !outside_code(&md).contains("**bold"), "raw markup:\n{md}");
    let table: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert!(table.len() >= 3, "{md}");
    for l in &table {
        assert_eq!(cell_breaks(l), cell_breaks(table[0]), "a name split a table row: {l}");
    }
    let xml = fs::read_to_string(t.path().join("gate.xml")).unwrap();
    assert!(!xml.contains("<img") && xml.contains("&lt;img src=x onerror=alert(1)&gt;|**bold**"), "{xml}");
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(t.path().join("gate.json")).unwrap()).unwrap();
    assert!(
        json["rows"].as_array().unwrap().iter().any(|r| r["tracer"] == MARKUP),
        "the JSON keeps the name as data: {json}"
    );
}

#[test]
fn a_plugin_named_with_an_escape_sequence_is_refused_and_shown_visibly() {
    let t = tempfile::tempdir().unwrap();
    let Some(so) = plugin(t.path(), "esc", "evil\u{1b}[31mRED") else { return };
    let spec = format!("plugin:{}", so.display());
    let o = tb(&["run", "-q", "-t", &spec, "-n", "100", "--out", "r"], t.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains('\u{1b}'), "a raw escape sequence reached the terminal: {err:?}");
    assert!(
        err.contains("bad row name 'evil\\x1b[31mRED' (the tracer's name): it holds the control character \\x1b"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// A results directory a pull request wrote by hand: its tracer column holds an escape sequence,
/// a newline cannot (one CSV line per row), HTML and table syntax can.
#[test]
fn a_hand_made_results_directory_renders_inert() {
    let t = tempfile::tempdir().unwrap();
    let head = "tracer,threads,repetition,kept,discarded,mean_ns,std_ns,p50_ns,p90_ns,p99_ns,min_ns,max_ns";
    for side in ["base", "head"] {
        let d = t.path().join(side);
        fs::create_dir(&d).unwrap();
        let mut s = format!("{head}\n");
        for r in 0..6 {
            let m = 100.0 + r as f64;
            s.push_str(&format!("x\u{1b}]0;owned\u{7}</td>|`,1,{r},1000,0,{m},1,{m},{m},{m},{m},{m}\n"));
        }
        fs::write(d.join("repetitions.csv"), s).unwrap();
    }
    let o = tb(
        &["gate", "--baseline", "base", "--candidate", "head", "--markdown", "gate.md", "--junit", "gate.xml"],
        t.path(),
    );
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "terminal: {out:?}");
    assert!(out.contains("x\\x1b]0;owned\\x07</td>|`"), "{out}");
    for f in ["gate.md", "gate.xml"] {
        let s = fs::read_to_string(t.path().join(f)).unwrap();
        assert!(!s.chars().any(|c| c.is_control() && c != '\n'), "{f}: {s:?}");
    }
    // Markdown: the whole name in one code span, fenced past its backtick; XML: entities.
    let md = fs::read_to_string(t.path().join("gate.md")).unwrap();
    assert!(md.contains("| `` x\\x1b]0;owned\\x07</td>\\|` `` |"), "{md}");
    let xml = fs::read_to_string(t.path().join("gate.xml")).unwrap();
    assert!(!xml.contains("</td>") && xml.contains("x\\x1b]0;owned\\x07&lt;/td&gt;|`"), "{xml}");
}
