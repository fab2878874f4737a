use std::path::Path;

use super::{markdown_table, ALL};

const START: &str = "<!-- constants table: generated -->";
const END: &str = "<!-- end constants table -->";

#[test]
fn every_constant_says_why_and_what_calibrates_it() {
    for s in ALL {
        for e in s.entries {
            assert!(!e.reason.trim().is_empty() && !e.calibrated_by.trim().is_empty(), "{}::{}", s.module, e.name);
        }
    }
}

/// docs/code-paths.md's table between the markers is the one this module renders;
/// `TRACEBENCH_BLESS=1` rewrites it (and adds the end marker after the start marker if absent).
#[test]
fn constants_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/code-paths.md");
    let text = std::fs::read_to_string(&path).expect("docs/code-paths.md");
    let block = format!("\n{}", markdown_table());
    let start = text.find(START).unwrap_or_else(|| panic!("docs/code-paths.md has no `{START}` marker")) + START.len();
    let end = text[start..].find(END).map(|i| start + i);
    if end.is_some_and(|e| text[start..e] == block) {
        return;
    }
    if std::env::var("TRACEBENCH_BLESS").is_ok_and(|v| v == "1") {
        let rest = end.map_or(&text[start..], |e| &text[e + END.len()..]);
        let new = format!("{}{block}{END}{rest}", &text[..start]);
        std::fs::write(&path, new).expect("write docs/code-paths.md");
        return;
    }
    panic!(
        "docs/code-paths.md's constants table differs from crate::decisions; refresh it with \
         `TRACEBENCH_BLESS=1 cargo test --release -p tracebench --lib constants_table` and review the diff"
    );
}
