#![allow(dead_code)]
// Temporary entry point until the measurement core's CLI lands on main; the lead wires
// `report` into harness/src/cli.rs.
mod plot;
mod report;
mod stats;

use clap::Parser;

#[derive(Parser)]
#[command(name = "tracebench")]
enum Cli {
    /// Tables, figures and code-path analysis from a results directory.
    Report(report::ReportArgs),
}

fn main() {
    let code = match Cli::parse() {
        Cli::Report(a) => match report::run(&a) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("tracebench report: {e}");
                2
            }
        },
    };
    std::process::exit(code);
}
