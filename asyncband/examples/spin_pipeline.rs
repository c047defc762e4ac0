//! A pinned, busy-waiting pipeline: `wait = spin` channels between threads
//! that each have a core of their own.
//!
//! ```text
//! cargo run --release --example spin_pipeline
//! ```
//!
//! ```text
//! ticks (core 0) ──Tick──▶ filter (core 1) ──Tick──▶ main (core 2)
//! ```
//!
//! A spin channel never parks and never makes a system call while it
//! streams: a blocking send or receive spins until it can go on, and no
//! side ever looks for a waiter, so a publish is a plain store. That is what
//! a thread pinned to its own core wants: no wake-up latency, no kernel
//! entry. It is the wrong choice when there are more runnable threads than
//! cores: a spinning thread then burns the time slice its peer needs (use
//! the default, `wait = park`).
//!
//! Each stage is pinned to a core of its own (Linux). On a machine with
//! fewer than three cores the filter runs on the main thread instead, so
//! that no two spinning threads share a core. The program reports how many
//! ticks went through and the median and 99th percentile of their time
//! through the pipeline, and exits with status 1 if a tick was lost or
//! reordered.

use std::process::ExitCode;
use std::thread;
use std::time::{Duration, Instant};

use asyncband::channel;

/// Ticks sent through the pipeline.
const TICKS: u64 = if cfg!(debug_assertions) {
    20_000
} else {
    1_000_000
};

/// A market-data tick, stamped when it was made.
#[derive(Debug)]
struct Tick {
    seq: u64,
    price: u64,
    made: Instant,
}

/// Pins this thread to `core` where that is possible; a no-op elsewhere.
fn pin_to(core: usize) {
    #[cfg(target_os = "linux")]
    if let Ok(cores) = thread::available_parallelism() {
        // SAFETY: `set` is a plain, zeroed `cpu_set_t` on this stack, and
        // the calls read and write only it (pid 0 is this thread).
        unsafe {
            let mut set = std::mem::zeroed::<libc::cpu_set_t>();
            libc::CPU_SET(core % cores.get(), &mut set);
            libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &raw const set);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = core;
}

/// Keeps every tick with an even price.
fn keep(tick: &Tick) -> bool {
    tick.price % 2 == 0
}

fn main() -> ExitCode {
    let (mut ticks_tx, mut ticks_rx) = channel!(spsc, bounded = 1024, Tick, wait = spin);
    let (mut kept_tx, mut kept_rx) = channel!(spsc, bounded = 1024, Tick, wait = spin);
    let cores = thread::available_parallelism().map_or(1, usize::from);
    let three_stages = cores >= 3;
    println!(
        "{cores} cores: {}",
        if three_stages {
            "ticks, filter and main pinned to cores 0, 1 and 2"
        } else {
            "ticks on core 0, filter and main on core 1"
        }
    );

    let producer = thread::spawn(move || {
        pin_to(0);
        for seq in 0..TICKS {
            let tick = Tick {
                seq,
                price: 100_000 + seq % 97,
                made: Instant::now(),
            };
            ticks_tx
                .send_blocking(tick)
                .expect("the filter runs until the end");
        }
    });
    // A filter thread, or the ticks left for main to filter. Either loop
    // ends once the producer is gone and every tick is through.
    let (filter, mut unfiltered) = if three_stages {
        let filter = thread::spawn(move || {
            pin_to(1);
            for tick in &mut ticks_rx {
                if keep(&tick) {
                    kept_tx
                        .send_blocking(tick)
                        .expect("main runs until the end");
                }
            }
        });
        (Some(filter), None)
    } else {
        (None, Some(ticks_rx))
    };

    pin_to(if three_stages { 2 } else { 1 });
    let start = Instant::now();
    let mut latencies = Vec::with_capacity(usize::try_from(TICKS).unwrap_or(0));
    let mut last = None;
    let mut ordered = true;
    let mut take = |tick: Tick| {
        latencies.push(tick.made.elapsed());
        ordered &= last.is_none_or(|last| tick.seq > last);
        last = Some(tick.seq);
    };
    match &mut unfiltered {
        None => {
            while let Ok(tick) = kept_rx.recv_blocking() {
                take(tick);
            }
        }
        Some(ticks_rx) => {
            for tick in ticks_rx {
                if keep(&tick) {
                    take(tick);
                }
            }
        }
    }
    let elapsed = start.elapsed();
    producer.join().expect("the producer does not panic");
    if let Some(filter) = filter {
        filter.join().expect("the filter does not panic");
    }

    let expected = (0..TICKS)
        .filter(|seq| (100_000 + seq % 97) % 2 == 0)
        .count();
    latencies.sort_unstable();
    // The percentile `per_mille` / 1000.
    let at = |per_mille: usize| {
        let index = latencies.len().saturating_sub(1) * per_mille / 1000;
        latencies.get(index).copied().unwrap_or(Duration::ZERO)
    };
    println!(
        "{} of {TICKS} ticks kept in {elapsed:.2?}; through the pipeline: p50 {:.2?}, p99 {:.2?}",
        latencies.len(),
        at(500),
        at(990)
    );
    if latencies.len() == expected && ordered {
        println!("ok: every kept tick arrived once, in order");
        ExitCode::SUCCESS
    } else {
        println!("lost or reordered ticks: expected {expected} in order");
        ExitCode::FAILURE
    }
}
