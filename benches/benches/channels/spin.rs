//! Cell 11: `wait = spin` flavours streaming between two threads, each on a
//! core of its own (this machine has two: one producer, one consumer), the
//! shape a spin channel is for.
//!
//! Each iteration moves [`MESSAGES`] `u64`s. The producer thread is spawned
//! and running before the timer starts, spinning on a start flag; the timed
//! part raises it and receives every message, checking their order. The
//! thread is joined after the timer stops. The
//! multi-producer flavours run with one producer too: their claim and wake
//! logic, on the two cores there are.
//!
//! The peers are the ones a busy-waiting program would use: rtrb (the floor,
//! a ring that cannot wait) in the SPSC cells, and kanal, crossbeam and
//! rapidfire driven the way such a program drives them, spinning on
//! `try_send` and `try_recv` ([`Busy`]).

use std::hint::spin_loop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

use asyncband_benches::{InOrder, Payload};
use divan::Bencher;
use divan::counter::ItemsCount;

#[allow(
    unused_imports,
    clippy::wildcard_imports,
    reason = "divan's `types = [..]` lists name the adapters; the glob keeps them in step with `peers/`"
)]
use crate::peers::*;

/// Messages per iteration.
const MESSAGES: usize = 16_384;

/// An endpoint of a peer driven by busy-polling: its blocking operations
/// spin on its `try_send` and `try_recv`.
#[derive(Debug)]
pub struct Busy<E>(E);

/// Markers for the peers driven by busy-polling, each named after its peer.
macro_rules! busy_poll {
    ($($(#[$doc:meta])* $name:ident => $peer:ty),* $(,)?) => {$(
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;

        impl<T: Payload, const CAP: usize> SyncBounded<T, CAP> for $name
        where
            $peer: SyncBounded<T, CAP>,
            <$peer as SyncBounded<T, CAP>>::Tx: Send,
            <$peer as SyncBounded<T, CAP>>::Rx: Send,
        {
            type Tx = Busy<<$peer as SyncBounded<T, CAP>>::Tx>;
            type Rx = Busy<<$peer as SyncBounded<T, CAP>>::Rx>;

            fn channel() -> (Self::Tx, Self::Rx) {
                let (tx, rx) = <$peer as SyncBounded<T, CAP>>::channel();
                (Busy(tx), Busy(rx))
            }
        }

        impl<T: Payload> SyncUnbounded<T> for $name
        where
            $peer: SyncUnbounded<T>,
            <$peer as SyncUnbounded<T>>::Tx: Send,
            <$peer as SyncUnbounded<T>>::Rx: Send,
        {
            type Tx = Busy<<$peer as SyncUnbounded<T>>::Tx>;
            type Rx = Busy<<$peer as SyncUnbounded<T>>::Rx>;

            fn channel() -> (Self::Tx, Self::Rx) {
                let (tx, rx) = <$peer as SyncUnbounded<T>>::channel();
                (Busy(tx), Busy(rx))
            }
        }
    )*};
}

busy_poll! {
    /// kanal, spinning on `try_send` and `try_recv`.
    KanalBusy => Kanal,
    /// crossbeam-channel, spinning on `try_send` and `try_recv`.
    CrossbeamBusy => Crossbeam,
    /// rapidfire (MPMC), spinning on `try_send` and `try_recv`.
    RapidfireBusy => Rapidfire,
    /// rapidfire's MPSC flavour, spinning on `try_send` and `try_recv`.
    RapidfireMpscBusy => RapidfireMpsc,
}

#[allow(
    clippy::inline_always,
    reason = "as in `peers/`: a call per message would be part of what is measured"
)]
mod busy {
    use super::{Busy, Payload, RecvBlocking, SendBlocking, TryRecv, TrySend, spin_loop};

    impl<T: Payload, Tx: TrySend<T>> TrySend<T> for Busy<Tx> {
        #[inline(always)]
        fn try_send(&mut self, value: T) -> bool {
            self.0.try_send(value)
        }
    }

    impl<T: Payload, Tx: TrySend<T> + Send> SendBlocking<T> for Busy<Tx> {
        #[inline(always)]
        fn send_blocking(&mut self, value: T) {
            // `Payload` is `Copy`: a refused value is sent again.
            while !self.0.try_send(value) {
                spin_loop();
            }
        }
    }

    impl<T, Rx: TryRecv<T>> TryRecv<T> for Busy<Rx> {
        #[inline(always)]
        fn try_recv(&mut self) -> Option<T> {
            self.0.try_recv()
        }
    }

    impl<T, Rx: TryRecv<T> + Send> RecvBlocking<T> for Busy<Rx> {
        /// Never `None`: `stream` takes a known number of messages.
        #[inline(always)]
        fn recv_blocking(&mut self) -> Option<T> {
            loop {
                if let Some(value) = self.0.try_recv() {
                    return Some(value);
                }
                spin_loop();
            }
        }
    }
}

/// One producer thread → the calling thread, [`MESSAGES`] in order.
///
/// Both threads pass a barrier before the timer starts, and the producer
/// then spins on a start flag (a spin channel's threads each have a core):
/// a sample times the stream, not the kernel waking a thread.
fn stream<Tx: SendBlocking<u64> + 'static, Rx: RecvBlocking<u64>>(
    bencher: Bencher,
    make: impl Fn() -> (Tx, Rx) + Sync,
) {
    bencher
        .counter(ItemsCount::new(MESSAGES))
        .with_inputs(|| {
            let (mut tx, rx) = make();
            let start = Arc::new(Start::default());
            let producer = {
                let start = Arc::clone(&start);
                thread::spawn(move || {
                    start.ready.wait();
                    while !start.go.load(Ordering::Acquire) {
                        spin_loop();
                    }
                    for seq in 0..MESSAGES {
                        tx.send_blocking(u64::stamped(0, seq));
                    }
                })
            };
            start.ready.wait();
            (start, producer, rx)
        })
        .bench_local_values(|(start, producer, mut rx)| {
            start.go.store(true, Ordering::Release);
            let mut check = InOrder::new(1);
            for _ in 0..MESSAGES {
                let message = rx.recv_blocking().expect("the producer sends them all");
                check.take(&message);
            }
            check.finish(MESSAGES);
            Joined(Some(producer))
        });
}

/// Joins the producer when divan drops a sample's output, after its timer
/// stopped: the thread's exit is not part of the stream.
struct Joined(Option<thread::JoinHandle<()>>);

impl Drop for Joined {
    fn drop(&mut self) {
        if let Some(Err(panic)) = self.0.take().map(thread::JoinHandle::join) {
            if !thread::panicking() {
                std::panic::resume_unwind(panic);
            }
        }
    }
}

/// The handshake of [`stream`]: the producer is `ready`, the timed part says
/// `go`.
#[derive(Debug)]
struct Start {
    ready: Barrier,
    go: AtomicBool,
}

impl Default for Start {
    fn default() -> Self {
        Self {
            ready: Barrier::new(2),
            go: AtomicBool::new(false),
        }
    }
}

/// SPSC, bounded 64 and 1024.
#[divan::bench(
    types = [AsyncbandSpscSpin, Rtrb, CrossbeamBusy, KanalBusy, RapidfireMpscBusy],
    consts = [64, 1024],
    sample_size = 1,
    sample_count = 20,
)]
fn spsc<C: SyncBounded<u64, CAP>, const CAP: usize>(bencher: Bencher) {
    stream(bencher, C::channel);
}

/// SPSC, unbounded.
#[divan::bench(
    types = [AsyncbandSpscSpin, CrossbeamBusy, KanalBusy, RapidfireMpscBusy],
    sample_size = 1,
    sample_count = 20,
)]
fn spsc_unbounded<C: SyncUnbounded<u64>>(bencher: Bencher) {
    stream(bencher, C::channel);
}

/// MPSC flavours, one producer, bounded 1024.
#[divan::bench(
    types = [AsyncbandMpscSpin, CrossbeamBusy, KanalBusy, RapidfireMpscBusy],
    sample_size = 1,
    sample_count = 20,
)]
fn mpsc_bounded_1024<C: SyncBounded<u64, 1024>>(bencher: Bencher) {
    stream(bencher, C::channel);
}

/// MPSC flavours, one producer, unbounded.
#[divan::bench(
    types = [AsyncbandMpscSpin, CrossbeamBusy, KanalBusy, RapidfireMpscBusy],
    sample_size = 1,
    sample_count = 20,
)]
fn mpsc_unbounded<C: SyncUnbounded<u64>>(bencher: Bencher) {
    stream(bencher, C::channel);
}

/// MPMC flavours, one producer and one consumer, bounded 1024.
#[divan::bench(
    types = [AsyncbandMpmcSpin, CrossbeamBusy, KanalBusy, RapidfireBusy],
    sample_size = 1,
    sample_count = 20,
)]
fn mpmc_bounded_1024<C: SyncBounded<u64, 1024>>(bencher: Bencher) {
    stream(bencher, C::channel);
}

/// MPMC flavours, one producer and one consumer, unbounded.
#[divan::bench(
    types = [AsyncbandMpmcSpin, CrossbeamBusy, KanalBusy, RapidfireBusy],
    sample_size = 1,
    sample_count = 20,
)]
fn mpmc_unbounded<C: SyncUnbounded<u64>>(bencher: Bencher) {
    stream(bencher, C::channel);
}
