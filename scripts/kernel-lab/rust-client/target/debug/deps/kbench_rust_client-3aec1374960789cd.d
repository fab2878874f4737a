/work/main/scripts/kernel-lab/rust-client/target/debug/deps/kbench_rust_client-3aec1374960789cd.d: src/main.rs src/../../../../harness/src/kernel/mod.rs src/../../../../harness/src/kernel/abi.rs

/work/main/scripts/kernel-lab/rust-client/target/debug/deps/libkbench_rust_client-3aec1374960789cd.rmeta: src/main.rs src/../../../../harness/src/kernel/mod.rs src/../../../../harness/src/kernel/abi.rs

src/main.rs:
src/../../../../harness/src/kernel/mod.rs:
src/../../../../harness/src/kernel/abi.rs:
