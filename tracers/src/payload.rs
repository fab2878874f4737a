//! The bytes one event records when `--payload-size` is not the default 4 (survey section 7.3 and
//! Figure 9: what an event costs as the data it copies grows).
//!
//! At 4 bytes every backend records the survey's payload, the u32 iteration index, exactly as
//! without the option. At any other size a backend records `size` bytes from one [`Payload`]:
//! a buffer allocated, filled and touched when the tracer is created, so that nothing is
//! allocated, formatted or faulted in inside the timed window; `fire` only hands the tracer a
//! pointer and a length. The bytes are printable ASCII followed by a NUL just past the end, so
//! the same buffer serves tracers that copy bytes (lw, trace_marker_raw), format a string
//! (printf `%.*s`, tracef `%s`) or fetch a user string (uprobe `ustring`, eBPF).
//!
//! Shared by several backends, so it lives in neither (HELPERS: shared helpers).

/// The payload every backend records by default: the u32 iteration index.
pub const DEFAULT: u32 = 4;
/// The largest payload any backend takes: ftrace's trace_marker splits nothing up to a page, a
/// uprobe `ustring` fetch stops at 4096 bytes (the kernel's MAX_STRING_SIZE is PATH_MAX).
pub const MAX: u32 = 4096;

/// A preallocated payload of `len` bytes, with a NUL at `len` (not counted).
pub struct Payload {
    bytes: Box<[u8]>,
    len: usize,
}

impl Payload {
    /// `None` for the default 4 bytes (the backend records its iteration index), else a filled
    /// buffer of `size` bytes.
    pub fn for_size(size: u32) -> Option<Payload> {
        if size == DEFAULT {
            return None;
        }
        Some(Payload::new(size as usize))
    }

    /// A filled buffer of `len` bytes: `abc...xyzabc...`, then a NUL.
    pub fn new(len: usize) -> Payload {
        let mut bytes = vec![0u8; len + 1].into_boxed_slice();
        for (i, b) in bytes[..len].iter_mut().enumerate() {
            *b = b'a' + (i % 26) as u8;
        }
        // Written through, so every page is resident before the timed window.
        for b in bytes.iter_mut().step_by(4096) {
            // SAFETY: b is a valid, aligned reference.
            unsafe { std::ptr::write_volatile(b, std::ptr::read_volatile(b)) };
        }
        Payload { bytes, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The `len` bytes (without the NUL).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
    pub fn as_ptr(&self) -> *const u8 {
        self.bytes.as_ptr()
    }
    /// The same bytes as a NUL-terminated C string.
    pub fn as_c_ptr(&self) -> *const libc::c_char {
        self.bytes.as_ptr().cast()
    }
    /// What run.json says the payload is.
    pub fn describe(size: u32) -> String {
        if size == DEFAULT {
            "u32 iteration index (4 bytes)".into()
        } else {
            format!("{size} bytes of a preallocated ASCII buffer ('abc...')")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_the_index_and_others_are_filled() {
        assert!(Payload::for_size(4).is_none());
        let p = Payload::for_size(30).unwrap();
        assert_eq!(p.len(), 30);
        assert_eq!(&p.bytes()[..4], b"abcd");
        assert_eq!(p.bytes()[26], b'a');
        // SAFETY: the buffer holds len + 1 bytes.
        assert_eq!(unsafe { *p.as_ptr().add(30) }, 0, "NUL-terminated");
        assert!(!p.bytes().contains(&0));
    }
}
