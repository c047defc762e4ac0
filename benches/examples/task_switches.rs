//! How often each side of a tokio channel waits, and what a message costs,
//! asyncband against kanal: P producer tasks and one consumer task, bounded
//! 1, 64 or 4096, `u64`, 16,384 messages per run (P = 1 uses
//! `asyncband::spsc`, more `asyncband::mpsc`).
//!
//! The divan cells `tokio_runtime::*` time the same workloads; this probe
//! also counts the polls that returned `Pending` (each one is a task
//! switch), so a gap in time can be told apart from a gap in switches, and,
//! on two workers, how many of the producers' polls ran on the worker that
//! last polled the consumer ("together"): a run whose tasks share a worker
//! keeps every value in one core's cache, one whose tasks sit on different
//! workers moves each value across cores, and the two differ by about 2×.
//! (The counting itself is a shared atomic per poll, which makes the runs
//! whose tasks are apart slower still: compare the shares, not the times.)
//!
//! ```sh
//! cargo run --release -p asyncband-benches --example task_switches -- 16 64 4 0
//! ```
//!
//! runs 16 rounds at capacity 64 with 4 producers on a current-thread
//! runtime (the last argument is the number of tokio workers, 0 for
//! current-thread; defaults: 8 rounds, capacity 64, 1 producer, 2 workers),
//! alternating the two channels, 50 runs per round, and prints each round's
//! median ns per message and the `Pending` counts.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::runtime::Runtime;

/// Messages per run.
const MESSAGES: u64 = 16_384;
/// Runs per round; the round reports their median.
const RUNS: usize = 50;

/// A future that counts how many of its polls returned `Pending`, and
/// where it was polled.
struct Counted<'a, F> {
    future: F,
    pending: &'a AtomicUsize,
    /// The consumer's polls record their worker in it; the producers'
    /// polls count whether they ran there.
    place: &'a Place,
    consumer: bool,
}

/// Where the consumer was last polled, and where the producers were.
#[derive(Default)]
struct Place {
    consumer: AtomicUsize,
    together: AtomicUsize,
    apart: AtomicUsize,
}

/// An address unique to the calling thread, naming it.
fn this_thread() -> usize {
    thread_local!(static HERE: u8 = const { 0 });
    HERE.with(|here| std::ptr::from_ref(here) as usize)
}

impl<F: Future + Unpin> Future for Counted<'_, F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let here = this_thread();
        if self.consumer {
            self.place.consumer.store(here, Ordering::Relaxed);
        } else if self.place.consumer.load(Ordering::Relaxed) == here {
            self.place.together.fetch_add(1, Ordering::Relaxed);
        } else {
            self.place.apart.fetch_add(1, Ordering::Relaxed);
        }
        let polled = Pin::new(&mut self.future).poll(cx);
        if polled.is_pending() {
            self.pending.fetch_add(1, Ordering::Relaxed);
        }
        polled
    }
}

/// One run of one channel.
type Run = fn(&Runtime, &'static Waits, u64);

/// `Pending` polls of the sends and of the receives, over one round.
#[derive(Default)]
struct Waits {
    sends: AtomicUsize,
    recvs: AtomicUsize,
    place: Place,
}

/// A run of `producers` producers and one consumer over the channel whose
/// senders and receiver `$make(producers)` returns
/// (with `CAP` in scope), as the function `$name::<CAP>`.
macro_rules! run {
    ($name:ident, $make:expr) => {
        #[allow(
            unused_mut,
            reason = "kanal's and asyncband mpsc's endpoints need no `mut`"
        )]
        fn $name<const CAP: usize>(runtime: &Runtime, waits: &'static Waits, producers: u64) {
            runtime.block_on(async {
                let (senders, mut rx) = $make(producers);
                let per_producer = MESSAGES / producers;
                let consumer = tokio::spawn(async move {
                    let mut next = vec![0; usize::try_from(producers).expect("few producers")];
                    let mut received = 0;
                    while let Ok(value) = (Counted {
                        future: pin!(rx.recv()),
                        pending: &waits.recvs,
                        place: &waits.place,
                        consumer: true,
                    })
                    .await
                    {
                        let from = usize::try_from(value / per_producer).expect("few producers");
                        assert_eq!(value % per_producer, next[from], "out of order");
                        next[from] += 1;
                        received += 1;
                    }
                    received
                });
                let mut handles = Vec::new();
                for (producer, mut tx) in (0..).zip(senders) {
                    handles.push(tokio::spawn(async move {
                        for seq in 0..per_producer {
                            Counted {
                                future: pin!(tx.send(producer * per_producer + seq)),
                                pending: &waits.sends,
                                place: &waits.place,
                                consumer: false,
                            }
                            .await
                            .expect("receiver gone");
                        }
                    }));
                }
                for handle in handles {
                    handle.await.expect("producer panicked");
                }
                assert_eq!(consumer.await.expect("consumer panicked"), MESSAGES);
            });
        }
    };
}

/// `producers` senders of one channel and its receiver.
fn fan_out<Tx: Clone, Rx>((tx, rx): (Tx, Rx), producers: u64) -> (Vec<Tx>, Rx) {
    let mut senders = vec![tx; usize::try_from(producers).expect("few producers")];
    senders.shrink_to_fit();
    (senders, rx)
}

run!(asyncband_run, |producers| fan_out(
    asyncband::mpsc::Bounded::<u64, CAP>::channel(),
    producers
));
run!(asyncband_spsc_run, |producers| {
    assert_eq!(producers, 1, "spsc: one producer");
    let (tx, rx) = asyncband::spsc::Bounded::<u64, CAP>::channel();
    (vec![tx], rx)
});
run!(kanal_run, |producers| fan_out(
    kanal::bounded_async::<u64>(CAP),
    producers
));

/// One round of `RUNS` runs: median ns per message, `Pending` sends and
/// receives per run, and the share of the producers' polls that ran on the
/// consumer's worker.
#[allow(
    clippy::cast_precision_loss,
    reason = "run times and counts are far below 2^52"
)]
fn round(runtime: &Runtime, run: Run, producers: u64) -> (f64, f64, f64, f64) {
    let waits: &'static Waits = Box::leak(Box::default());
    let mut times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            run(runtime, waits, producers);
            start.elapsed().as_secs_f64() * 1e9 / MESSAGES as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let per_run = |count: &AtomicUsize| count.load(Ordering::Relaxed) as f64 / RUNS as f64;
    let together = per_run(&waits.place.together);
    let apart = per_run(&waits.place.apart);
    (
        times[RUNS / 2],
        per_run(&waits.sends),
        per_run(&waits.recvs),
        100.0 * together / (together + apart).max(1.0),
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args
        .next()
        .map_or(8, |n| n.parse().expect("rounds: a number"));
    let capacity = args.next().unwrap_or_else(|| "64".to_owned());
    let producers: u64 = args
        .next()
        .map_or(1, |n| n.parse().expect("producers: a number"));
    let workers: usize = args
        .next()
        .map_or(2, |n| n.parse().expect("workers: a number"));
    let (asyncband, kanal): (Run, Run) = match capacity.as_str() {
        "1" if producers == 1 => (asyncband_spsc_run::<1>, kanal_run::<1>),
        "64" if producers == 1 => (asyncband_spsc_run::<64>, kanal_run::<64>),
        "4096" if producers == 1 => (asyncband_spsc_run::<4096>, kanal_run::<4096>),
        "1" => (asyncband_run::<1>, kanal_run::<1>),
        "64" => (asyncband_run::<64>, kanal_run::<64>),
        "4096" => (asyncband_run::<4096>, kanal_run::<4096>),
        other => panic!("capacity {other}: 1, 64 or 4096"),
    };
    let runtime = if workers == 0 {
        tokio::runtime::Builder::new_current_thread().build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .build()
    }
    .expect("a runtime");
    println!(
        "capacity {capacity}\nround | channel | ns/msg (median of {RUNS}) | Pending sends/run | Pending recvs/run | producer polls on the consumer's worker"
    );
    for r in 0..rounds {
        for (name, run) in [("asyncband", asyncband), ("kanal", kanal)] {
            let (ns, sends, recvs, together) = round(&runtime, run, producers);
            println!("{r} | {name} | {ns:.1} | {sends:.0} | {recvs:.0} | {together:.0} %");
        }
    }
}
