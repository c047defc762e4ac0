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
//!
//! Two flags, anywhere among the arguments:
//!
//! - `--per-run` also prints every run as `ns/together%`. On two workers a
//!   run is either together (all but a few polls on one worker) or apart,
//!   and a process tends to stay in one mode for many runs in a row, so a
//!   round's median can hide which mode it measured.
//! - `--only asyncband` (or `--only kanal`) runs one channel: the runtime
//!   is shared by the rounds, and the other channel's runs change the
//!   state the next round starts from.

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

/// What one round measured.
struct Round {
    /// Median ns per message.
    ns: f64,
    /// `Pending` sends per run.
    sends: f64,
    /// `Pending` receives per run.
    recvs: f64,
    /// The share of the producers' polls that ran on the consumer's
    /// worker, in percent.
    together: f64,
    /// Every run as `ns/together%`, in order.
    runs: Vec<String>,
}

/// The percentage `part` is of `part + rest` (0 when both are 0).
#[allow(clippy::cast_precision_loss, reason = "poll counts are far below 2^52")]
fn share(part: usize, rest: usize) -> f64 {
    100.0 * part as f64 / (part + rest).max(1) as f64
}

/// One round of `RUNS` runs.
#[allow(
    clippy::cast_precision_loss,
    reason = "run times and counts are far below 2^52"
)]
fn round(runtime: &Runtime, run: Run, producers: u64) -> Round {
    let waits: &'static Waits = Box::leak(Box::default());
    let place = &waits.place;
    let mut runs = Vec::with_capacity(RUNS);
    let mut times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let together = place.together.load(Ordering::Relaxed);
            let apart = place.apart.load(Ordering::Relaxed);
            let start = Instant::now();
            run(runtime, waits, producers);
            let ns = start.elapsed().as_secs_f64() * 1e9 / MESSAGES as f64;
            let share = share(
                place.together.load(Ordering::Relaxed) - together,
                place.apart.load(Ordering::Relaxed) - apart,
            );
            runs.push(format!("{ns:.0}/{share:.0}%"));
            ns
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let per_run = |count: &AtomicUsize| count.load(Ordering::Relaxed) as f64 / RUNS as f64;
    Round {
        ns: times[RUNS / 2],
        sends: per_run(&waits.sends),
        recvs: per_run(&waits.recvs),
        together: share(
            place.together.load(Ordering::Relaxed),
            place.apart.load(Ordering::Relaxed),
        ),
        runs,
    }
}

fn main() {
    let mut per_run = false;
    let mut only = None;
    let mut positional = Vec::new();
    let mut given = std::env::args().skip(1);
    while let Some(arg) = given.next() {
        match arg.as_str() {
            "--per-run" => per_run = true,
            "--only" => only = Some(given.next().expect("--only asyncband or --only kanal")),
            _ => positional.push(arg),
        }
    }
    assert!(
        only.as_deref()
            .is_none_or(|name| ["asyncband", "kanal"].contains(&name)),
        "--only asyncband or --only kanal"
    );
    let mut args = positional.into_iter();
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
            if only.as_deref().is_some_and(|only| only != name) {
                continue;
            }
            let Round {
                ns,
                sends,
                recvs,
                together,
                runs,
            } = round(&runtime, run, producers);
            println!("{r} | {name} | {ns:.1} | {sends:.0} | {recvs:.0} | {together:.0} %");
            if per_run {
                println!("  runs: {}", runs.join(" "));
            }
        }
    }
}
