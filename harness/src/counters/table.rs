//! The one table of counter names: each name `--counters` takes, with its perf_event_attr
//! `(type, config)` (include/uapi/linux/perf_event.h). Both sides use it: user-space groups
//! (`counters`) and the in-kernel counters of kbench-module (`runner::kernel_cell`).

/// PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE, PERF_TYPE_HW_CACHE.
pub const HARDWARE: u32 = 0;
pub const SOFTWARE: u32 = 1;
pub const HW_CACHE: u32 = 3;

/// `PERF_TYPE_HW_CACHE` config: cache id | op << 8 | result << 16 (op READ = 0; result ACCESS = 0,
/// MISS = 1).
const fn cache(id: u64, miss: bool) -> u64 {
    id | (if miss { 1 << 16 } else { 0 })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterDef {
    pub name: &'static str,
    pub type_: u32,
    pub config: u64,
}

const fn def(name: &'static str, type_: u32, config: u64) -> CounterDef {
    CounterDef { name, type_, config }
}

pub const TABLE: [CounterDef; 20] = [
    def("cycles", HARDWARE, 0),
    def("instructions", HARDWARE, 1),
    def("cache-references", HARDWARE, 2),
    def("cache-misses", HARDWARE, 3),
    def("branch-instructions", HARDWARE, 4),
    def("branch-misses", HARDWARE, 5),
    def("bus-cycles", HARDWARE, 6),
    def("ref-cycles", HARDWARE, 9),
    // Cache ids: L1D 0, L1I 1, LL 2, DTLB 3, ITLB 4.
    def("L1-dcache-load-misses", HW_CACHE, cache(0, true)),
    def("L1-dcache-loads", HW_CACHE, cache(0, false)),
    def("L1-icache-load-misses", HW_CACHE, cache(1, true)),
    def("LLC-load-misses", HW_CACHE, cache(2, true)),
    def("dTLB-load-misses", HW_CACHE, cache(3, true)),
    def("iTLB-load-misses", HW_CACHE, cache(4, true)),
    def("page-faults", SOFTWARE, 2),
    def("minor-faults", SOFTWARE, 5),
    def("major-faults", SOFTWARE, 6),
    def("context-switches", SOFTWARE, 3),
    def("cpu-migrations", SOFTWARE, 4),
    def("task-clock", SOFTWARE, 1),
];

pub fn lookup(name: &str) -> Option<CounterDef> {
    TABLE.iter().copied().find(|d| d.name == name)
}

/// A table entry as a perf-event2 event.
impl perf_event::events::Event for CounterDef {
    fn update_attrs(self, attr: &mut perf_event_open_sys::bindings::perf_event_attr) {
        attr.type_ = self.type_;
        attr.config = self.config;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Event, Hardware, Software};

    fn attrs(e: impl Event) -> (u32, u64) {
        // SAFETY: plain data.
        let mut a: perf_event_open_sys::bindings::perf_event_attr = unsafe { std::mem::zeroed() };
        e.update_attrs(&mut a);
        (a.type_, a.config)
    }

    /// The table agrees with perf-event2's own encodings of the same events.
    #[test]
    fn table_matches_the_kernel_abi_as_perf_event2_encodes_it() {
        let c = |which, result| Cache { which, operation: CacheOp::READ, result };
        let expect: [(&str, (u32, u64)); 8] = [
            ("cycles", attrs(Hardware::CPU_CYCLES)),
            ("ref-cycles", attrs(Hardware::REF_CPU_CYCLES)),
            ("L1-dcache-load-misses", attrs(c(CacheId::L1D, CacheResult::MISS))),
            ("L1-dcache-loads", attrs(c(CacheId::L1D, CacheResult::ACCESS))),
            ("dTLB-load-misses", attrs(c(CacheId::DTLB, CacheResult::MISS))),
            ("task-clock", attrs(Software::TASK_CLOCK)),
            ("minor-faults", attrs(Software::PAGE_FAULTS_MIN)),
            ("cpu-migrations", attrs(Software::CPU_MIGRATIONS)),
        ];
        for (name, want) in expect {
            assert_eq!(attrs(lookup(name).unwrap()), want, "{name}");
        }
        let mut names: Vec<&str> = TABLE.iter().map(|d| d.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), TABLE.len(), "no name twice");
    }
}
