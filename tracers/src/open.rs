//! The survey's Figure 9 in userspace: `open()` of a file name of a given length (section 7.3).
//! A tracer that resolves the string copies the name, so its cost grows with the length; one that
//! records the pointer (ftrace's syscall events: `const char * filename`, 8 bytes) stays flat.
//!
//! - `open`: the untraced call, the baseline row;
//! - `ftrace-open`: the same call with `syscalls:sys_{enter,exit}_openat` enabled in a private
//!   instance (in `ftrace.rs`);
//! - `strace-open`: the same call under strace with `-s 4096`, so that it reads and formats the
//!   whole name (its default `-s 32` would stop at 32 characters).
//!
//! `--payload-size N` is the name's length in bytes (1..=4095: PATH_MAX counts the NUL). The name
//! never exists (checked at set-up), so the call fails with ENOENT and no descriptor is left to
//! close: nothing but the tracer call and the system call itself enters the timed window. The
//! kernel still copies the whole name (getname) before it walks the path, and the walk stops at
//! the first component, so the untraced row's own growth is that copy.
use std::ffi::CString;

use crate::syscall::{require_strace, STRACE_OPEN_PREFIX};
use crate::{Tracer, TracerError};

/// Longest name: PATH_MAX (4096) with its NUL.
pub const MAX_NAME: u32 = 4095;
/// Longest component the kernel accepts (NAME_MAX); longer names are split with '/'.
const COMPONENT: usize = 200;
const FIRST: &[u8] = b"tracebench-no-such-file-";

/// A name of exactly `len` bytes whose first component does not exist in the current directory.
pub struct OpenName {
    name: CString,
}

impl OpenName {
    pub fn new(len: u32) -> Result<OpenName, String> {
        if !(1..=MAX_NAME).contains(&len) {
            return Err(format!("an open() name is 1..={MAX_NAME} bytes long, not {len}"));
        }
        let mut b: Vec<u8> =
            (0..len as usize).map(|i| if i > 0 && i % (COMPONENT + 1) == COMPONENT { b'/' } else { b'a' }).collect();
        let n = FIRST.len().min(b.len()).min(COMPONENT);
        b[..n].copy_from_slice(&FIRST[..n]);
        if b.last() == Some(&b'/') {
            *b.last_mut().unwrap() = b'a';
        }
        let name = CString::new(b).expect("no NUL in the name");
        let me = OpenName { name };
        // Set-up check, outside any timed window: the call must fail with ENOENT (a name that
        // exists would open a descriptor nobody closes, and time a different path).
        // SAFETY: valid NUL-terminated path.
        let fd = unsafe { libc::openat(libc::AT_FDCWD, me.name.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        let err = std::io::Error::last_os_error();
        if fd >= 0 {
            // SAFETY: fd was just opened.
            unsafe { libc::close(fd) };
            return Err(format!("'{}' exists in the current directory; run from another directory", me.first()));
        }
        if err.raw_os_error() != Some(libc::ENOENT) {
            return Err(format!("open of the {len}-byte name fails with {err}, not ENOENT"));
        }
        Ok(me)
    }

    fn first(&self) -> String {
        let s = self.name.to_string_lossy();
        s.split('/').next().unwrap_or_default().to_string()
    }

    pub fn len(&self) -> usize {
        self.name.as_bytes().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The timed system call.
    #[inline(always)]
    pub fn call(&self) {
        // SAFETY: valid NUL-terminated path; the call fails with ENOENT (checked in `new`).
        core::hint::black_box(unsafe {
            libc::openat(libc::AT_FDCWD, self.name.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC)
        });
    }

    pub fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "call": "openat(AT_FDCWD, name, O_RDONLY)",
            "name_bytes": self.len(),
            "name_components": self.name.as_bytes().iter().filter(|&&c| c == b'/').count() + 1,
            "result": "ENOENT (the first component does not exist)",
        })
    }
}

/// `open` and `strace-open`.
pub struct Open {
    strace: Option<String>,
    name: OpenName,
}

impl Open {
    pub fn new(strace: bool, opts: &crate::CreateOptions) -> Result<Open, TracerError> {
        let row = if strace { "strace-open" } else { "open" };
        let strace = if strace { Some(require_strace(row)?) } else { None };
        let name = OpenName::new(opts.payload_size).map_err(|why| TracerError::Setup { name: row.into(), why })?;
        Ok(Open { strace, name })
    }
}

impl Tracer for Open {
    fn name(&self) -> &str {
        if self.strace.is_some() {
            "strace-open"
        } else {
            "open"
        }
    }
    fn version(&self) -> String {
        match &self.strace {
            Some(v) => v.clone(),
            None => format!("openat(2), linux {}", crate::sys::kernel_release()),
        }
    }
    fn config(&self) -> serde_json::Value {
        let mut c = self.name.config();
        if self.strace.is_some() {
            c["command"] = STRACE_OPEN_PREFIX.join(" ").into();
            c["string_read_by_strace"] = "the whole name (-s 4096)".into();
            c["intrinsic_disturbances"] = serde_json::json!([crate::reason::Reason::ContextSwitch.name()]);
        }
        c["traced"] = self.strace.is_some().into();
        c
    }
    fn intrinsic_disturbances(&self) -> &'static [crate::reason::Reason] {
        // As for `strace`: each traced call stops the process twice and switches to strace.
        if self.strace.is_some() {
            &[crate::reason::Reason::ContextSwitch]
        } else {
            &[]
        }
    }
    #[inline(never)]
    fn fire(&self, _payload: u32) {
        self.name.call();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_have_the_asked_length_and_do_not_exist() {
        for len in [1u32, 4, 199, 200, 201, 256, 1024, 4095] {
            let n = OpenName::new(len).unwrap();
            assert_eq!(n.len(), len as usize);
            assert!(n.name.as_bytes().split(|&c| c == b'/').all(|c| !c.is_empty() && c.len() <= 255), "{len}");
        }
        assert!(OpenName::new(0).is_err());
        assert!(OpenName::new(4096).is_err());
    }
}
