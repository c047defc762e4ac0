//! How often each side of a tokio channel waits, and what a message costs,
//! asyncband against kanal: one producer task and one consumer task on a
//! two-worker runtime, bounded 1 or 64, `u64`, 16,384 messages per run.
//!
//! The divan cell `tokio_runtime::workers_2_p1` times the same workload; this
//! probe also counts the polls that returned `Pending` (each one is a task
//! switch), so a gap in time can be told apart from a gap in switches.
//!
//! ```sh
//! cargo run --release -p asyncband-benches --example task_switches -- 16 64
//! ```
//!
//! runs 16 rounds at capacity 64 (the other choice is 1), alternating the
//! two channels, 50 runs per round, and prints each round's median ns per
//! message and the `Pending` counts.

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

/// A future that counts how many of its polls returned `Pending`.
struct Counted<'a, F> {
    future: F,
    pending: &'a AtomicUsize,
}

impl<F: Future + Unpin> Future for Counted<'_, F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let polled = Pin::new(&mut self.future).poll(cx);
        if polled.is_pending() {
            self.pending.fetch_add(1, Ordering::Relaxed);
        }
        polled
    }
}

/// One run of one channel.
type Run = fn(&Runtime, &'static Waits);

/// `Pending` polls of the sends and of the receives, over one round.
#[derive(Default)]
struct Waits {
    sends: AtomicUsize,
    recvs: AtomicUsize,
}

/// A run of one producer and one consumer over the channel `$make` builds
/// (with `CAP` in scope), as the function `$name::<CAP>`.
macro_rules! run {
    ($name:ident, $make:expr) => {
        fn $name<const CAP: usize>(runtime: &Runtime, waits: &'static Waits) {
            runtime.block_on(async {
                #[allow(unused_mut, reason = "kanal's endpoints need no `mut`")]
                let (mut tx, mut rx) = $make;
                let consumer = tokio::spawn(async move {
                    let mut next = 0;
                    while let Ok(value) = (Counted {
                        future: pin!(rx.recv()),
                        pending: &waits.recvs,
                    })
                    .await
                    {
                        assert_eq!(value, next, "out of order");
                        next += 1;
                    }
                    next
                });
                let producer = tokio::spawn(async move {
                    for value in 0..MESSAGES {
                        Counted {
                            future: pin!(tx.send(value)),
                            pending: &waits.sends,
                        }
                        .await
                        .expect("receiver gone");
                    }
                });
                producer.await.expect("producer panicked");
                assert_eq!(consumer.await.expect("consumer panicked"), MESSAGES);
            });
        }
    };
}

run!(
    asyncband_run,
    asyncband::spsc::Bounded::<u64, CAP>::channel()
);
run!(kanal_run, kanal::bounded_async::<u64>(CAP));

/// One round of `RUNS` runs: median ns per message, `Pending` sends and
/// receives per run.
#[allow(
    clippy::cast_precision_loss,
    reason = "run times and counts are far below 2^52"
)]
fn round(runtime: &Runtime, run: Run) -> (f64, f64, f64) {
    let waits: &'static Waits = Box::leak(Box::default());
    let mut times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            run(runtime, waits);
            start.elapsed().as_secs_f64() * 1e9 / MESSAGES as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let per_run = |count: &AtomicUsize| count.load(Ordering::Relaxed) as f64 / RUNS as f64;
    (
        times[RUNS / 2],
        per_run(&waits.sends),
        per_run(&waits.recvs),
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args
        .next()
        .map_or(8, |n| n.parse().expect("rounds: a number"));
    let capacity = args.next().unwrap_or_else(|| "64".to_owned());
    let (asyncband, kanal): (Run, Run) = match capacity.as_str() {
        "1" => (asyncband_run::<1>, kanal_run::<1>),
        "64" => (asyncband_run::<64>, kanal_run::<64>),
        other => panic!("capacity {other}: 1 or 64"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("a two-worker runtime");
    println!(
        "capacity {capacity}\nround | channel | ns/msg (median of {RUNS}) | Pending sends/run | Pending recvs/run"
    );
    for r in 0..rounds {
        for (name, run) in [("asyncband", asyncband), ("kanal", kanal)] {
            let (ns, sends, recvs) = round(&runtime, run);
            println!("{r} | {name} | {ns:.1} | {sends:.0} | {recvs:.0}");
        }
    }
}
