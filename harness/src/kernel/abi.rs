//! The ABI of `kbench-module/include/kbench_abi.h`, mirrored field by field and checked against
//! its sizes and ioctl numbers at compile time: a layout change on either side without the other
//! fails the build.
use std::mem::size_of;

use super::{MAX_COUNTERS, MAX_CPUS};

pub(super) const CLOCK_AUTO: u32 = 0;
pub(super) const CLOCK_TSC: u32 = 1;
pub(super) const CLOCK_KTIME: u32 = 2;
/// `kbench_sample.flags`: why the module discarded an iteration (bits; one sample can have both).
pub const SAMPLE_DISCARDED_NMI: u32 = 1;
/// A counter was not active on the CPU's PMU for the whole iteration: its delta is not the call's.
pub const SAMPLE_DISCARDED_COUNTER: u32 = 2;
pub const SAMPLE_DISCARDED_ALL: u32 = SAMPLE_DISCARDED_NMI | SAMPLE_DISCARDED_COUNTER;
pub(super) const INFO_TSC_STABLE: u32 = 1;

/// `struct kbench_info`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct KbenchInfo {
    pub abi_version: u32,
    pub info_size: u32,
    pub config_size: u32,
    pub sample_size: u32,
    pub read_size: u32,
    pub max_counters: u32,
    pub max_cpus: u32,
    pub max_read_chunk: u32,
    pub max_records: u64,
    pub clock: u32,
    pub flags: u32,
    pub tsc_khz: u64,
    pub nr_cpu_ids: u32,
    pub reserved0: u32,
    pub reserved: [u64; 4],
}

/// `struct kbench_counter`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct KbenchCounter {
    pub type_: u32,
    pub status: u32,
    pub config: u64,
}

/// `struct kbench_config`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KbenchConfig {
    pub abi_version: u32,
    pub size: u32,
    pub payload_size: u32,
    pub clock: u32,
    pub iterations: u64,
    pub warmup: u64,
    pub max_discarded: u64,
    pub n_counters: u32,
    pub n_cpus: u32,
    pub counters: [KbenchCounter; MAX_COUNTERS],
    pub cpus: [u32; MAX_CPUS],
    pub records: [u64; MAX_CPUS],
    pub kept: [u64; MAX_CPUS],
    pub discarded: [u64; MAX_CPUS],
    pub tsc_khz: u64,
    pub run_id: u64,
}

/// `struct kbench_sample`: one loop iteration.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct KbenchSample {
    pub iteration: u64,
    pub ticks: u64,
    pub latency_ns: u64,
    pub counters: [u64; MAX_COUNTERS],
    pub cpu: u32,
    pub flags: u32,
}

/// `struct kbench_read`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct KbenchRead {
    pub size: u32,
    pub cpu_index: u32,
    pub offset: u64,
    pub count: u64,
    pub buf: u64,
    pub copied: u64,
}

// The sizes the C header states (KBENCH_*_SIZE) and the module checks with BUILD_BUG_ON: a layout change on either
// side without the other fails the build here.
const _: () = assert!(size_of::<KbenchInfo>() == 96);
const _: () = assert!(size_of::<KbenchCounter>() == 16);
const _: () = assert!(size_of::<KbenchConfig>() == 1920);
const _: () = assert!(size_of::<KbenchSample>() == 64);
const _: () = assert!(size_of::<KbenchRead>() == 40);

pub(super) const IOC_MAGIC: u64 = 0xBE;
pub(super) const fn ioc(dir: u64, nr: u64, size: usize) -> u64 {
    // asm-generic/ioctl.h: dir in bits 30-31, size in 16-29, type in 8-15, nr in 0-7.
    (dir << 30) | ((size as u64) << 16) | (IOC_MAGIC << 8) | nr
}
pub(super) const IOC_WRITE: u64 = 1;
pub(super) const IOC_READ: u64 = 2;
pub const IOC_INFO: u64 = ioc(IOC_READ, 1, size_of::<KbenchInfo>());
pub const IOC_RUN: u64 = ioc(IOC_READ | IOC_WRITE, 2, size_of::<KbenchConfig>());
pub const IOC_READ_SAMPLES: u64 = ioc(IOC_READ | IOC_WRITE, 3, size_of::<KbenchRead>());
pub const IOC_EMPTY: u64 = ioc(0, 4, 0);
// Values printed by a C program using the header's macros.
const _: () = assert!(IOC_INFO == 0x8060_be01);
const _: () = assert!(IOC_RUN == 0xc780_be02);
const _: () = assert!(IOC_READ_SAMPLES == 0xc028_be03);
const _: () = assert!(IOC_EMPTY == 0xbe04);
