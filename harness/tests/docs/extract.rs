//! What the README and the user guide show: fenced code blocks, the `tracebench` commands in them
//! and in inline code, and the output a page shows under a `$ ` command.
use std::path::{Path, PathBuf};

/// One page of the docs: README.md, or a chapter listed in docs/SUMMARY.md.
pub struct Page {
    pub path: PathBuf,
    pub text: String,
}

/// A fenced code block: its info string's language, its attributes (`console,ignore`: `ignore`),
/// an optional `file=NAME`, and its lines.
pub struct Block {
    pub lang: String,
    pub attrs: Vec<String>,
    pub file: Option<String>,
    pub line: usize,
    pub body: String,
}

/// A command shown in a fenced block. `console` blocks mark commands with `$ ` and show their
/// output below them; other blocks hold commands only (and comments, and non-command lines).
pub struct Shown {
    pub line: usize,
    pub cmd: String,
    pub output: Vec<String>,
    /// In a `$ ` line: any shell command (cc, tracebench plugin-header > file); else a `tracebench` line.
    pub console: bool,
}

/// README.md, then every chapter docs/SUMMARY.md links, in its order.
pub fn pages(root: &Path) -> Vec<Page> {
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut out = vec![Page { path: root.join("README.md"), text: read(&root.join("README.md")) }];
    let summary = read(&root.join("docs/SUMMARY.md"));
    for l in summary.lines() {
        let Some(a) = l.find("](") else { continue };
        let Some(b) = l[a + 2..].find(')') else { continue };
        let target = &l[a + 2..a + 2 + b];
        let path = root.join("docs").join(target);
        out.push(Page { text: read(&path), path });
    }
    out
}

pub fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, l) in text.lines().enumerate() {
        if let Some(rest) = l.strip_prefix("```") {
            match open.take() {
                Some(b) => out.push(b),
                None => {
                    let mut words = rest.split_whitespace();
                    let mut info = words.next().unwrap_or("").split(',').map(String::from);
                    let lang = info.next().unwrap_or_default();
                    let attrs = info.collect();
                    let file = words.find_map(|w| w.strip_prefix("file=")).map(String::from);
                    open = Some(Block { lang, attrs, file, line: i + 2, body: String::new() });
                }
            }
        } else if let Some(b) = open.as_mut() {
            b.body.push_str(l);
            b.body.push('\n');
        }
    }
    out
}

fn is_tracebench(l: &str) -> bool {
    let l = l.strip_prefix("sudo ").unwrap_or(l);
    l.starts_with("tracebench ") || l == "tracebench"
}

/// The commands of one block, continuation lines joined.
pub fn commands(b: &Block) -> Vec<Shown> {
    let console = b.lang == "console";
    if !console && !matches!(b.lang.as_str(), "sh" | "text" | "" | "bash") {
        return Vec::new();
    }
    let mut out: Vec<Shown> = Vec::new();
    let mut cont = false;
    for (i, raw) in b.body.lines().enumerate() {
        let line = b.line + i;
        let cmd_text = if console { raw.strip_prefix("$ ") } else { Some(raw).filter(|l| is_tracebench(l)) };
        if cont || (!console && out.last().is_some() && continues(raw)) {
            let last = out.last_mut().unwrap();
            last.cmd.push(' ');
            last.cmd.push_str(strip_comment(raw.trim()).trim_end_matches('\\').trim_end());
            cont = raw.trim_end().ends_with('\\');
            continue;
        }
        match cmd_text {
            Some(c) => {
                cont = c.trim_end().ends_with('\\');
                let c = strip_comment(c).trim_end_matches('\\').trim_end().to_string();
                out.push(Shown { line, cmd: c, output: Vec::new(), console });
            }
            None if console => {
                if let Some(last) = out.last_mut() {
                    last.output.push(raw.to_string());
                }
            }
            None => {}
        }
    }
    out
}

/// A synopsis spread over lines: `tracebench gate ...` then an indented `[--markdown FILE] ...`.
fn continues(raw: &str) -> bool {
    raw.starts_with(' ') && matches!(raw.trim_start().chars().next(), Some('[' | '-'))
}

/// The line without its shell comment (`# ...` at the start of a word, outside quotes).
pub fn strip_comment(s: &str) -> &str {
    let (mut quote, mut prev) = (None::<char>, ' ');
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' && prev.is_whitespace() => return s[..i].trim_end(),
            None => {}
        }
        prev = c;
    }
    s
}

/// `tracebench ...` in inline code outside fenced blocks (prose mentions of a command).
pub fn inline(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, l) in text.lines().enumerate() {
        if l.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for (k, span) in l.split('`').enumerate() {
            if k % 2 == 1 && is_tracebench(span) {
                out.push((i + 1, span.to_string()));
            }
        }
    }
    out
}

/// Shell words: quotes grouped, `#` at the start of a word ends the line (a comment).
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut cur, mut have, mut quote) = (String::new(), false, None::<char>);
    for c in s.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                have = true;
            }
            None if c.is_whitespace() => {
                if have {
                    out.push(std::mem::take(&mut cur));
                    have = false;
                }
            }
            None if c == '#' && !have => break,
            None => {
                cur.push(c);
                have = true;
            }
        }
    }
    if have {
        out.push(cur);
    }
    out
}

/// A synopsis holds placeholders (`DIR`, `N`, `T[,T...]`, `<dir>`, `a|b`): it can be parsed, not run.
pub fn is_synopsis(ws: &[String]) -> bool {
    ws.iter().any(|w| w.contains('[') || w.contains("...") || w.contains('<') || w.contains('|') || has_placeholder(w))
}

fn has_placeholder(w: &str) -> bool {
    w.split(|c: char| "=:,/.@+".contains(c)).any(|p| {
        p.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && p.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    })
}

const NUMERIC: &[&str] = &[
    "-n",
    "--iterations",
    "--repeats",
    "--max-repeats",
    "--min-repeats",
    "--timeout",
    "--cpu",
    "--cpus",
    "--num-subbuf",
    "--payload-size",
    "--counter-sets",
    "--threads",
];

/// The synopsis as a parseable line: optional groups included, the first of `a|b`, `...` dropped,
/// numeric placeholders replaced by 2.
pub fn concrete(ws: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in ws {
        let mut w = w.replace(['[', ']', '<', '>'], "").replace("...", "");
        if let Some(i) = w.find('|') {
            w.truncate(i);
        }
        let w = w.trim_end_matches(',').to_string();
        if w.is_empty() {
            continue;
        }
        let numeric = out.last().is_some_and(|p| NUMERIC.contains(&p.as_str()));
        out.push(if numeric && has_placeholder(&w) { "2".into() } else { w });
    }
    out
}

/// The value of `--tracer`/`-t`, if any.
pub fn tracers(ws: &[String]) -> Vec<String> {
    let at = ws.iter().position(|w| w == "--tracer" || w == "-t");
    at.and_then(|i| ws.get(i + 1)).map(|v| v.split(',').map(String::from).collect()).unwrap_or_default()
}
