//! Where a stepped call's instructions go: the stepper already stops at every user
//! instruction of the call, so it keeps, per instruction, its address and the shadow call stack
//! (the addresses of the `call` instructions still open), and per system call its number.
//!
//! Per call only a log of (stack, address) is kept; when the call ends it is added to the tally
//! of calls with the same exact count, which is what a path of the stepped report is (an exact
//! count, or a band of them: `report::side::single_step::paths`). So the stepper's output stays
//! small (one line per distinct (stack, address) per count) however many calls were stepped,
//! and nothing but a vector push happens per step, next to a ptrace round trip of ~20 us.
//! The stepper writes the tally as text lines after its records (`lines`); the cell reads them
//! back (`Tally::parse`) and symbolizes the addresses in its own address space
//! (`crate::symbolize`), where the tracer's libraries are still loaded.
use std::collections::HashMap;

use super::kind::Kind;
use crate::results::profile::{CountProfile, Profile};
use crate::symbolize::Named;

/// Calls with one exact count: how many, and the instructions of all of them.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CountTally {
    pub calls: u64,
    /// (stack id, instruction address) -> instructions executed there, over all the calls.
    pub steps: HashMap<(u32, u64), u64>,
    /// System-call number -> system calls made, over all the calls.
    pub syscalls: HashMap<u64, u64>,
}

/// The whole stepping's tally, and the per-call state that feeds it.
#[derive(Debug, Default)]
pub struct StepTally {
    /// Stack id -> the addresses of its open `call` instructions, outermost first.
    pub stacks: Vec<Vec<u64>>,
    /// Exact user-instruction count -> its calls.
    pub counts: HashMap<u64, CountTally>,
    /// Stack id -> the address its innermost call went to (the called function's entry), which
    /// names the function where no symbol does (`profile`).
    pub entries: HashMap<u32, u64>,
    entered: bool,
    ids: HashMap<Vec<u64>, u32>,
    stack: Vec<u64>,
    sid: u32,
    log: Vec<(u32, u64)>,
    calls_made: Vec<u64>,
}

impl StepTally {
    fn intern(&mut self) -> u32 {
        if let Some(&id) = self.ids.get(self.stack.as_slice()) {
            return id;
        }
        let id = self.stacks.len() as u32;
        self.stacks.push(self.stack.clone());
        self.ids.insert(self.stack.clone(), id);
        id
    }

    /// A call starts: empty stack, empty log.
    pub fn begin(&mut self) {
        self.stack.clear();
        self.sid = self.intern();
        self.log.clear();
        self.calls_made.clear();
    }

    /// One counted instruction at `pc`, of `kind` (a call or return moves the shadow stack for
    /// the instructions after it).
    #[inline]
    pub fn step(&mut self, pc: u64, kind: Kind) {
        self.log.push((self.sid, pc));
        if self.entered {
            self.entered = false;
            self.entries.entry(self.sid).or_insert(pc);
        }
        match kind {
            Kind::Call => {
                self.stack.push(pc);
                self.sid = self.intern();
                self.entered = true;
            }
            Kind::Return => {
                self.stack.pop();
                self.sid = self.intern();
            }
            _ => {}
        }
    }

    /// A system call with number `nr` was made by the last instruction.
    pub fn syscall(&mut self, nr: u64) {
        self.calls_made.push(nr);
    }

    /// The last `n` counted instructions were dropped (a vDSO clock retry, `stepper::Retries`).
    pub fn drop_last(&mut self, n: u64) {
        let keep = self.log.len().saturating_sub(n as usize);
        self.log.truncate(keep);
    }

    /// The call ended with `instructions` counted; `kept`: not disturbed by a signal (those calls
    /// are discarded, so their instructions are on no path).
    pub fn end(&mut self, instructions: u64, kept: bool) {
        if !kept {
            return;
        }
        let t = self.counts.entry(instructions).or_default();
        t.calls += 1;
        for &k in &self.log {
            *t.steps.entry(k).or_default() += 1;
        }
        for &nr in &self.calls_made {
            *t.syscalls.entry(nr).or_default() += 1;
        }
    }

    /// The tally as text lines: `K id site,site,...` per stack (`-`: empty), then per count
    /// `P instructions calls`, its `S stack address instructions` and `Y number calls` lines;
    /// `E stack entry` per stack entered.
    pub fn lines(&self) -> String {
        let mut s = String::new();
        for (id, e) in &self.entries {
            s.push_str(&format!("E {id} {e:x}\n"));
        }
        for (id, st) in self.stacks.iter().enumerate() {
            let sites: Vec<String> = st.iter().map(|a| format!("{a:x}")).collect();
            let sites = if sites.is_empty() { "-".to_string() } else { sites.join(",") };
            s.push_str(&format!("K {id} {sites}\n"));
        }
        let mut counts: Vec<_> = self.counts.iter().collect();
        counts.sort_by_key(|(k, _)| **k);
        for (n, t) in counts {
            s.push_str(&format!("P {n} {}\n", t.calls));
            for ((id, pc), c) in &t.steps {
                s.push_str(&format!("S {id} {pc:x} {c}\n"));
            }
            for (nr, c) in &t.syscalls {
                s.push_str(&format!("Y {nr} {c}\n"));
            }
        }
        s
    }

    /// Reads `lines` back (other lines are skipped); None on a malformed tally line.
    pub fn parse(text: &str) -> Option<StepTally> {
        let mut t = StepTally::default();
        let mut cur: Option<u64> = None;
        for l in text.lines() {
            let f: Vec<&str> = l.split(' ').collect();
            let hex = |s: &str| u64::from_str_radix(s, 16).ok();
            match (f[0], f.len()) {
                ("K", 3) => {
                    let sites =
                        if f[2] == "-" { Vec::new() } else { f[2].split(',').map(hex).collect::<Option<_>>()? };
                    t.ids.insert(sites.clone(), t.stacks.len() as u32);
                    t.stacks.push(sites);
                }
                ("E", 3) => {
                    t.entries.insert(f[1].parse().ok()?, hex(f[2])?);
                }
                ("P", 3) => {
                    let n = f[1].parse().ok()?;
                    t.counts.entry(n).or_default().calls += f[2].parse::<u64>().ok()?;
                    cur = Some(n);
                }
                ("S", 4) => {
                    let e = t.counts.get_mut(&cur?)?;
                    *e.steps.entry((f[1].parse().ok()?, hex(f[2])?)).or_default() += f[3].parse::<u64>().ok()?;
                }
                ("Y", 3) => {
                    let e = t.counts.get_mut(&cur?)?;
                    *e.syscalls.entry(f[1].parse().ok()?).or_default() += f[2].parse::<u64>().ok()?;
                }
                _ => {}
            }
        }
        Some(t)
    }
}

/// A system call's name on this architecture (`syscall_N` for a number it does not know).
pub fn syscall_name(nr: u64) -> String {
    match syscalls::Sysno::new(nr as usize) {
        Some(s) => s.name().to_string(),
        None => format!("syscall_{nr}"),
    }
}

impl StepTally {
    /// Every address the tally holds (instructions and call sites), once each.
    pub fn addresses(&self) -> Vec<u64> {
        let mut a: Vec<u64> = self.stacks.iter().flatten().copied().collect();
        a.extend(self.counts.values().flat_map(|t| t.steps.keys().map(|k| k.1)));
        a.extend(self.entries.values());
        a.sort_unstable();
        a.dedup();
        a
    }

    /// The tally with functions for addresses (`names`, from `crate::symbolize`): per count, its
    /// folded stacks and its system calls by name.
    ///
    /// An address no symbol covers is named after the entry of the function holding it, the
    /// target of the innermost open call (`module+0xoffset` of that entry, when it is in the same
    /// module), so a stripped library's function is one name, not one per instruction.
    pub fn profile(&self, names: &HashMap<u64, Named>) -> Profile {
        let module = |f: &str| f.split_once('+').map(|x| x.0.to_string()).unwrap_or_default();
        let place = |a: u64| names.get(&a).map(|n| n.place.clone()).unwrap_or_else(|| format!("{a:#x}"));
        let name = |a: u64, stack: &[u64]| -> String {
            if let Some(s) = names.get(&a).and_then(|n| n.symbol.clone()) {
                return s;
            }
            let entry = self.ids.get(stack).and_then(|id| self.entries.get(id)).copied();
            match entry {
                Some(e) if module(&place(e)) == module(&place(a)) => place(e),
                _ => place(a),
            }
        };
        let mut p = Profile::default();
        for a in self.addresses() {
            if let Some(Named { symbol: Some(s), place }) = names.get(&a) {
                p.modules.entry(s.clone()).or_insert_with(|| module(place));
            }
        }
        for (&n, t) in &self.counts {
            let mut c = CountProfile { user_instructions: n, calls: t.calls, ..Default::default() };
            for (&(sid, pc), &k) in &t.steps {
                let st = self.stacks.get(sid as usize).map(Vec::as_slice).unwrap_or_default();
                let mut frames: Vec<String> = (0..st.len()).map(|i| name(st[i], &st[..i])).collect();
                frames.push(name(pc, st));
                for f in &frames {
                    if !p.modules.contains_key(f) {
                        p.modules.insert(f.clone(), module(f));
                    }
                }
                *c.stacks.entry(frames.join(";")).or_default() += k;
            }
            for (&nr, &k) in &t.syscalls {
                *c.syscalls.entry(syscall_name(nr)).or_default() += k;
            }
            p.counts.push(c);
        }
        p.counts.sort_by_key(|c| c.user_instructions);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_tree_folds_into_stacks_that_sum_to_the_count() {
        // main: call f (0x10); f: 2 instructions, ret (0x20..0x28); main's next instruction.
        let mut t = StepTally::default();
        for _ in 0..2 {
            t.begin();
            t.step(0x10, Kind::Call);
            t.step(0x20, Kind::Plain);
            t.step(0x24, Kind::Syscall);
            t.syscall(1);
            t.step(0x28, Kind::Return);
            t.step(0x14, Kind::Plain);
            t.end(5, true);
        }
        // A disturbed call is on no path; a dropped vDSO pass is not counted.
        t.begin();
        t.step(0x10, Kind::Plain);
        t.end(1, false);
        t.begin();
        t.step(0x10, Kind::Plain);
        t.step(0x30, Kind::Plain);
        t.drop_last(1);
        t.end(1, true);
        let back = StepTally::parse(&t.lines()).unwrap();
        assert_eq!(back.stacks, t.stacks);
        assert_eq!((&back.entries, &back.ids), (&t.entries, &t.ids));
        assert_eq!(back.counts, t.counts);
        // f has no symbol: named after its entry (0x20), the same for its 3 instructions.
        let names: HashMap<u64, Named> =
            [(0x10, Some("main")), (0x14, Some("main")), (0x20, None), (0x24, None), (0x28, None), (0x30, Some("g"))]
                .into_iter()
                .map(|(a, n)| (a, Named { symbol: n.map(String::from), place: format!("libf.so+{a:#x}") }))
                .collect();
        let p = back.profile(&names);
        assert_eq!(p.counts.len(), 2);
        let five = &p.counts[1];
        assert_eq!((five.user_instructions, five.calls), (5, 2));
        assert_eq!(five.stacks["main"], 4);
        assert_eq!(five.stacks["main;libf.so+0x20"], 6);
        assert_eq!(p.modules["main"], "libf.so");
        assert_eq!(p.modules["libf.so+0x20"], "libf.so");
        assert_eq!(five.stacks.values().sum::<u64>(), 10);
        assert_eq!(five.syscalls[&syscall_name(1)], 2);
        assert_eq!(p.counts[0].stacks, [("main".to_string(), 1)].into());
        assert!(StepTally::parse("P 5 x").is_none());
        assert_eq!(syscall_name(1 << 20), "syscall_1048576");
    }
}
