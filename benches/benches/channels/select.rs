//! Cell 7: a thread selecting over two receivers, one of them idle.
//!
//! One producer thread sends [`MESSAGES`] messages with `send_blocking` into
//! a bounded channel of 1024; the calling thread receives them through a
//! select over that channel and a second one on which nothing is sent (its
//! sender stays alive, so it never completes). Each peer uses its own
//! select: asyncband's `select!`, crossbeam-channel's `select!`, flume's
//! `Selector`. The producer is spawned before the timer starts and waits at
//! a barrier; the timed part releases it, receives and checks everything,
//! and joins it.

#![allow(
    clippy::inline_always,
    reason = "the selects must vanish into the workload, as the peers' adapters do"
)]

use std::sync::{Arc, Barrier};
use std::thread::{self, JoinHandle};

use divan::Bencher;
use divan::counter::ItemsCount;

use crate::peers::{AsyncbandMpsc, Crossbeam, Flume};

/// Messages per iteration.
const MESSAGES: usize = 16_384;
/// The bound of the busy channel.
const CAP: usize = 1024;

/// An implementation's select over two receivers of `usize`, for this
/// cell: implemented on the peers' marker types, each with its own select.
trait SelectTwo {
    type Tx: Send + 'static;
    type Rx;
    /// A bounded channel of [`CAP`].
    fn channel() -> (Self::Tx, Self::Rx);
    /// Sends, parking while the channel is full.
    fn send_blocking(tx: &mut Self::Tx, value: usize);
    /// One select over `busy` and `idle`: the value received from `busy`,
    /// or `None` once it is closed and drained.
    fn select(busy: &mut Self::Rx, idle: &mut Self::Rx) -> Option<usize>;
}

impl SelectTwo for AsyncbandMpsc {
    type Tx = asyncband::mpsc::Sender<asyncband::mpsc::Bounded<usize, CAP>>;
    type Rx = asyncband::mpsc::Receiver<asyncband::mpsc::Bounded<usize, CAP>>;

    fn channel() -> (Self::Tx, Self::Rx) {
        asyncband::mpsc::bounded()
    }

    #[inline(always)]
    fn send_blocking(tx: &mut Self::Tx, value: usize) {
        tx.send_blocking(value).unwrap();
    }

    #[inline(always)]
    fn select(busy: &mut Self::Rx, idle: &mut Self::Rx) -> Option<usize> {
        asyncband::select! {
            recv(busy) -> msg => msg.ok(),
            recv(idle) -> _ => unreachable!("nothing is sent on the idle channel"),
        }
    }
}

impl SelectTwo for Crossbeam {
    type Tx = crossbeam_channel::Sender<usize>;
    type Rx = crossbeam_channel::Receiver<usize>;

    fn channel() -> (Self::Tx, Self::Rx) {
        crossbeam_channel::bounded(CAP)
    }

    #[inline(always)]
    fn send_blocking(tx: &mut Self::Tx, value: usize) {
        tx.send(value).unwrap();
    }

    #[inline(always)]
    fn select(busy: &mut Self::Rx, idle: &mut Self::Rx) -> Option<usize> {
        crossbeam_channel::select! {
            recv(busy) -> msg => msg.ok(),
            recv(idle) -> _ => unreachable!("nothing is sent on the idle channel"),
        }
    }
}

impl SelectTwo for Flume {
    type Tx = flume::Sender<usize>;
    type Rx = flume::Receiver<usize>;

    fn channel() -> (Self::Tx, Self::Rx) {
        flume::bounded(CAP)
    }

    #[inline(always)]
    fn send_blocking(tx: &mut Self::Tx, value: usize) {
        tx.send(value).unwrap();
    }

    #[inline(always)]
    fn select(busy: &mut Self::Rx, idle: &mut Self::Rx) -> Option<usize> {
        flume::Selector::new()
            .recv(busy, Result::ok)
            .recv(idle, |_| {
                unreachable!("nothing is sent on the idle channel")
            })
            .wait()
    }
}

/// One producer thread → the calling thread, which receives through a
/// select over the busy channel and an idle one.
#[divan::bench(types = [AsyncbandMpsc, Crossbeam, Flume], sample_size = 1, sample_count = 20)]
fn two_receivers_one_idle<C: SelectTwo>(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(MESSAGES))
        .with_inputs(|| {
            let (mut tx, busy) = C::channel();
            let idle = C::channel();
            let gate = Arc::new(Barrier::new(2));
            let producer: JoinHandle<()> = {
                let gate = Arc::clone(&gate);
                thread::spawn(move || {
                    gate.wait();
                    for seq in 0..MESSAGES {
                        C::send_blocking(&mut tx, seq);
                    }
                })
            };
            (gate, producer, busy, idle)
        })
        .bench_local_values(|(gate, producer, mut busy, (idle_tx, mut idle))| {
            gate.wait();
            let (mut count, mut sum) = (0, 0);
            while let Some(seq) = C::select(&mut busy, &mut idle) {
                count += 1;
                sum += seq;
            }
            assert_eq!(count, MESSAGES, "every message arrived");
            assert_eq!(sum, MESSAGES * (MESSAGES - 1) / 2, "each exactly once");
            drop(idle_tx);
            producer
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        });
}
