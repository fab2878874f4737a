//! The example plugins of tracers/examples, built on first use into a directory of the tests' own
//! (`<target>/tmp/example-plugins`, cargo's CARGO_TARGET_TMPDIR), never into `target/plugins`,
//! which `make plugins` and `make plugin-bench` own. Shared by the registry-level tests
//! (tracers/tests/plugins.rs, payload.rs) and the end-to-end tests (harness/tests/plugin.rs,
//! report.rs), each including this file with `#[path]`.
#![allow(dead_code)]
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Once;

/// The workspace root (both test crates sit one level below it).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Where the tests' plugins are built: under this build's target directory, private to tests.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("example-plugins")
}

/// Path of an example plugin, built on first use by every test binary that needs one (`make` is
/// a no-op when they are up to date). Two test binaries that build at once (two `cargo test` in
/// one tree) take turns on a lock file in the directory: make's `$@.tmp` names are shared.
pub fn plugin(file: &str) -> String {
    static BUILD: Once = Once::new();
    BUILD.call_once(|| {
        let d = dir();
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        let lock = std::fs::File::create(d.join(".lock")).unwrap();
        // SAFETY: flock on a descriptor we own; released when `lock` is closed.
        assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0, "flock {}", d.display());
        let st = Command::new("make")
            .args(["-s", "-f", "tracers/examples/examples.mk", "plugins"])
            .arg(format!("PLUGIN_DIR={}", d.display()))
            .current_dir(root())
            .status()
            .expect("make is needed to build the example plugins (apt-get install make gcc)");
        assert!(st.success(), "make -f tracers/examples/examples.mk plugins PLUGIN_DIR={} failed", d.display());
    });
    dir().join(file).display().to_string()
}
