//! The function that dynamic-instrumentation backends (uprobe, ebpf, perf, systemtap, bpftrace)
//! put their probe on, and where it lives in the executable file.
//!
//! The site's first instruction decides how the kernel handles the uprobe (survey section 4.3,
//! trap vs 4.4, trampoline), so the harness writes it in assembly instead of leaving it to the
//! compiler:
//! - `nop5`: a 5-byte `nopl 0(%rax,%rax,1)`. Linux 6.18 can turn a uprobe on a 5-byte nop into a
//!   call to a uprobe trampoline (an "optimized uprobe", no int3 trap after the first hits).
//! - `push`: `push %rbp`, which the kernel emulates after the int3 trap (no single-step).
//! - `ret`: a bare `ret`, which the kernel can neither emulate nor optimize: int3 plus an
//!   out-of-line single-step, the slowest path.
//!
//! arm64 has the nearest equivalents under the same names (`probe_site/aarch64.rs`).
//!
//! Every site takes the 4-byte payload in `edi` (System V first argument) and returns, so a
//! probe reads it as `%di` / `arg0` / `ctx->rdi`. With `--payload-size` the call also passes a
//! pointer to the payload's bytes in `rsi` and their length in `rdx` ([`ProbeSite::call_with`]):
//! the sites touch no register, so the probe finds them there (`+0(%si):ustring`,
//! `ctx->rsi`/`ctx->rdx`).
use std::ffi::c_void;

use crate::TracerError;

#[cfg(target_arch = "aarch64")]
#[path = "probe_site/aarch64.rs"]
mod arch;
#[cfg(target_arch = "x86_64")]
#[path = "probe_site/x86_64.rs"]
mod arch;

extern "C" {
    fn tracebench_site_nop5(payload: u32);
    fn tracebench_site_push(payload: u32);
    fn tracebench_site_ret(payload: u32);
}

/// Which first instruction the probed function has (`--probe-site`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteKind {
    Nop5,
    Push,
    Ret,
}

impl SiteKind {
    pub const ALL: [SiteKind; 3] = [SiteKind::Nop5, SiteKind::Push, SiteKind::Ret];

    /// Parses `--probe-site`; `None` means the default, `nop5`.
    pub fn parse(s: Option<&str>) -> Result<SiteKind, TracerError> {
        match s.unwrap_or("nop5") {
            "nop5" => Ok(SiteKind::Nop5),
            "push" => Ok(SiteKind::Push),
            "ret" => Ok(SiteKind::Ret),
            other => Err(TracerError::BadSpec {
                spec: format!("--probe-site {other}"),
                why: "expected nop5, push or ret".into(),
            }),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SiteKind::Nop5 => "nop5",
            SiteKind::Push => "push",
            SiteKind::Ret => "ret",
        }
    }

    /// The ELF symbol of the site (bpftrace and SystemTap probe it by name).
    pub fn symbol(self) -> &'static str {
        match self {
            SiteKind::Nop5 => "tracebench_site_nop5",
            SiteKind::Push => "tracebench_site_push",
            SiteKind::Ret => "tracebench_site_ret",
        }
    }

    /// The site as a callable function.
    pub fn func(self) -> unsafe extern "C" fn(u32) {
        match self {
            SiteKind::Nop5 => tracebench_site_nop5,
            SiteKind::Push => tracebench_site_push,
            SiteKind::Ret => tracebench_site_ret,
        }
    }

    /// The first instruction, as the kernel will see it.
    pub fn first_instruction(self) -> &'static str {
        arch::FIRST_INSTRUCTION[self as usize]
    }
}

use arch::ORIGINAL;

/// A probe site located in the executable file: what a uprobe needs (`PATH:OFFSET`).
#[derive(Debug, Clone)]
pub struct ProbeSite {
    pub kind: SiteKind,
    func: unsafe extern "C" fn(u32),
    /// Run-time address of the site in this process.
    pub addr: u64,
    /// Path of the executable that holds it (`/proc/self/exe` resolved).
    pub path: String,
    /// Offset of the site in that file, which is what uprobes want (not the virtual address).
    pub file_offset: u64,
}

impl ProbeSite {
    /// Locates the site in the running executable.
    pub fn locate(kind: SiteKind) -> Result<ProbeSite, String> {
        let func = kind.func();
        let addr = func as usize as u64;
        let path = std::fs::read_link("/proc/self/exe")
            .map_err(|e| format!("readlink /proc/self/exe: {e}"))?
            .to_string_lossy()
            .into_owned();
        if path.ends_with(" (deleted)") {
            return Err(format!("the executable {path} was replaced while running; uprobes need the file"));
        }
        let file_offset = file_offset_from_phdrs(addr)?;
        // Cross-check with the kernel's own view of the mapping; a mismatch means the
        // computation above is wrong for this binary, and a probe would land elsewhere.
        if let Some(from_maps) = file_offset_from_maps(addr) {
            if from_maps != file_offset {
                return Err(format!(
                    "site offset from ELF program headers (0x{file_offset:x}) disagrees with /proc/self/maps \
                     (0x{from_maps:x})"
                ));
            }
        }
        Ok(ProbeSite { kind, func, addr, path, file_offset })
    }

    /// Calls the site with a payload of `len` bytes at `data` (rsi, rdx) besides the index (edi).
    /// Safe: the site never reads `data`; a probe reads it through the kernel's fault-checked
    /// user-memory accessors, so a bad pointer is a fetch fault in the trace, not a crash.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    #[inline(always)]
    pub fn call_with(&self, payload: u32, data: *const u8, len: usize) {
        // SAFETY: the same function; it reads no argument, so a wider signature is harmless.
        unsafe {
            let f: unsafe extern "C" fn(u32, *const u8, usize) = std::mem::transmute(self.func);
            f(payload, data, len)
        }
    }

    /// Calls the site. `#[inline(always)]` so that a backend's `fire` is just this call.
    #[inline(always)]
    pub fn call(&self, payload: u32) {
        // SAFETY: the sites take one u32 in edi, touch nothing and return.
        unsafe { (self.func)(payload) }
    }

    /// The site's first bytes, read from memory (for run.json: proves which instruction the
    /// probe sits on; a uprobe does not show in our own view of the text).
    pub fn first_bytes(&self) -> String {
        // SAFETY: the site is at least 1 byte of mapped text, and every site is followed by
        // padding within its 64-byte aligned block.
        let b = unsafe { std::slice::from_raw_parts(self.addr as *const u8, 5) };
        b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
    }

    /// How the kernel has patched the site by now (for after_run): `cc` = int3 breakpoint,
    /// `e8` = call to the uprobe trampoline (6.18's optimized uprobe on a 5-byte nop), the
    /// original bytes = no probe installed.
    pub fn patched_state(&self) -> serde_json::Value {
        let bytes = self.first_bytes();
        let state = match arch::patch_of(&bytes) {
            Some(p) => p,
            None if bytes.starts_with(&ORIGINAL[self.kind as usize][..2]) => "original instruction (no probe)",
            None => "other",
        };
        serde_json::json!({ "site_bytes_now": bytes, "site_state": state })
    }

    pub fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "probe_site": self.kind.as_str(),
            "symbol": self.kind.symbol(),
            "first_instruction": self.kind.first_instruction(),
            "binary": self.path,
            "file_offset": format!("0x{:x}", self.file_offset),
        })
    }
}

/// File offset of `addr` from the main executable's ELF program headers: find the PT_LOAD segment
/// that maps it, then `addr - load_bias - p_vaddr + p_offset`.
fn file_offset_from_phdrs(addr: u64) -> Result<u64, String> {
    struct Search {
        addr: u64,
        found: Option<u64>,
        first: bool,
    }
    unsafe extern "C" fn cb(info: *mut libc::dl_phdr_info, _size: libc::size_t, data: *mut c_void) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes valid info and our own data pointer.
        let s = unsafe { &mut *(data as *mut Search) };
        let info = unsafe { &*info };
        // The first object is the main program: the sites are linked into it statically.
        let is_main = s.first;
        s.first = false;
        if !is_main {
            return 0;
        }
        let bias = info.dlpi_addr;
        for i in 0..info.dlpi_phnum as usize {
            // SAFETY: dlpi_phdr has dlpi_phnum entries.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            if ph.p_type != libc::PT_LOAD {
                continue;
            }
            let start = bias.wrapping_add(ph.p_vaddr);
            if s.addr >= start && s.addr < start + ph.p_filesz {
                s.found = Some(s.addr - start + ph.p_offset);
                return 1;
            }
        }
        1
    }
    let mut s = Search { addr, found: None, first: true };
    // SAFETY: the callback only reads what dl_iterate_phdr hands it.
    unsafe { libc::dl_iterate_phdr(Some(cb), &mut s as *mut Search as *mut c_void) };
    s.found.ok_or_else(|| format!("address 0x{addr:x} is in no PT_LOAD segment of the main executable"))
}

/// File offset of `addr` from /proc/self/maps (`start-end perms offset dev inode path`).
pub(crate) fn file_offset_from_maps(addr: u64) -> Option<u64> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    for line in maps.lines() {
        let mut it = line.split_whitespace();
        let range = it.next()?;
        let _perms = it.next()?;
        let off = u64::from_str_radix(it.next()?, 16).ok()?;
        let (a, b) = range.split_once('-')?;
        let (a, b) = (u64::from_str_radix(a, 16).ok()?, u64::from_str_radix(b, 16).ok()?);
        if addr >= a && addr < b {
            return Some(addr - a + off);
        }
    }
    None
}

/// Tests that put probes on the sites run one at a time: a uprobe records every thread of the
/// process that calls the site, so parallel tests would see each other's payloads.
#[cfg(test)]
pub(crate) fn test_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BYTES: [(SiteKind, &[u8]); 3] =
        [(SiteKind::Nop5, arch::BYTES[0]), (SiteKind::Push, arch::BYTES[1]), (SiteKind::Ret, arch::BYTES[2])];

    // Compares with the file, not memory: another test of this process may have a uprobe (an
    // int3) on a site at the same time.
    #[test]
    fn file_offset_points_at_the_site_instructions_in_the_file() {
        let _g = test_lock();
        for (k, want) in BYTES {
            let s = ProbeSite::locate(k).unwrap();
            let file = std::fs::read(&s.path).unwrap();
            let off = s.file_offset as usize;
            assert_eq!(&file[off..off + want.len()], want, "{k:?} at 0x{off:x}");
            s.call(7);
        }
    }

    #[test]
    fn parse_rejects_unknown_sites() {
        assert_eq!(SiteKind::parse(None).unwrap(), SiteKind::Nop5);
        assert_eq!(SiteKind::parse(Some("ret")).unwrap(), SiteKind::Ret);
        assert!(SiteKind::parse(Some("int3")).is_err());
    }
}
