//! `printf`: the C library's fprintf of a timestamp and the payload into a fully buffered FILE
//! on /dev/null (survey section 7.2.1, Table 4 "Printf").
//!
//! One FILE is shared by every thread, exactly as a program that printf()s from many threads
//! would share stdout: its internal lock is what `tracebench scale` shows as contention.
//!
//! With `--payload-size N` (N != 4) the line is the timestamp and N bytes of the preallocated
//! payload printed as a string, `%.*s` (payload.rs): the C library copies them into the FILE.
use std::ffi::CString;

use crate::clock::monotonic_ns;
use crate::payload::Payload;
use crate::{Tracer, TracerError};

const BUF_BYTES: usize = 8192;
/// "%llu %u\n" with a 19-digit timestamp and a payload is about 26 bytes.
const APPROX_LINE_BYTES: u64 = 26;

pub struct Printf {
    file: *mut libc::FILE,
    _buf: Box<[u8]>,
    payload: Option<Payload>,
}

// SAFETY: glibc FILE streams lock internally, which is the very cost we measure.
unsafe impl Send for Printf {}
unsafe impl Sync for Printf {}

impl Printf {
    pub fn new(payload_size: u32) -> Result<Self, TracerError> {
        let path = CString::new("/dev/null").unwrap();
        let mode = CString::new("w").unwrap();
        // SAFETY: valid C strings.
        let file = unsafe { libc::fopen(path.as_ptr(), mode.as_ptr()) };
        if file.is_null() {
            return Err(TracerError::Setup {
                name: "printf".into(),
                why: format!("fopen(/dev/null): {}", std::io::Error::last_os_error()),
            });
        }
        let mut buf = vec![0u8; BUF_BYTES].into_boxed_slice();
        // SAFETY: buf outlives the FILE (it is dropped after fclose in Drop).
        unsafe { libc::setvbuf(file, buf.as_mut_ptr() as *mut libc::c_char, libc::_IOFBF, BUF_BYTES) };
        Ok(Printf { file, _buf: buf, payload: Payload::for_size(payload_size) })
    }
}

impl Drop for Printf {
    fn drop(&mut self) {
        // SAFETY: file came from fopen and is closed once.
        unsafe { libc::fclose(self.file) };
    }
}

impl Tracer for Printf {
    fn name(&self) -> &str {
        "printf"
    }
    fn version(&self) -> String {
        // SAFETY: gnu_get_libc_version returns a static string.
        extern "C" {
            fn gnu_get_libc_version() -> *const libc::c_char;
        }
        let v = unsafe { std::ffi::CStr::from_ptr(gnu_get_libc_version()) };
        format!("glibc {}", v.to_string_lossy())
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "call": match &self.payload {
                None => "fprintf(f, \"%llu %u\\n\", clock_gettime(CLOCK_MONOTONIC), payload)".to_string(),
                Some(p) => format!("fprintf(f, \"%llu %.*s\\n\", clock_gettime(CLOCK_MONOTONIC), {}, bytes)", p.len()),
            },
            "file": "/dev/null", "buffering": "_IOFBF", "buffer_bytes": BUF_BYTES,
            "shared_between_threads": true,
        })
    }
    fn buffer_events(&self) -> u64 {
        let line = APPROX_LINE_BYTES + self.payload.as_ref().map_or(0, |p| p.len() as u64);
        BUF_BYTES as u64 / line + 1
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        if let Some(p) = &self.payload {
            let fmt = b"%llu %.*s\n\0";
            // SAFETY: the format matches the argument types; the bytes are valid for len.
            unsafe {
                libc::fprintf(
                    self.file,
                    fmt.as_ptr() as *const libc::c_char,
                    monotonic_ns() as libc::c_ulonglong,
                    p.len() as libc::c_int,
                    p.as_c_ptr(),
                )
            };
            return;
        }
        let fmt = b"%llu %u\n\0";
        // SAFETY: the format matches the argument types.
        unsafe {
            libc::fprintf(
                self.file,
                fmt.as_ptr() as *const libc::c_char,
                monotonic_ns() as libc::c_ulonglong,
                payload as libc::c_uint,
            )
        };
    }
}
