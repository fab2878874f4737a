//! Snapshots of `--help`, one per subcommand (tests/cmd/*.toml, the expected text in *.stdout):
//! a change of an option or its text fails here until the snapshot and the docs are updated.
//! Refresh after a deliberate change with
//!   TRYCMD=overwrite cargo test --release -p tracebench --features tracebench-tracers/ebpf --test help
//! and review the diff of tests/cmd/. trycmd rather than snapbox by hand: a case is a data file,
//! so a new subcommand is one more .toml, and `TRYCMD=overwrite` rewrites every snapshot at once.
#[test]
fn help_snapshots() {
    trycmd::TestCases::new()
        .register_bin("tracebench", std::path::Path::new(env!("CARGO_BIN_EXE_tracebench")))
        .case("tests/cmd/*.toml");
}
