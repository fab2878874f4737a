use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "tracebench", version, about = "Measures what one tracer event costs")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// CI regression gate: compares two results directories (or runs both sides ABBA) and
    /// exits 0 (pass), 1 (a regression) or 2 (usage or data error).
    Gate(tracebench::gate::GateArgs),
}

fn main() {
    let cli = Cli::parse();
    let res = match &cli.cmd {
        Cmd::Gate(a) => tracebench::gate::run(a),
    };
    match res {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("tracebench: error: {e}");
            std::process::exit(e.exit_code());
        }
    }
}
