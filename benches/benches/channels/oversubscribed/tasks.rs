//! The oversubscribed shapes as tokio tasks on a two-worker runtime, with
//! each implementation's `send` / `recv` futures.
//!
//! As in cells 4–6, the runtime is built once per bench and the channels
//! before the timer starts; the timed part spawns the tasks, waits for all
//! of them and checks what was received. Peers: those with an async API
//! (crossbeam-channel, std and rtrb have none); MPMC only those whose
//! receiver is `Clone`; thingbuf has no unbounded flavour.

use asyncband_benches::{Ascending, Bytes, Kib, Payload};
use divan::Bencher;
use divan::counter::ItemsCount;
use tokio::runtime::Runtime;

use super::{COLLECTOR_PRODUCERS, COLLECTOR_SHARE, MESSAGES, ROUND_TRIPS};
#[allow(
    unused_imports,
    clippy::wildcard_imports,
    reason = "divan's `types = [..]` lists name the adapters; the glob keeps them in step with `peers/`"
)]
use crate::peers::*;
use crate::tasks::{self, BySend, Produce};

/// `producers` producer tasks → `consumers` consumer tasks, [`MESSAGES`]
/// in all, each consumer taking an equal share.
fn many_to_many<Tx: SendAsync<u64> + Clone + 'static, Rx: RecvAsync<u64> + Clone + 'static>(
    bencher: Bencher,
    runtime: &Runtime,
    producers: usize,
    consumers: usize,
    make: impl Fn() -> (Tx, Rx) + Sync,
) {
    let (per_producer, per_consumer) = super::shares(producers, consumers);
    bencher
        .counter(ItemsCount::new(MESSAGES))
        .with_inputs(make)
        .bench_local_values(|(tx, rx)| {
            runtime.block_on(async move {
                let receivers: Vec<_> = (0..consumers)
                    .map(|_| {
                        let mut rx = rx.clone();
                        tokio::spawn(async move {
                            let mut check = Ascending::new(producers);
                            for _ in 0..per_consumer {
                                let Some(message) = rx.recv().await.into_option() else {
                                    panic!("every sender left early");
                                };
                                check.take(&message);
                            }
                            check
                        })
                    })
                    .collect();
                drop(rx);
                let senders: Vec<_> = fan_out(tx, producers)
                    .into_iter()
                    .enumerate()
                    .map(|(producer, tx)| tokio::spawn(BySend(tx).produce(producer, per_producer)))
                    .collect();
                for sender in senders {
                    sender.await.expect("a producer task panicked");
                }
                let mut checks = Vec::with_capacity(consumers);
                for receiver in receivers {
                    checks.push(receiver.await.expect("a consumer task panicked"));
                }
                Ascending::finish(checks, producers, per_producer);
            });
        });
}

/// Sends each of [`ROUND_TRIPS`] commands back.
async fn execute<T: Payload, Tx: SendAsync<T>, Rx: RecvAsync<T>>(
    mut commands: Rx,
    mut replies: Tx,
) {
    for _ in 0..ROUND_TRIPS {
        let Some(command) = commands.recv().await.into_option() else {
            panic!("the commanding task left early");
        };
        assert!(
            replies.send(command).await.into_option().is_some(),
            "receiver gone"
        );
    }
}

/// Sends [`ROUND_TRIPS`] commands, awaiting each one's answer.
async fn command<T: Payload, Tx: SendAsync<T>, Rx: RecvAsync<T>>(
    mut commands: Tx,
    mut replies: Rx,
) {
    for seq in 0..ROUND_TRIPS {
        assert!(
            commands
                .send(T::stamped(0, seq))
                .await
                .into_option()
                .is_some(),
            "receiver gone"
        );
        let Some(reply) = replies.recv().await.into_option() else {
            panic!("the executor left early");
        };
        assert_eq!(reply.seq(), seq, "a wrong answer");
    }
}

/// Round trips: one task sends a command on one channel and awaits its
/// answer on another; an executor task sends each command back.
fn round_trips<T: Payload, Tx: SendAsync<T> + 'static, Rx: RecvAsync<T> + 'static>(
    bencher: Bencher,
    runtime: &Runtime,
    make: impl Fn() -> (Tx, Rx) + Sync,
) {
    bencher
        .counter(ItemsCount::new(ROUND_TRIPS))
        .with_inputs(|| (make(), make()))
        .bench_local_values(|((command_tx, command_rx), (reply_tx, reply_rx))| {
            runtime.block_on(async move {
                let executor = tokio::spawn(execute::<T, _, _>(command_rx, reply_tx));
                let commander = tokio::spawn(command::<T, _, _>(command_tx, reply_rx));
                commander.await.expect("the commanding task panicked");
                executor.await.expect("the executor task panicked");
            });
        });
}

/// N → 1 cells, bounded 1024.
macro_rules! to_one_bounded_1024 {
    ($($name:ident: $producers:literal;)*) => {$(
        #[doc = concat!(stringify!($producers), " producer tasks → 1 consumer task, bounded 1024.")]
        #[divan::bench(
            types = [AsyncbandMpsc, Tokio, AsyncChannel, Flume, Kanal, Thingbuf, RapidfireMpsc],
            sample_size = 1,
            sample_count = 20,
        )]
        fn $name<C: AsyncBounded<u64, 1024, Tx: Clone>>(bencher: Bencher) {
            let runtime = tasks::two_workers();
            tasks::to_one_of::<u64, _, _>(bencher, &runtime, MESSAGES, || {
                let (tx, rx) = C::channel();
                (fan_out(tx, $producers).into_iter().map(BySend).collect(), rx)
            });
        }
    )*};
}

to_one_bounded_1024! {
    mpsc_4p_1024: 4;
    mpsc_8p_1024: 8;
    mpsc_32p_1024: 32;
}

/// 4 producer tasks → 4 consumer tasks, bounded 1024.
#[divan::bench(
    types = [AsyncbandMpmc, AsyncChannel, Flume, Kanal, Rapidfire],
    sample_size = 1,
    sample_count = 20,
)]
fn mpmc_4p4c_1024<C: AsyncBounded<u64, 1024, Tx: Clone, Rx: Clone>>(bencher: Bencher) {
    let runtime = tasks::two_workers();
    many_to_many(bencher, &runtime, 4, 4, C::channel);
}

/// Two reader tasks → 1 consumer task, bounded 4096, one cell per payload
/// size.
macro_rules! two_readers_4096 {
    ($($name:ident: $payload:ty;)*) => {$(
        #[doc = concat!("Two reader tasks → 1 consumer task, bounded 4096, `", stringify!($payload), "` payloads.")]
        #[divan::bench(
            types = [AsyncbandMpsc, Tokio, AsyncChannel, Flume, Kanal, Thingbuf, RapidfireMpsc],
            sample_size = 1,
            sample_count = 20,
        )]
        fn $name<C: AsyncBounded<$payload, 4096, Tx: Clone>>(bencher: Bencher) {
            let runtime = tasks::two_workers();
            tasks::to_one_of::<$payload, _, _>(bencher, &runtime, MESSAGES, || {
                let (tx, rx) = C::channel();
                (fan_out(tx, 2).into_iter().map(BySend).collect(), rx)
            });
        }
    )*};
}

two_readers_4096! {
    two_readers_4096_64b: Bytes<64>;
    two_readers_4096_256b: Bytes<256>;
    two_readers_4096_1kib: Kib;
}

/// 40 producer tasks → 1 consumer task, unbounded.
#[divan::bench(
    types = [AsyncbandMpsc, Tokio, AsyncChannel, Flume, Kanal, RapidfireMpsc],
    sample_size = 1,
    sample_count = 20,
)]
fn collector_40p_unbounded<C: AsyncUnbounded<u64, Tx: Clone>>(bencher: Bencher) {
    let runtime = tasks::two_workers();
    tasks::to_one_of::<u64, _, _>(
        bencher,
        &runtime,
        COLLECTOR_PRODUCERS * COLLECTOR_SHARE,
        || {
            let (tx, rx) = C::channel();
            (
                fan_out(tx, COLLECTOR_PRODUCERS)
                    .into_iter()
                    .map(BySend)
                    .collect(),
                rx,
            )
        },
    );
}

/// A command / response round trip between two tasks, bounded 4096 both
/// ways, 64-byte payloads.
#[divan::bench(
    types = [AsyncbandSpsc, Tokio, AsyncChannel, Flume, Kanal, Thingbuf, RapidfireMpsc],
    sample_size = 1,
    sample_count = 20,
)]
fn round_trip_4096<C: AsyncBounded<Bytes<64>, 4096>>(bencher: Bencher) {
    let runtime = tasks::two_workers();
    round_trips::<Bytes<64>, _, _>(bencher, &runtime, C::channel);
}
