//! The example plugins of tracers/examples, built on first use. Shared by the registry-level tests
//! (tracers/tests/plugins.rs) and the end-to-end tests (harness/tests/plugin.rs), each including
//! this file with `#[path]`.
use std::path::PathBuf;
use std::process::Command;
use std::sync::Once;

/// The workspace root (both test crates sit one level below it).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Path of an example plugin, built on first use (`make plugins` is a no-op when up to date).
pub fn plugin(file: &str) -> String {
    static BUILD: Once = Once::new();
    BUILD.call_once(|| {
        let st = Command::new("make")
            .args(["-s", "-f", "tracers/examples/examples.mk", "plugins"])
            .current_dir(root())
            .status()
            .expect("make is needed to build the example plugins (apt-get install make gcc)");
        assert!(st.success(), "make -f tracers/examples/examples.mk plugins failed");
    });
    root().join("target/plugins").join(file).display().to_string()
}
