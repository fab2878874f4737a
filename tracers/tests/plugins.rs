//! Loads the example plugins of tracers/examples through the registry, as the measuring child
//! does, and checks every load error. The crash kinds (segfault, abort, hang in fire) need the
//! runner's child processes: they are tested end to end in harness/tests/plugin.rs.

use tracebench_tracers::{create, validate, CreateOptions, TracerError};

#[path = "support/example_plugins.rs"]
mod example_plugins;
use example_plugins::plugin;

fn opts() -> CreateOptions {
    CreateOptions { tsc_hz: 2.5e9, ..Default::default() }
}

/// Creates, runs `n` events on this thread, and returns the tracer's metadata.
fn run(spec: &str, n: u32) -> (String, String, u64, serde_json::Value) {
    validate(spec).unwrap_or_else(|e| panic!("validate {spec}: {e}"));
    let t = create(spec, &opts()).unwrap_or_else(|e| panic!("create {spec}: {e}"));
    t.thread_init(0).unwrap();
    for i in 0..n {
        t.fire(i);
    }
    (t.name().to_string(), t.version(), t.buffer_events(), t.config())
}

#[test]
fn c_ring_plugin_runs_with_and_without_args() {
    let p = plugin("libring_plugin.so");
    let (name, version, events, config) = run(&format!("plugin:{p}"), 10_000);
    assert_eq!((name.as_str(), version.as_str(), events), ("ring-plugin", "1.0", 4096));
    assert_eq!(config["kind"], "plugin");
    assert!(config["path"].as_str().unwrap().ends_with("libring_plugin.so"));
    let (_, _, events, config) = run(&format!("plugin:{p}:events=256+clock=tsc"), 1000);
    assert_eq!(events, 256);
    assert_eq!(config["args"], "events=256+clock=tsc");
}

#[test]
fn lw_plugin_runs() {
    let p = plugin("liblw_plugin.so");
    let (name, _, events, _) = run(&format!("plugin:{p}"), 5000);
    assert_eq!((name.as_str(), events), ("lw-plugin", 1024));
}

#[test]
fn rust_cdylib_plugin_runs() {
    let p = plugin("librust_plugin.so");
    let (name, version, events, _) = run(&format!("plugin:{p}:events=512"), 5000);
    assert_eq!((name.as_str(), version.as_str(), events), ("rust-plugin", "0.1.0", 512));
}

#[test]
fn plugin_runs_on_several_threads() {
    let p = plugin("libring_plugin.so");
    let t = create(&format!("plugin:{p}"), &opts()).unwrap();
    std::thread::scope(|s| {
        for cpu in 0..2 {
            let t = &t;
            s.spawn(move || {
                t.thread_init(cpu).unwrap();
                for i in 0..10_000 {
                    t.fire(i);
                }
            });
        }
    });
}

fn load_error(spec: &str) -> String {
    match create(spec, &opts()) {
        Ok(_) => panic!("{spec} loaded"),
        Err(TracerError::Plugin(msg)) => msg,
        Err(e) => panic!("{spec}: not a plugin error: {e}"),
    }
}

#[test]
fn bad_plugin_args_fail_init_with_the_plugins_message() {
    let p = plugin("libring_plugin.so");
    let e = load_error(&format!("plugin:{p}:events=1000"));
    assert!(e.contains("libring_plugin.so") && e.contains("init failed") && e.contains("power of two"), "{e}");
    let e = load_error(&format!("plugin:{}:x", plugin("librust_plugin.so")));
    assert!(e.contains("rust-plugin") && e.contains("unknown option 'x'"), "{e}");
}

#[test]
fn wrong_abi_version_is_refused_by_validate_and_create() {
    let spec = format!("plugin:{}", plugin("broken-abi.so"));
    for e in [validate(&spec).unwrap_err().to_string(), load_error(&spec)] {
        assert!(e.contains("broken-abi.so") && e.contains("ABI version 42") && e.contains("speaks 1"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn missing_symbol_is_refused_by_validate_and_create() {
    let spec = format!("plugin:{}", plugin("broken-nosym.so"));
    for e in [validate(&spec).unwrap_err().to_string(), load_error(&spec)] {
        assert!(e.contains("broken-nosym.so") && e.contains("missing symbol `tracebench_tracer_v1`"), "{e}");
    }
}

#[test]
fn failing_init_passes_validate_but_not_create() {
    // validate must not call init: the broken-init plugin only fails in init.
    let spec = format!("plugin:{}", plugin("broken-init.so"));
    validate(&spec).unwrap();
    let e = load_error(&spec);
    assert!(e.contains("broken-init.so") && e.contains("init failed") && e.contains("/dev/imaginary"), "{e}");
}

#[test]
fn missing_file_is_refused() {
    let e = validate("plugin:target/plugins/libdoesnotexist.so").unwrap_err().to_string();
    assert!(e.contains("libdoesnotexist.so") && e.contains("no such file"), "{e}");
}
