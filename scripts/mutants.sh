#!/usr/bin/env bash
# Mutation testing of the pure modules (make mutants; docs/testing.md): the statistics
# (harness/src/stats/) and the gate's verdict (harness/src/gate/verdict.rs), with the unit tests
# that live in those files.
#
# They depend on nothing of the harness but each other and serde, so they are copied, unchanged,
# into a small crate of their own (target/mutants-pure) and cargo-mutants runs there: each mutant
# rebuilds a few hundred lines instead of the whole harness, which makes the run fit a 2-core
# machine. Tests elsewhere in the harness that also exercise these modules (the report's) are not
# run, so the caught figure is a lower bound.
#
#   scripts/mutants.sh [extra cargo-mutants options]   e.g. --shard 0/8 --sharding round-robin,
#                                                      --file src/stats/hist.rs
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
crate=$root/target/mutants-pure
out=$root/target/mutants
command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked

rm -rf "$crate"
mkdir -p "$crate/src/stats" "$crate/src/gate"
cp "$root"/harness/src/stats/*.rs "$crate/src/stats/"
cp "$root"/harness/src/gate/verdict*.rs "$crate/src/gate/"
cp "$root/Cargo.lock" "$crate/"
cat > "$crate/Cargo.toml" <<'TOML'
[package]
name = "tracebench"
version = "0.0.0"
edition = "2021"
publish = false

# Named like the harness, so that the doc examples (`use tracebench::stats::...`) run too.

# Standalone: not a member of the tracebench workspace.
[workspace]

[dependencies]
serde = { version = "1", features = ["derive"] }
clap = { version = "4", features = ["derive"] }
TOML
cat > "$crate/src/lib.rs" <<'RS'
//! harness/src/stats/ and harness/src/gate/verdict.rs, copied by scripts/mutants.sh.
#![allow(dead_code)]
pub mod stats;
pub mod gate {
    pub mod verdict;
}
RS
# The copied lock file pins serde to the workspace's version; nothing is fetched.
(cd "$crate" && cargo test --offline --quiet >/dev/null) || { echo "the copied crate's tests fail unmutated" >&2; exit 1; }
mkdir -p "$out"
# --in-place: the crate is already a copy, and its target/ holds the built dependencies.
(cd "$crate" && cargo mutants --in-place --timeout 60 --output "$out" "$@") || true
python3 "$root/scripts/mutants-summary.py" "$out/mutants.out"
