//! kbench-rust-client N WARMUP OUT_DIR: one kernel cell through harness/src/kernel/, written as events.csv,
//! discarded.csv and meta.txt (the same files as the lab's C runner), so that the lab checks the Rust ABI mirror
//! against the real module.
#[path = "../../../../harness/src/kernel/mod.rs"]
#[allow(dead_code)] // the lab uses part of the API
mod kernel;

use std::io::Write;
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: kbench-rust-client N WARMUP OUT_DIR");
        std::process::exit(2);
    }
    let (n, warmup, out) = (args[1].parse().unwrap_or(0), args[2].parse().unwrap_or(0), PathBuf::from(&args[3]));
    let counter = |name: &str, type_, config| kernel::KernelCounter { name: name.into(), type_, config };
    let cfg = kernel::KernelCellConfig {
        iterations: n,
        warmup,
        counters: vec![counter("cycles", 0, 0), counter("instructions", 0, 1), counter("cpu-clock", 1, 0)],
        ..Default::default()
    };
    let res = match kernel::run_kernel_cell(&cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kbench-rust-client: {e}");
            std::process::exit(1);
        }
    };
    std::fs::create_dir_all(&out).expect("output directory");
    // The samples as the lab's check reads them (the kept ones, with the columns it checks). The
    // harness writes the real output contract through harness/src/results; this fixture only
    // proves that the ABI mirror brings the module's samples back intact.
    let mut ev = String::from("tracer,threads,thread,cpu,iteration,latency_ns\n");
    for (t, c) in res.per_cpu.iter().enumerate() {
        for s in c.samples.iter().filter(|s| s.flags & kernel::SAMPLE_DISCARDED_ALL == 0) {
            ev.push_str(&format!("rust-client,{},{t},{},{},{}\n", res.per_cpu.len(), s.cpu, s.iteration, s.latency_ns));
        }
    }
    std::fs::write(out.join("events.csv"), ev).expect("events.csv");
    let mut m = std::fs::File::create(out.join("meta.txt")).expect("meta.txt");
    let kept: u64 = res.per_cpu.iter().map(|c| c.kept).sum();
    writeln!(m, "kind=rust-client\niterations={n}\nwarmup={warmup}\nkept={kept}\nfired={}", res.fired()).unwrap();
    writeln!(m, "clock={}\nrun_id={}", res.clock.name(), res.run_id).unwrap();
    for c in &res.counters {
        writeln!(
            m,
            "counter_{}={}",
            c.name,
            if c.supported() { "ok".into() } else { format!("errno {}", c.errno.unwrap()) }
        )
        .unwrap();
    }
    // The empty ioctl of the syscall benchmark, through the same Device type.
    let dev = kernel::Device::open(&cfg.device).expect("open");
    let ok = (0..100).all(|_| dev.empty() == 0);
    writeln!(m, "empty_ioctl={}", if ok { "ok" } else { "failed" }).unwrap();
    println!("kbench-rust-client: kept={kept} fired={} clock={}", res.fired(), res.clock.name());
}
