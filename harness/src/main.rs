fn main() {
    std::process::exit(tracebench::cli::run());
}
