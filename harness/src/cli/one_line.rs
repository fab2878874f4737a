//! clap's parse errors as one line (the README's promise: bad input gets one clear line and exit
//! 2), and a pointer to the subcommand that has an option typed after the wrong one (`run
//! --vary` is `sweep`'s, `run --threshold` is `gate`'s), where clap would guess a look-alike
//! option of the wrong subcommand.
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::CommandFactory;

use super::Cli;

/// The one line for a clap error (without the `tracebench: error: ` prefix).
pub fn message(e: &clap::Error, argv: &[String]) -> String {
    let sub = subcommand_of(argv);
    let help = match &sub {
        Some(s) => format!("`tracebench {s} --help`"),
        None => "`tracebench --help`".into(),
    };
    if e.kind() == ErrorKind::UnknownArgument {
        if let (Some(arg), Some(s)) = (context(e, ContextKind::InvalidArg), &sub) {
            let long = arg.split('=').next().unwrap_or(&arg).to_string();
            let owners = subcommands_with(&long);
            if !owners.is_empty() && !owners.contains(s) {
                let list = owners.iter().map(|o| format!("`tracebench {o}`")).collect::<Vec<_>>().join(" or ");
                return format!("`{s}` has no {long}: it is an option of {list}");
            }
        }
    }
    let rendered = e.render().to_string();
    // clap's message: the error (some kinds list the arguments on the lines below), then
    // "tip:", "Usage:" and "For more information" lines, which the one line replaces.
    let body: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
        .collect();
    let first = body.join(" ").trim_start_matches("error: ").to_string();
    let first = if first.is_empty() { "bad command line".to_string() } else { first };
    let tip = match context(e, ContextKind::SuggestedArg) {
        Some(a) => format!(" (did you mean '{a}'?)"),
        None => match context(e, ContextKind::SuggestedSubcommand) {
            Some(c) => format!(" (did you mean '{c}'?)"),
            None => String::new(),
        },
    };
    format!("{first}{tip}; see {help}")
}

fn context(e: &clap::Error, kind: ContextKind) -> Option<String> {
    match e.get(kind)? {
        ContextValue::String(s) => Some(s.clone()),
        ContextValue::Strings(v) if !v.is_empty() => Some(v.join("' or '")),
        _ => None,
    }
}

/// The subcommand named on the command line, if any (the first word that is one).
fn subcommand_of(argv: &[String]) -> Option<String> {
    let cmd = Cli::command();
    argv.iter().skip(1).find(|w| cmd.find_subcommand(w.as_str()).is_some()).cloned()
}

/// The visible subcommands that take `--long`.
fn subcommands_with(long: &str) -> Vec<String> {
    let Some(name) = long.strip_prefix("--") else { return Vec::new() };
    Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .filter(|s| s.get_arguments().any(|a| a.get_long() == Some(name)))
        .map(|s| s.get_name().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn line(args: &[&str]) -> String {
        let argv: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let e = Cli::try_parse_from(&argv).unwrap_err();
        message(&e, &argv)
    }

    #[test]
    fn an_option_of_another_subcommand_names_that_subcommand() {
        let l = line(&["tracebench", "run", "-t", "lw", "--vary", "subbuf-size=4k"]);
        assert_eq!(l, "`run` has no --vary: it is an option of `tracebench sweep`");
        let l = line(&["tracebench", "run", "-t", "lw", "--threshold=5%"]);
        assert_eq!(l, "`run` has no --threshold: it is an option of `tracebench gate`");
    }

    #[test]
    fn other_errors_are_one_line_with_clap_s_tip() {
        let l = line(&["tracebench", "run", "-t", "lw", "--thread", "2"]);
        assert!(!l.contains('\n') && l.contains("did you mean '--threads'?"), "{l}");
        assert!(l.ends_with("see `tracebench run --help`"), "{l}");
        let l = line(&["tracebench", "run"]);
        assert!(!l.contains('\n') && l.contains("--tracer"), "{l}");
        let l = line(&["tracebench", "reprot"]);
        assert!(!l.contains('\n') && l.contains("did you mean") && l.contains("'report'"), "{l}");
    }
}
