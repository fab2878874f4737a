//! Flame graphs: one code path's folded stacks drawn by inferno, the Rust port of
//! Brendan Gregg's flamegraph.pl, so the picture is the one every profiler user reads. Colours
//! come from the function names' hashes (`deterministic`): the same run draws the same SVG.
use std::collections::BTreeMap;

/// The SVG of folded stacks (`a;b;c` -> instructions), titled `title`.
pub fn svg(title: &str, subtitle: &str, folded: &BTreeMap<String, u64>) -> std::io::Result<Vec<u8>> {
    let lines: Vec<String> = folded.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = title.to_string();
    opt.subtitle = Some(subtitle.to_string());
    opt.count_name = "instructions".to_string();
    opt.deterministic = true;
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn folded_stacks_draw_an_svg_naming_their_functions() {
        let f = [("main;nutrace_write".to_string(), 34u64), ("main".to_string(), 3)].into();
        let s = String::from_utf8(super::svg("t", "s", &f).unwrap()).unwrap();
        assert!(s.starts_with("<?xml"), "{}", &s[..40]);
        assert!(s.contains("nutrace_write"));
    }
}
