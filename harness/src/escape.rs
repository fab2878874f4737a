//! Names from a tracer are data, not markup. A plugin's name, a `--label`, a tracer
//! column of a results directory a pull request made: each reaches a terminal, Markdown (the
//! gate's PR comment, report.md), HTML, JUnit XML and JSON. This module is the one place that makes
//! such a string inert for each; it imports nothing from the crate, so every renderer can use it.
//!
//! - [`visible`]: control characters as `\x1b`, `\n`, `\u{85}`: a terminal line shows them, never
//!   obeys them (no colour change, no cursor move, no second line).
//! - [`markdown`]: [`visible`], then every character Markdown, GitHub or HTML could read as syntax
//!   backslash-escaped (emphasis, links, headings, tables, `:emoji:`, `@mention`, autolinks), and
//!   `<`, `>`, `&` as entities, so `<img onerror=...>` and `**bold**` show as typed and `|` cannot
//!   end a table cell. For text outside code spans (inside one, escapes are not read).
//! - [`markdown_code`]: a code span holding [`visible`]`(s)` exactly (fenced with more backticks
//!   than the name holds), `|` escaped where it sits in a table cell. Names read as names.
//! - [`xml`]: XML text and attribute values; control characters XML 1.0 forbids are shown as
//!   [`visible`] writes them.
//! - [`html`]: HTML text and attribute values.
//!
//! JSON needs nothing here: serde_json escapes every string it writes.

/// `s` with every control character written visibly (`\x1b`, `\t`, `\n`, `\r`, `\u{85}`).
pub fn visible(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x80 && c.is_control() => o.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() || is_invisible_format(c) => o.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => o.push(c),
        }
    }
    o
}

/// Characters that change how the text around them is shown without being seen themselves:
/// bidirectional overrides and isolates (a name that reads backwards), zero-width joiners.
fn is_invisible_format(c: char) -> bool {
    matches!(c as u32, 0x200b..=0x200f | 0x202a..=0x202e | 0x2066..=0x2069 | 0xfeff)
}

/// `s` as Markdown text that renders exactly as `s` reads (see the module doc).
pub fn markdown(s: &str) -> String {
    let v = visible(s);
    let mut o = String::with_capacity(v.len() + 8);
    for (i, c) in v.chars().enumerate() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '|' | '~' | '!' | ':' | '@' => {
                o.push('\\');
                o.push(c);
            }
            // A list item or a heading underline only where a line starts.
            '+' | '-' | '=' if i == 0 => {
                o.push('\\');
                o.push(c);
            }
            c => o.push(c),
        }
    }
    o
}

/// `s` as a Markdown code span: shown exactly (its control characters as [`visible`] writes
/// them), whatever backticks it holds. `table_cell`: `|` written `\|`, which a GFM table reads
/// as a `|` of the cell (outside a table it would show the backslash).
pub fn markdown_code(s: &str, table_cell: bool) -> String {
    let v = visible(s);
    let v = if table_cell { v.replace('|', "\\|") } else { v };
    let (mut run, mut longest) = (0, 0);
    for c in v.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if v.starts_with('`') || v.ends_with('`') || v.is_empty() { " " } else { "" };
    format!("{fence}{pad}{v}{pad}{fence}")
}

/// `s` as XML text or an attribute value (quoted with `"` or `'`).
pub fn xml(s: &str) -> String {
    let v = visible(s);
    let mut o = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c => o.push(c),
        }
    }
    o
}

/// `s` as HTML text or an attribute value: the same five entities as [`xml`].
pub fn html(s: &str) -> String {
    xml(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVIL: &str = "<img src=x onerror=alert(1)>|**bold**\u{1b}[31mRED\n# h";

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(visible("evil\u{1b}[31mRED\u{7}"), "evil\\x1b[31mRED\\x07");
        assert_eq!(visible("a\nb\tc\r"), "a\\nb\\tc\\r");
        assert_eq!(visible("\u{202e}abc"), "\\u{202e}abc");
        assert_eq!(visible("lttng-ust µs"), "lttng-ust µs");
        assert!(!visible(EVIL).chars().any(char::is_control));
    }

    #[test]
    fn markdown_leaves_no_tag_no_emphasis_and_no_cell_break() {
        let m = markdown(EVIL);
        assert!(!m.contains('<') && !m.contains('>'), "{m}");
        assert!(m.contains("&lt;img src=x onerror=alert\\(1\\)&gt;"), "{m}");
        assert!(m.contains("\\|\\*\\*bold\\*\\*"), "{m}");
        // Every '|' is escaped, so a table cell holds the whole name.
        assert!(m.match_indices('|').all(|(i, _)| m[..i].ends_with('\\')), "{m}");
        assert!(!m.contains('\n') && !m.chars().any(char::is_control), "{m}");
        // Names of ours read as before apart from their punctuation's backslashes.
        assert_eq!(markdown("lttng-ust"), "lttng-ust");
        assert_eq!(markdown("@team :x: -a"), "\\@team \\:x\\: -a");
        assert_eq!(markdown("-a"), "\\-a");
    }

    #[test]
    fn a_code_span_holds_any_name_whole() {
        assert_eq!(markdown_code("spin:200", true), "`spin:200`");
        assert_eq!(markdown_code("a|b", true), "`a\\|b`");
        assert_eq!(markdown_code("a|b", false), "`a|b`");
        assert_eq!(markdown_code("x`y", false), "``x`y``");
        assert_eq!(markdown_code("`x", false), "`` `x ``");
        assert_eq!(markdown_code("e\u{1b}[31m", false), "`e\\x1b[31m`");
    }

    #[test]
    fn xml_is_well_formed_for_any_name() {
        let x = xml(EVIL);
        assert!(!x.contains('<') && !x.contains('>') && !x.contains('"'), "{x}");
        assert!(x.contains("\\x1b[31mRED\\n"), "{x}");
        assert_eq!(xml("a&b'"), "a&amp;b&apos;");
    }
}
