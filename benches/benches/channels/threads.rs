//! Cell 3: threads and the blocking API.
//!
//! Each iteration moves [`MESSAGES`] messages (or [`ROUND_TRIPS`] round
//! trips). The threads are spawned before the timer starts and wait at a
//! barrier; the timed part releases them, receives everything, checks it and
//! joins them. The calling thread is a consumer (in ping-pong, the pinger).
//!
//! rtrb has no blocking: it busy-spins (the floor for SPSC). rapidfire has
//! no blocking API and sits out (the spinning shapes are in cell 10). Peers
//! whose receiver is not `Clone` (tokio, thingbuf, std) sit out MPMC; rtrb
//! and thingbuf have no unbounded flavour.

use std::sync::{Arc, Barrier};
use std::thread::{self, JoinHandle};

use asyncband_benches::{Ascending, InOrder, Payload};
use divan::Bencher;
use divan::counter::ItemsCount;

#[allow(
    unused_imports,
    clippy::wildcard_imports,
    reason = "divan's `types = [..]` lists name the adapters; the glob keeps them in step with `peers/`"
)]
use crate::peers::*;

/// Messages per iteration, shared among the producers.
const MESSAGES: usize = 16_384;
/// Round trips per ping-pong iteration.
const ROUND_TRIPS: usize = 2_048;

/// Joins a thread, passing its panic on.
pub(crate) fn join<R>(handle: JoinHandle<R>) -> R {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Spawns one thread per sender, each waiting at `gate`, then sending
/// `per_producer` messages, each by `send`.
pub(crate) fn spawn_producers<T: Payload, Tx: Send + 'static>(
    txs: Vec<Tx>,
    per_producer: usize,
    gate: &Arc<Barrier>,
    send: fn(&mut Tx, T),
) -> Vec<JoinHandle<()>> {
    txs.into_iter()
        .enumerate()
        .map(|(producer, mut tx)| {
            let gate = Arc::clone(gate);
            thread::spawn(move || {
                gate.wait();
                for seq in 0..per_producer {
                    send(&mut tx, T::stamped(producer, seq));
                }
            })
        })
        .collect()
}

/// Producers → one consumer (the calling thread).
fn to_one<T: Payload, Tx: SendBlocking<T> + 'static, Rx: RecvBlocking<T>>(
    bencher: Bencher,
    make: impl Fn() -> (Vec<Tx>, Rx) + Sync,
) {
    bencher
        .counter(ItemsCount::new(MESSAGES))
        .with_inputs(|| {
            let (txs, rx) = make();
            let producers = txs.len();
            let gate = Arc::new(Barrier::new(producers + 1));
            let per_producer = MESSAGES / txs.len();
            let handles = spawn_producers(txs, per_producer, &gate, Tx::send_blocking);
            (gate, handles, rx, producers)
        })
        .bench_local_values(|(gate, handles, mut rx, producers)| {
            gate.wait();
            let mut check = InOrder::new(producers);
            while let Some(message) = rx.recv_blocking() {
                check.take(&message);
            }
            check.finish(MESSAGES / producers);
            handles.into_iter().for_each(join);
        });
}

/// Two producers → two consumers (the calling thread and one more).
fn two_to_two<
    T: Payload,
    Tx: SendBlocking<T> + Clone + 'static,
    Rx: RecvBlocking<T> + Clone + 'static,
>(
    bencher: Bencher,
    make: impl Fn() -> (Tx, Rx) + Sync,
) {
    const PRODUCERS: usize = 2;

    /// One consumer's share, checked.
    fn consume<T: Payload>(mut rx: impl RecvBlocking<T>) -> Ascending {
        let mut check = Ascending::new(PRODUCERS);
        while let Some(message) = rx.recv_blocking() {
            check.take(&message);
        }
        check
    }

    bencher
        .counter(ItemsCount::new(MESSAGES))
        .with_inputs(|| {
            let (tx, rx) = make();
            let gate = Arc::new(Barrier::new(PRODUCERS + 2));
            let producers = spawn_producers(
                fan_out(tx, PRODUCERS),
                MESSAGES / PRODUCERS,
                &gate,
                Tx::send_blocking,
            );
            let other = {
                let (gate, rx) = (Arc::clone(&gate), rx.clone());
                thread::spawn(move || {
                    gate.wait();
                    consume::<T>(rx)
                })
            };
            (gate, producers, other, rx)
        })
        .bench_local_values(|(gate, producers, other, rx)| {
            gate.wait();
            let mine = consume::<T>(rx);
            producers.into_iter().for_each(join);
            Ascending::finish([mine, join(other)], PRODUCERS, MESSAGES / PRODUCERS);
        });
}

/// SPSC 1 → 1 at capacity 1, 64 and 1024.
#[divan::bench(
    types = [AsyncbandSpsc, Rtrb, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc],
    consts = [1, 64, 1024],
    sample_size = 1,
    sample_count = 20,
)]
fn spsc_1to1<C: SyncBounded<u64, CAP>, const CAP: usize>(bencher: Bencher) {
    to_one::<u64, _, _>(bencher, || {
        let (tx, rx) = C::channel();
        (vec![tx], rx)
    });
}

/// SPSC 1 → 1, unbounded.
#[divan::bench(
    types = [AsyncbandSpsc, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, StdMpsc],
    sample_size = 1,
    sample_count = 20,
)]
fn spsc_1to1_unbounded<C: SyncUnbounded<u64>>(bencher: Bencher) {
    to_one::<u64, _, _>(bencher, || {
        let (tx, rx) = C::channel();
        (vec![tx], rx)
    });
}

/// MPSC 4 → 1 (oversubscribed on two cores), bounded 1024.
#[divan::bench(
    types = [AsyncbandMpsc, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc],
    sample_size = 1,
    sample_count = 20,
)]
fn mpsc_4to1_bounded_1024<C: SyncBounded<u64, 1024, Tx: Clone>>(bencher: Bencher) {
    to_one::<u64, _, _>(bencher, || {
        let (tx, rx) = C::channel();
        (fan_out(tx, 4), rx)
    });
}

/// MPSC 4 → 1 (oversubscribed on two cores), unbounded.
#[divan::bench(
    types = [AsyncbandMpsc, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, StdMpsc],
    sample_size = 1,
    sample_count = 20,
)]
fn mpsc_4to1_unbounded<C: SyncUnbounded<u64, Tx: Clone>>(bencher: Bencher) {
    to_one::<u64, _, _>(bencher, || {
        let (tx, rx) = C::channel();
        (fan_out(tx, 4), rx)
    });
}

/// MPMC 2 → 2, bounded 64.
#[divan::bench(
    types = [AsyncbandMpmc, Crossbeam, AsyncChannel, Flume, Kanal],
    sample_size = 1,
    sample_count = 20,
)]
fn mpmc_2to2_bounded_64<C: SyncBounded<u64, 64, Tx: Clone, Rx: Clone>>(bencher: Bencher) {
    two_to_two::<u64, _, _>(bencher, C::channel);
}

/// Ping-pong: a round trip over two capacity-1 channels, one value in
/// flight; the echo thread sends back what it received.
#[divan::bench(
    types = [AsyncbandSpsc, Rtrb, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc],
    sample_size = 1,
    sample_count = 20,
)]
fn ping_pong<C: SyncBounded<u64, 1>>(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(ROUND_TRIPS))
        .with_inputs(|| {
            let (ping_tx, mut ping_rx) = C::channel();
            let (mut pong_tx, pong_rx) = C::channel();
            let gate = Arc::new(Barrier::new(2));
            let echo = {
                let gate = Arc::clone(&gate);
                thread::spawn(move || {
                    gate.wait();
                    while let Some(value) = ping_rx.recv_blocking() {
                        pong_tx.send_blocking(value);
                    }
                })
            };
            (gate, echo, ping_tx, pong_rx)
        })
        .bench_local_values(|(gate, echo, mut ping_tx, mut pong_rx)| {
            gate.wait();
            for value in 0..ROUND_TRIPS as u64 {
                ping_tx.send_blocking(value);
                assert_eq!(pong_rx.recv_blocking(), Some(value));
            }
            drop(ping_tx);
            join(echo);
        });
}
