use super::*;

fn info(nr_cpu_ids: u32, tsc: bool) -> KbenchInfo {
    KbenchInfo {
        abi_version: ABI_VERSION,
        nr_cpu_ids,
        flags: if tsc { INFO_TSC_STABLE } else { 0 },
        ..Default::default()
    }
}

#[test]
fn missing_device_says_how_to_fix() {
    let cfg = KernelCellConfig { device: PathBuf::from("/nonexistent/kbench"), ..Default::default() };
    let e = run_kernel_cell(&cfg).unwrap_err();
    assert!(matches!(e, KernelError::Open { .. }));
    assert!(e.to_string().contains("insmod"), "{e}");
}

#[test]
fn config_is_checked_before_the_ioctl() {
    let i = info(4, false);
    let ok = KernelCellConfig::default();
    assert!(to_abi_config(&ok, &i).is_ok());
    let cases = [
        KernelCellConfig { payload_size: 5, ..ok.clone() },
        KernelCellConfig { cpus: vec![], ..ok.clone() },
        KernelCellConfig { cpus: vec![1, 1], ..ok.clone() },
        KernelCellConfig { cpus: vec![4], ..ok.clone() },
        KernelCellConfig { iterations: 0, ..ok.clone() },
        KernelCellConfig { iterations: MAX_RECORDS, ..ok.clone() },
        KernelCellConfig { iterations: u64::MAX, ..ok.clone() },
        KernelCellConfig { clock: KernelClock::Tsc, ..ok.clone() },
        KernelCellConfig {
            counters: (0..5).map(|i| KernelCounter { name: format!("c{i}"), type_: 0, config: i }).collect(),
            ..ok.clone()
        },
    ];
    for c in &cases {
        assert!(matches!(to_abi_config(c, &i), Err(KernelError::Config(_))), "{c:?} accepted");
    }
    assert!(to_abi_config(&KernelCellConfig { clock: KernelClock::Tsc, ..ok }, &info(4, true)).is_ok());
}

#[test]
fn abi_config_carries_the_cell() {
    let cfg = KernelCellConfig {
        payload_size: 256,
        iterations: 1000,
        warmup: 7,
        cpus: vec![2, 0],
        counters: vec![KernelCounter { name: "instructions".into(), type_: 0, config: 1 }],
        ..Default::default()
    };
    let c = to_abi_config(&cfg, &info(4, false)).unwrap();
    assert_eq!((c.abi_version, c.size as usize), (ABI_VERSION, size_of::<KbenchConfig>()));
    assert_eq!((c.payload_size, c.iterations, c.warmup, c.max_discarded), (256, 1000, 7, 200));
    assert_eq!((c.n_cpus, c.cpus[0], c.cpus[1], c.n_counters), (2, 2, 0, 1));
    assert_eq!((c.counters[0].type_, c.counters[0].config), (0, 1));
}

#[test]
fn fired_counts_warmup_and_every_sample() {
    let s = |it, ns, flags| KbenchSample {
        iteration: it,
        ticks: ns,
        latency_ns: ns,
        counters: [11, 22, 33, 44],
        cpu: 3,
        flags,
    };
    let k = KernelSamples {
        clock: KernelClock::Ktime,
        tsc_khz: 0,
        run_id: 1,
        payload_size: 4,
        warmup: 10,
        counters: vec![
            CounterStatus { name: "cycles".into(), errno: Some(libc::ENOENT) },
            CounterStatus { name: "cpu-clock".into(), errno: None },
        ],
        per_cpu: vec![CpuSamples {
            cpu: 3,
            kept: 2,
            discarded: 1,
            samples: vec![s(0, 100, 0), s(1, 9000, SAMPLE_DISCARDED_NMI), s(2, 120, 0)],
        }],
        iterations: 2,
        max_discarded: 100,
    };
    assert_eq!(k.fired(), 13);
    assert!(k.short_cpus().is_empty());
    assert_eq!(k.per_cpu[0].discarded_with(SAMPLE_DISCARDED_NMI), 1);
    assert_eq!(k.per_cpu[0].discarded_with(SAMPLE_DISCARDED_COUNTER), 0);
    let short = KernelSamples { iterations: 3, ..k };
    assert_eq!(short.short_cpus().len(), 1);
}
