//! Addresses of this process as function names, for the per-function profile of a
//! stepped run: the measuring process names its own stepped addresses while the tracer's
//! libraries are still loaded.
//!
//! blazesym does the work (ELF symbol tables of the main binary and of every shared object, the
//! vDSO read from memory, Rust and C++ names demangled, a stripped library's detached debug file
//! found by its build id or debug link, such as libc6-dbg's): symbolizing by hand is where
//! profilers go wrong (load biases, the vDSO, stripped objects). A name is the function the
//! instruction's code belongs to, never an inlined one (blazesym reports those apart, and they are
//! not asked for), so self counts are per function as compiled, as `perf report` shows them. An
//! address nothing covers (a stripped library without a debug file, the uprobes' out-of-line
//! page) is named `module+0xoffset` from /proc/self/maps, so every instruction keeps a name.
use std::collections::HashMap;

use blazesym::symbolize::source::{Process, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer};
use blazesym::Pid;

/// One mapping of /proc/self/maps: [start, end), its file offset and its module's short name.
struct Mapping {
    start: u64,
    end: u64,
    offset: u64,
    module: String,
}

fn mappings() -> Vec<Mapping> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.lines().filter_map(mapping_of).collect()
}

/// `start-end perms offset dev inode path` -> its mapping (`[anon]` without a path).
fn mapping_of(l: &str) -> Option<Mapping> {
    let f: Vec<&str> = l.split_ascii_whitespace().collect();
    let (a, b) = f.first()?.split_once('-')?;
    let path = f.get(5).copied().unwrap_or("[anon]");
    Some(Mapping {
        start: u64::from_str_radix(a, 16).ok()?,
        end: u64::from_str_radix(b, 16).ok()?,
        offset: u64::from_str_radix(f.get(2)?, 16).ok()?,
        module: path.rsplit('/').next().unwrap_or(path).to_string(),
    })
}

/// `module+0xoffset` (the file offset), or `0xaddress` outside every mapping.
fn fallback(maps: &[Mapping], a: u64) -> String {
    match maps.iter().find(|m| a >= m.start && a < m.end) {
        Some(m) => format!("{}+{:#x}", m.module, a - m.start + m.offset),
        None => format!("{a:#x}"),
    }
}

/// A name as a folded stack can hold it: `;` separates frames there.
fn clean(name: &str) -> String {
    name.replace(';', ":")
}

/// What an address is called: the function holding it, if a symbol covers it, and always its
/// place, `module+0xoffset`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub symbol: Option<String>,
    pub place: String,
}

/// Each address of this process -> its names.
pub fn names(addrs: &[u64]) -> HashMap<u64, Named> {
    let maps = mappings();
    // With debug files first; what they cannot name (a debug file blazesym cannot read makes
    // its whole module unknown), from the objects' own symbol tables.
    let mut symbols = lookup(addrs, true);
    let missing: Vec<u64> = addrs.iter().copied().filter(|a| symbols[a].is_none()).collect();
    if !missing.is_empty() {
        symbols.extend(lookup(&missing, false).into_iter().filter(|(_, s)| s.is_some()));
    }
    addrs.iter().map(|&a| (a, Named { symbol: symbols[&a].clone(), place: fallback(&maps, a) })).collect()
}

/// blazesym's name for each address (None: none found), with or without debug files.
fn lookup(addrs: &[u64], debug_syms: bool) -> HashMap<u64, Option<String>> {
    let mut src = Process::new(Pid::Slf);
    // The paths /proc/self/maps names, not map_files/ (which needs CAP_SYS_ADMIN on some
    // kernels); no source lines or inlined frames (see the module's doc).
    src.map_files = false;
    src.perf_map = false;
    src.debug_syms = debug_syms;
    let src = Source::Process(src);
    let sym = Symbolizer::builder().enable_code_info(false).enable_inlined_fns(false).build();
    let found = sym.symbolize(&src, Input::AbsAddr(addrs)).unwrap_or_default();
    addrs
        .iter()
        .enumerate()
        .map(|(i, &a)| {
            let symbol = match found.get(i) {
                Some(Symbolized::Sym(s)) if !s.name.is_empty() => Some(clean(&s.name)),
                _ => None,
            };
            (a, symbol)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn a_named_function() -> u64 {
        a_named_function as *const () as u64
    }

    #[test]
    fn own_functions_are_named_and_unmapped_addresses_fall_back() {
        let f = a_named_function();
        let n = names(&[f, 8]);
        assert!(n[&f].symbol.as_ref().unwrap().contains("a_named_function"), "{:?}", n[&f]);
        assert!(n[&f].place.contains("+0x"), "{:?}", n[&f]);
        assert_eq!(n[&8], Named { symbol: None, place: "0x8".into() });
    }

    #[test]
    fn the_vdso_is_named() {
        let Some(v) = mappings().into_iter().find(|m| m.module == "[vdso]") else {
            eprintln!("skipped: no vDSO in this process");
            return;
        };
        let addrs: Vec<u64> = (v.start..v.end).step_by(16).collect();
        let n = names(&addrs);
        let named =
            |s: &Named| s.symbol.as_ref().is_some_and(|s| s.contains("clock_gettime") || s.contains("gettimeofday"));
        assert!(n.values().any(named), "{n:?}");
    }

    #[test]
    fn maps_lines_give_module_and_file_offset() {
        let m = mapping_of("7f0000001000-7f0000003000 r-xp 00002000 fd:01 42 /usr/lib/liblttng-ust.so.1").unwrap();
        assert_eq!(fallback(&[m], 0x7f00_0000_1010), "liblttng-ust.so.1+0x2010");
        let v = mapping_of("7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0  [vdso]").unwrap();
        assert_eq!(fallback(&[v], 0x7ffd_0000_0abc), "[vdso]+0xabc");
    }
}
