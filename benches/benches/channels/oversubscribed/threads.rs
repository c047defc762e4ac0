//! The oversubscribed shapes on OS threads.
//!
//! The threads are spawned before the timer starts and wait at a barrier;
//! the timed part releases them, receives and checks everything, and joins
//! them. The calling thread is the (first) consumer, or, in the round trip,
//! the side that sends the commands. Each consumer takes a fixed number of
//! messages, so a spinning consumer knows when it is done.
//!
//! `*_try_*`: the threads wait as [`Spin`] does, every implementation with
//! its `try_send` / `try_recv` (an unbounded tokio or std sender's `send`);
//! rapidfire plays these. `*_blocking_*`: they wait as [`Block`] does, with
//! each implementation's blocking API (asyncband's also with `wait =
//! yield`, which never parks); rapidfire and rtrb have none and sit out. Peers whose receiver is not `Clone` (tokio, thingbuf, std,
//! `rapidfire::mpsc`) sit out MPMC; rtrb and thingbuf have no unbounded
//! flavour; rtrb is SPSC and plays only the round trip.

#![allow(
    clippy::inline_always,
    reason = "the waiting loops must vanish into the workloads, as the peers' adapters do"
)]

use std::hint::spin_loop;
use std::sync::{Arc, Barrier};
use std::thread;

use asyncband_benches::{Ascending, Bytes, InOrder, Kib, Payload};
use divan::Bencher;
use divan::counter::ItemsCount;

use super::{COLLECTOR_PRODUCERS, COLLECTOR_SHARE, MESSAGES, ROUND_TRIPS};
#[allow(
    unused_imports,
    clippy::wildcard_imports,
    reason = "divan's `types = [..]` lists name the adapters; the glob keeps them in step with `peers/`"
)]
use crate::peers::*;
use crate::threads::{join, spawn_producers};

/// How a cell's threads wait for room and for values.
trait Wait: 'static {
    /// Sends `value`, waiting while the channel is full.
    fn send<T: Copy, Tx: TrySend<T> + SendBlocking<T>>(tx: &mut Tx, value: T);
    /// The next value, waiting while the channel is empty.
    fn recv<T, Rx: TryRecv<T> + RecvBlocking<T>>(rx: &mut Rx) -> T;
}

/// `try_send` / `try_recv` again and again, a `spin_loop` hint between
/// attempts and no yield: the loop rapidfire's benchmarks drive every
/// implementation with. A full `try_send` is retried with a copy of the
/// value (kanal's drops the value it could not send).
#[derive(Debug)]
struct Spin;

impl Wait for Spin {
    #[inline(always)]
    fn send<T: Copy, Tx: TrySend<T> + SendBlocking<T>>(tx: &mut Tx, value: T) {
        while !tx.try_send(value) {
            spin_loop();
        }
    }

    #[inline(always)]
    fn recv<T, Rx: TryRecv<T> + RecvBlocking<T>>(rx: &mut Rx) -> T {
        loop {
            if let Some(value) = rx.try_recv() {
                return value;
            }
            spin_loop();
        }
    }
}

/// Each implementation's own blocking `send` and `recv`.
#[derive(Debug)]
struct Block;

impl Wait for Block {
    #[inline(always)]
    fn send<T: Copy, Tx: TrySend<T> + SendBlocking<T>>(tx: &mut Tx, value: T) {
        tx.send_blocking(value);
    }

    #[inline(always)]
    fn recv<T, Rx: TryRecv<T> + RecvBlocking<T>>(rx: &mut Rx) -> T {
        rx.recv_blocking().expect("every sender left early")
    }
}

/// `producers` producer threads → one consumer (the calling thread),
/// `messages` in all.
fn to_one<
    W: Wait,
    T: Payload,
    Tx: TrySend<T> + SendBlocking<T> + Clone + 'static,
    Rx: TryRecv<T> + RecvBlocking<T>,
>(
    bencher: Bencher,
    producers: usize,
    messages: usize,
    make: impl Fn() -> (Tx, Rx) + Sync,
) {
    let per_producer = messages / producers;
    assert_eq!(per_producer * producers, messages, "an uneven share");
    bencher
        .counter(ItemsCount::new(messages))
        .with_inputs(|| {
            let (tx, rx) = make();
            let gate = Arc::new(Barrier::new(producers + 1));
            let handles = spawn_producers(
                fan_out(tx, producers),
                per_producer,
                &gate,
                W::send::<T, Tx>,
            );
            (gate, handles, rx)
        })
        .bench_local_values(|(gate, handles, mut rx)| {
            gate.wait();
            let mut check = InOrder::new(producers);
            for _ in 0..messages {
                check.take(&W::recv(&mut rx));
            }
            check.finish(per_producer);
            handles.into_iter().for_each(join);
        });
}

/// One consumer's share of the messages of `producers` producers,
/// checked.
fn consume<W: Wait>(
    mut rx: impl TryRecv<u64> + RecvBlocking<u64>,
    producers: usize,
    share: usize,
) -> Ascending {
    let mut check = Ascending::new(producers);
    for _ in 0..share {
        check.take(&W::recv(&mut rx));
    }
    check
}

/// `producers` producer threads → `consumers` consumers (the calling thread
/// and `consumers - 1` more), [`MESSAGES`] in all, each consumer taking an
/// equal share.
fn many_to_many<
    W: Wait,
    Tx: TrySend<u64> + SendBlocking<u64> + Clone + 'static,
    Rx: TryRecv<u64> + RecvBlocking<u64> + Clone + 'static,
>(
    bencher: Bencher,
    producers: usize,
    consumers: usize,
    make: impl Fn() -> (Tx, Rx) + Sync,
) {
    let (per_producer, per_consumer) = super::shares(producers, consumers);

    bencher
        .counter(ItemsCount::new(MESSAGES))
        .with_inputs(|| {
            let (tx, rx) = make();
            let gate = Arc::new(Barrier::new(producers + consumers));
            let senders = spawn_producers(
                fan_out(tx, producers),
                per_producer,
                &gate,
                W::send::<u64, Tx>,
            );
            let others: Vec<_> = (1..consumers)
                .map(|_| {
                    let (gate, rx) = (Arc::clone(&gate), rx.clone());
                    thread::spawn(move || {
                        gate.wait();
                        consume::<W>(rx, producers, per_consumer)
                    })
                })
                .collect();
            (gate, senders, others, rx)
        })
        .bench_local_values(|(gate, senders, others, rx)| {
            gate.wait();
            let mine = consume::<W>(rx, producers, per_consumer);
            senders.into_iter().for_each(join);
            let checks = std::iter::once(mine).chain(others.into_iter().map(join));
            Ascending::finish(checks, producers, per_producer);
        });
}

/// Round trips: the calling thread sends a command on one channel and
/// waits for its answer on another; an executor thread sends each command
/// back. Both spin ([`Spin`]).
fn round_trips<
    T: Payload,
    Tx: TrySend<T> + SendBlocking<T> + 'static,
    Rx: TryRecv<T> + RecvBlocking<T> + 'static,
>(
    bencher: Bencher,
    make: impl Fn() -> (Tx, Rx) + Sync,
) {
    bencher
        .counter(ItemsCount::new(ROUND_TRIPS))
        .with_inputs(|| {
            let (command_tx, mut command_rx) = make();
            let (mut reply_tx, reply_rx) = make();
            let gate = Arc::new(Barrier::new(2));
            let executor = {
                let gate = Arc::clone(&gate);
                thread::spawn(move || {
                    gate.wait();
                    for _ in 0..ROUND_TRIPS {
                        let command = Spin::recv(&mut command_rx);
                        Spin::send(&mut reply_tx, command);
                    }
                })
            };
            (gate, executor, command_tx, reply_rx)
        })
        .bench_local_values(|(gate, executor, mut command_tx, mut reply_rx)| {
            gate.wait();
            for seq in 0..ROUND_TRIPS {
                Spin::send(&mut command_tx, T::stamped(0, seq));
                assert_eq!(Spin::recv(&mut reply_rx).seq(), seq, "a wrong answer");
            }
            join(executor);
        });
}

/// N → 1 cells, bounded 1024, one per waiting and N.
macro_rules! to_one_bounded_1024 {
    ($($name:ident: $wait:ty, $producers:literal, [$($types:ty),*];)*) => {$(
        #[doc = concat!(stringify!($producers), " producers → 1 consumer, bounded 1024, waiting as [`", stringify!($wait), "`] does.")]
        #[divan::bench(types = [$($types),*], sample_size = 1, sample_count = 20)]
        fn $name<C: SyncBounded<u64, 1024, Tx: Clone>>(bencher: Bencher) {
            to_one::<$wait, u64, _, _>(bencher, $producers, MESSAGES, C::channel);
        }
    )*};
}

to_one_bounded_1024! {
    mpsc_try_4p_1024: Spin, 4, [AsyncbandMpsc, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc, RapidfireMpsc];
    mpsc_try_8p_1024: Spin, 8, [AsyncbandMpsc, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc, RapidfireMpsc];
    mpsc_try_32p_1024: Spin, 32, [AsyncbandMpsc, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc, RapidfireMpsc];
    mpsc_blocking_4p_1024: Block, 4, [AsyncbandMpsc, AsyncbandMpscYield, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc];
    mpsc_blocking_8p_1024: Block, 8, [AsyncbandMpsc, AsyncbandMpscYield, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc];
    mpsc_blocking_32p_1024: Block, 32, [AsyncbandMpsc, AsyncbandMpscYield, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc];
}

/// 4 producers → 4 consumers, bounded 1024, spinning.
#[divan::bench(
    types = [AsyncbandMpmc, Crossbeam, AsyncChannel, Flume, Kanal, Rapidfire],
    sample_size = 1,
    sample_count = 20,
)]
fn mpmc_try_4p4c_1024<C: SyncBounded<u64, 1024, Tx: Clone, Rx: Clone>>(bencher: Bencher) {
    many_to_many::<Spin, _, _>(bencher, 4, 4, C::channel);
}

/// 4 producers → 4 consumers, bounded 1024, blocking.
#[divan::bench(
    types = [AsyncbandMpmc, AsyncbandMpmcYield, Crossbeam, AsyncChannel, Flume, Kanal],
    sample_size = 1,
    sample_count = 20,
)]
fn mpmc_blocking_4p4c_1024<C: SyncBounded<u64, 1024, Tx: Clone, Rx: Clone>>(bencher: Bencher) {
    many_to_many::<Block, _, _>(bencher, 4, 4, C::channel);
}

/// The README demo's work queue: 2 producers → 4 consumers, bounded 1024,
/// blocking.
#[divan::bench(
    types = [AsyncbandMpmc, AsyncbandMpmcYield, Crossbeam, AsyncChannel, Flume, Kanal],
    sample_size = 1,
    sample_count = 20,
)]
fn mpmc_blocking_2p4c_1024<C: SyncBounded<u64, 1024, Tx: Clone, Rx: Clone>>(bencher: Bencher) {
    many_to_many::<Block, _, _>(bencher, 2, 4, C::channel);
}

/// Two readers → 1 consumer, bounded 4096, spinning, one cell per payload
/// size.
macro_rules! two_readers_try_4096 {
    ($($name:ident: $payload:ty;)*) => {$(
        #[doc = concat!("Two readers → 1 consumer, bounded 4096, spinning, `", stringify!($payload), "` payloads.")]
        #[divan::bench(
            types = [AsyncbandMpsc, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc, RapidfireMpsc],
            sample_size = 1,
            sample_count = 20,
        )]
        fn $name<C: SyncBounded<$payload, 4096, Tx: Clone>>(bencher: Bencher) {
            to_one::<Spin, $payload, _, _>(bencher, 2, MESSAGES, C::channel);
        }
    )*};
}

two_readers_try_4096! {
    two_readers_try_4096_64b: Bytes<64>;
    two_readers_try_4096_256b: Bytes<256>;
    two_readers_try_4096_1kib: Kib;
}

/// 40 producers → 1 consumer, unbounded, spinning.
#[divan::bench(
    types = [AsyncbandMpsc, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, StdMpsc, RapidfireMpsc],
    sample_size = 1,
    sample_count = 20,
)]
fn collector_try_40p_unbounded<C: SyncUnbounded<u64, Tx: Clone>>(bencher: Bencher) {
    to_one::<Spin, u64, _, _>(
        bencher,
        COLLECTOR_PRODUCERS,
        COLLECTOR_PRODUCERS * COLLECTOR_SHARE,
        C::channel,
    );
}

/// A command / response round trip, bounded 4096 both ways, 64-byte
/// payloads, spinning.
#[divan::bench(
    types = [AsyncbandSpsc, Rtrb, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc, RapidfireMpsc],
    sample_size = 1,
    sample_count = 20,
)]
fn round_trip_try_4096<C: SyncBounded<Bytes<64>, 4096>>(bencher: Bencher) {
    round_trips::<Bytes<64>, _, _>(bencher, C::channel);
}
