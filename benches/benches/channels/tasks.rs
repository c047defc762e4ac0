//! Producers → one consumer as tokio tasks, shared by cells 4, 5 and 6.
//!
//! The runtime is built once per bench and the channel before the timer
//! starts; the timed part spawns the consumer and the producer tasks on the
//! runtime, waits for all of them and checks what the consumer received.
//!
//! A diagnostic, not part of any cell: built with
//! `RUSTFLAGS="--cfg tokio_unstable"` and run with
//! `ASYNCBAND_BENCH_METRICS=1`, every sample of these benches also prints
//! tokio's runtime metrics for its run to stderr (see [`metrics`]).

use std::future::Future;

use asyncband_benches::{InOrder, Payload};
use divan::Bencher;
use divan::counter::ItemsCount;
use tokio::runtime::{Builder, Runtime};

use crate::peers::{Outcome, RecvAsync, ReserveAsync, SendAsync, SendPermit};

/// Messages per iteration, shared among the producers.
pub const MESSAGES: usize = 16_384;

/// A tokio current-thread runtime.
pub fn current_thread() -> Runtime {
    Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime")
}

/// A tokio runtime with two worker threads.
pub fn two_workers() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("a two-worker runtime")
}

/// How a producer task gets its messages into the channel.
pub trait Produce<T>: Send + 'static {
    /// Sends messages `0..count` of producer `producer`.
    fn produce(self, producer: usize, count: usize) -> impl Future<Output = ()> + Send;
}

/// Produces with `send(value).await`.
#[derive(Debug)]
pub struct BySend<Tx>(pub Tx);

impl<T: Payload, Tx: SendAsync<T> + 'static> Produce<T> for BySend<Tx> {
    async fn produce(self, producer: usize, count: usize) {
        let mut tx = self.0;
        for seq in 0..count {
            assert!(
                tx.send(T::stamped(producer, seq))
                    .await
                    .into_option()
                    .is_some(),
                "receiver gone"
            );
        }
    }
}

/// Produces with `reserve().await`, then `Permit::send(value)`.
#[derive(Debug)]
pub struct ByReserve<Tx>(pub Tx);

impl<T: Payload, Tx: ReserveAsync<T> + 'static> Produce<T> for ByReserve<Tx> {
    async fn produce(self, producer: usize, count: usize) {
        let mut tx = self.0;
        for seq in 0..count {
            let Some(permit) = tx.reserve().await.into_option() else {
                panic!("receiver gone");
            };
            permit.send(T::stamped(producer, seq));
        }
    }
}

/// Benches producer tasks → one consumer task on `runtime`, [`MESSAGES`]
/// messages in all.
pub fn to_one<T: Payload, P: Produce<T>, Rx: RecvAsync<T> + 'static>(
    bencher: Bencher,
    runtime: &Runtime,
    make: impl Fn() -> (Vec<P>, Rx) + Sync,
) {
    to_one_of(bencher, runtime, MESSAGES, make);
}

/// Benches producer tasks → one consumer task on `runtime`, `messages`
/// messages in all (a multiple of the number of producers).
pub fn to_one_of<T: Payload, P: Produce<T>, Rx: RecvAsync<T> + 'static>(
    bencher: Bencher,
    runtime: &Runtime,
    messages: usize,
    make: impl Fn() -> (Vec<P>, Rx) + Sync,
) {
    bencher
        .counter(ItemsCount::new(messages))
        .with_inputs(make)
        .bench_local_values(|(producers, mut rx)| {
            let count = producers.len();
            let per_producer = messages / count;
            assert_eq!(per_producer * count, messages, "an uneven share");
            #[cfg(tokio_unstable)]
            let before = metrics::Sample::take(runtime);
            runtime.block_on(async move {
                let consumer = tokio::spawn(async move {
                    let mut check = InOrder::new(count);
                    while let Some(message) = rx.recv().await.into_option() {
                        check.take(&message);
                    }
                    check
                });
                let producers: Vec<_> = producers
                    .into_iter()
                    .enumerate()
                    .map(|(producer, p)| tokio::spawn(p.produce(producer, per_producer)))
                    .collect();
                for producer in producers {
                    producer.await.expect("a producer task panicked");
                }
                consumer
                    .await
                    .expect("the consumer task panicked")
                    .finish(per_producer);
            });
            #[cfg(tokio_unstable)]
            metrics::report(runtime, &before, messages);
        });
}

/// Per-run tokio metrics for the two-worker cells (`tokio_unstable` only).
///
/// With `ASYNCBAND_BENCH_METRICS` set, each run prints
/// `ns/steals/parks/polls A:B/busy A:B/local A:B` to stderr: ns per message
/// (including the spawns), steal operations and parks over all workers, and
/// per worker the task polls tokio counts (it leaves out polls from the LIFO
/// slot), the busy microseconds and the local schedules. A run whose idle worker stayed
/// parked shows no steal and two parks; a run whose tasks were split shows
/// steals and dozens of parks.
#[cfg(tokio_unstable)]
mod metrics {
    use std::time::Instant;

    use tokio::runtime::Runtime;

    /// Counters summed or per worker (two at most are printed).
    pub struct Sample {
        at: Instant,
        steals: u64,
        parks: u64,
        polls: [u64; 2],
        busy_us: [u64; 2],
        local: [u64; 2],
    }

    impl Sample {
        pub fn take(runtime: &Runtime) -> Self {
            let metrics = runtime.metrics();
            let mut sample = Self {
                at: Instant::now(),
                steals: 0,
                parks: 0,
                polls: [0; 2],
                busy_us: [0; 2],
                local: [0; 2],
            };
            for worker in 0..metrics.num_workers() {
                sample.steals += metrics.worker_steal_operations(worker);
                sample.parks += metrics.worker_park_count(worker);
                if worker < 2 {
                    sample.polls[worker] = metrics.worker_poll_count(worker);
                    sample.busy_us[worker] =
                        u64::try_from(metrics.worker_total_busy_duration(worker).as_micros())
                            .unwrap_or(u64::MAX);
                    sample.local[worker] = metrics.worker_local_schedule_count(worker);
                }
            }
            sample
        }
    }

    /// Prints the run of `messages` messages since `before`, if asked to.
    pub fn report(runtime: &Runtime, before: &Sample, messages: usize) {
        if std::env::var_os("ASYNCBAND_BENCH_METRICS").is_none() {
            return;
        }
        let after = Sample::take(runtime);
        #[allow(clippy::cast_precision_loss, reason = "a diagnostic printout")]
        let ns = after.at.duration_since(before.at).as_nanos() as f64 / messages as f64;
        let d = |a: u64, b: u64| a.saturating_sub(b);
        eprint!(
            "{ns:.0}/s{}/p{}/polls {}:{}/busy {}:{}/local {}:{} ",
            d(after.steals, before.steals),
            d(after.parks, before.parks),
            d(after.polls[0], before.polls[0]),
            d(after.polls[1], before.polls[1]),
            d(after.busy_us[0], before.busy_us[0]),
            d(after.busy_us[1], before.busy_us[1]),
            d(after.local[0], before.local[0]),
            d(after.local[1], before.local[1]),
        );
    }
}
