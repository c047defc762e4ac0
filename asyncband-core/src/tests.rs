//! Loom models of every protocol of the core, compiled only under
//! `--cfg asyncband_loom`.
//!
//! Run them all with `cargo x loom`, which is
//!
//! ```text
//! LOOM_MAX_PREEMPTIONS=2 RUSTFLAGS="--cfg asyncband_loom" \
//!     cargo test -p asyncband-core --lib --release
//! ```
//!
//! (`cargo x loom --quick` runs the subset CI uses). Under `asyncband_loom`
//! unbounded blocks hold three slots, and capacities here are 1 or 2, so the
//! rare transitions (a full ring, a block boundary, a recycled block) happen
//! in every model.
//!
//! Each model asserts what it is named after; a lost wake-up shows up as a
//! loom deadlock (every thread parked), a lost or duplicated value as a
//! failed assertion, a data race or use-after-free as a loom cell error.
//!
//! What loom does not model: `SeqCst` loads and stores are only
//! acquire/release to it, so the core makes them read-modify-writes under
//! loom (`sync.rs`), which is at least as strong; `membarrier` is never
//! used (every fence stays `FENCED`, so the plain-store publish and its
//! barrier are argued in `wait/fence.rs`, not checked); spinning is a loom
//! yield, and no timeout ever fires.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use crate::Arc;
use crate::arity::{Many, One};
use crate::chan::{Chan, Recv, Send as SendFuture};
use crate::endpoint::{self, Pusher, Units};
use crate::error::{RecvTimeoutError, TrySendError};
use crate::list::List;
use crate::ring::Ring;
use crate::storage::{Storage, conjured};
use crate::wait::{Queue, QueueNode, WaitSet};

/// Sends now through a channel with many producers.
fn try_send<S: Storage<Senders = Many>>(
    chan: &Chan<S>,
    value: S::Item,
) -> Result<(), TrySendError<S::Item>> {
    // SAFETY: many producers: the cursor holds nothing.
    unsafe { chan.try_send(conjured(), value) }
}

/// A channel of many consumers with a second receiver counted in, for the
/// models where two threads receive (their cursors, `()`, hold nothing).
fn two_receivers<S: Storage<Cursor = ()>>() -> Arc<Chan<S>> {
    let chan = Chan::<S>::new();
    assert!(chan.try_count_in(true));
    chan
}

/// Sends through the blocking API (which parks while full), with the
/// producer's `cursor`.
fn send<S: Storage>(chan: &Chan<S>, cursor: &mut S::ProducerCursor, value: S::Item) {
    // SAFETY: callers use one thread and the channel's one producer cursor
    // where producers are single, and several threads only for `Many`
    // producers, whose cursors hold nothing.
    let sent = unsafe { chan.send_blocking(cursor, value, None) };
    assert!(sent.is_ok(), "closed unexpectedly");
}

/// Receives through the blocking API (which parks while empty), with the
/// consumer's `cursor`.
fn recv<S: Storage>(chan: &Chan<S>, cursor: &mut S::Cursor) -> S::Item {
    // SAFETY: one consumer thread, with the channel's one cursor, where
    // consumers are single.
    match unsafe { chan.recv_blocking(cursor, None) } {
        Ok(value) => value,
        Err(error) => panic!("closed unexpectedly: {error}"),
    }
}

#[test]
fn ring_claims_and_publishes_every_value_once_at_capacity_1_with_two_producers() {
    loom::model(|| {
        let chan = Chan::<Ring<u32, 1, Many, One>>::new();
        let mut cursor = chan.cursor();
        let producers: Vec<_> = (0..2)
            .map(|id| {
                let chan = chan.clone();
                thread::spawn(move || send(&chan, &mut (), id))
            })
            .collect();
        let mut got = vec![recv(&chan, &mut cursor), recv(&chan, &mut cursor)];
        for producer in producers {
            producer.join().unwrap();
        }
        got.sort_unstable();
        assert_eq!(got, [0, 1]);
    });
}

#[test]
fn ring_keeps_each_producers_order_at_capacity_2() {
    loom::model(|| {
        let chan = Chan::<Ring<(u32, u32), 2, Many, One>>::new();
        let mut cursor = chan.cursor();
        try_send(&chan, (0, 0)).unwrap();
        let producer = {
            let chan = chan.clone();
            thread::spawn(move || {
                send(&chan, &mut (), (1, 0));
                send(&chan, &mut (), (1, 1));
            })
        };
        let got: Vec<_> = (0..3).map(|_| recv(&chan, &mut cursor)).collect();
        producer.join().unwrap();
        let ones: Vec<u32> = got
            .iter()
            .filter(|(p, _)| *p == 1)
            .map(|(_, s)| *s)
            .collect();
        assert_eq!(ones, [0, 1]);
    });
}

/// A `try_recv` after the caller's own completed send is never `Empty`,
/// even when another producer's write ahead of that value is in flight:
/// only a write with nothing published behind it may be reported empty.
/// With `polling_first`, the consumer's `try_recv` finds the channel empty
/// before anything is sent, so a single consumer then reads "empty" from the
/// head slot alone and the producers' claim marks must keep that exact.
/// `skip` values are sent and received first, which moves the race onto a
/// list's block boundary.
fn try_recv_after_own_send<S>(polling_first: bool, skip: u32)
where
    S: Storage<Item = u32, Senders = Many> + 'static,
{
    loom::model(move || {
        let chan = Chan::<S>::new();
        let mut cursor = chan.cursor();
        if polling_first {
            // SAFETY: this thread is the only consumer.
            let empty = unsafe { chan.try_recv(&mut cursor) };
            assert!(empty.is_err(), "nothing was sent yet");
        }
        for value in 10..10 + skip {
            try_send(&chan, value).unwrap();
            // SAFETY: this thread is the only consumer.
            assert_eq!(unsafe { chan.try_recv(&mut cursor) }, Ok(value));
        }
        let other = {
            let chan = chan.clone();
            thread::spawn(move || try_send(&chan, 1).unwrap())
        };
        try_send(&chan, 2).unwrap();
        // SAFETY: this thread is the only consumer.
        let first = unsafe { chan.try_recv(&mut cursor) };
        other.join().unwrap();
        assert!(matches!(first, Ok(1 | 2)), "{first:?}");
    });
}

#[test]
fn a_polling_try_recv_never_reports_empty_before_a_published_value() {
    try_recv_after_own_send::<Ring<u32, 2, Many, One>>(true, 0);
}

#[test]
fn a_polling_try_recv_never_reports_empty_before_a_published_value_mpsc_list() {
    try_recv_after_own_send::<List<u32, Many, One>>(true, 0);
}

#[test]
fn a_polling_try_recv_never_reports_empty_before_a_value_in_the_next_block() {
    // The race is on the last slot of the first block and the first of the
    // second.
    try_recv_after_own_send::<List<u32, Many, One>>(
        true,
        u32::try_from(crate::list::BLOCK).unwrap() - 1,
    );
}

#[test]
fn a_polling_try_recv_never_reports_empty_before_a_published_value_mpmc_ring() {
    try_recv_after_own_send::<Ring<u32, 2, Many, Many>>(true, 0);
}

/// Many polling consumers: one that reads the head another moved acquires
/// the sends before that move, so it never reads "empty" from a slot whose
/// value (or mark) such a send left.
#[test]
fn polling_consumers_never_report_empty_while_a_value_sent_before_is_queued() {
    loom::model(|| {
        let chan = two_receivers::<Ring<u32, 2, Many, Many>>();
        // SAFETY: consumers of a `Many` ring hold nothing in their cursor.
        let empty = unsafe { chan.try_recv(&mut ()) };
        assert!(empty.is_err(), "nothing was sent yet");
        try_send(&chan, 10).unwrap();
        try_send(&chan, 11).unwrap();
        let reader = {
            let chan = chan.clone();
            // SAFETY: as above.
            thread::spawn(move || unsafe { chan.try_recv(&mut ()) })
        };
        // SAFETY: as above.
        let taken = unsafe { chan.try_recv(&mut ()) };
        let other = {
            let chan = chan.clone();
            thread::spawn(move || send(&chan, &mut (), 1))
        };
        send(&chan, &mut (), 2);
        // SAFETY: as above.
        let after = unsafe { chan.try_recv(&mut ()) };
        let read = reader.join().unwrap();
        other.join().unwrap();
        // Each found one of the values sent before it and not yet taken.
        assert!(
            read.is_ok() && taken.is_ok() && after.is_ok(),
            "{read:?} {taken:?} {after:?}"
        );
        let mut got = [read, taken, after].map(Result::unwrap);
        got.sort_unstable();
        assert!(got.windows(2).all(|w| w[0] != w[1]), "{got:?}");
    });
}

#[test]
fn a_try_recv_after_its_own_send_waits_out_a_write_ahead_of_it_mpsc_ring() {
    try_recv_after_own_send::<Ring<u32, 2, Many, One>>(false, 0);
}

#[test]
fn a_try_recv_after_its_own_send_waits_out_a_write_ahead_of_it_mpmc_ring() {
    try_recv_after_own_send::<Ring<u32, 2, Many, Many>>(false, 0);
}

#[test]
fn ring_with_two_consumers_delivers_each_value_to_exactly_one() {
    loom::model(|| {
        let chan = two_receivers::<Ring<u32, 2, Many, Many>>();
        let consumer = {
            let chan = chan.clone();
            thread::spawn(move || recv(&chan, &mut ()))
        };
        try_send(&chan, 1).unwrap();
        try_send(&chan, 2).unwrap();
        let mine = recv(&chan, &mut ());
        let theirs = consumer.join().unwrap();
        let mut all = [mine, theirs];
        all.sort_unstable();
        assert_eq!(all, [1, 2]);
    });
}

#[test]
fn spsc_ring_hands_values_over_in_order() {
    loom::model(|| {
        let chan = Chan::<Ring<u32, 1, One, One>>::new();
        let (mut tail, mut cursor) = (chan.producer_cursor(), chan.cursor());
        let producer = {
            let chan = chan.clone();
            thread::spawn(move || {
                send(&chan, &mut tail, 1);
                send(&chan, &mut tail, 2);
            })
        };
        assert_eq!([recv(&chan, &mut cursor), recv(&chan, &mut cursor)], [1, 2]);
        producer.join().unwrap();
    });
}

#[test]
fn list_crosses_block_boundaries_without_losing_order() {
    loom::model(|| {
        let chan = Chan::<List<(u32, u32), Many, One>>::new();
        let mut cursor = chan.cursor();
        let producer = {
            let chan = chan.clone();
            thread::spawn(move || {
                send(&chan, &mut (), (1, 0));
                send(&chan, &mut (), (1, 1));
            })
        };
        send(&chan, &mut (), (0, 0));
        let got: Vec<_> = (0..3).map(|_| recv(&chan, &mut cursor)).collect();
        producer.join().unwrap();
        let ones: Vec<u32> = got
            .iter()
            .filter(|(p, _)| *p == 1)
            .map(|(_, s)| *s)
            .collect();
        assert_eq!(ones, [0, 1]);
    });
}

#[test]
fn spsc_list_recycles_blocks_while_the_producer_runs_ahead() {
    loom::model(|| {
        let chan = Chan::<List<u32, One, One>>::new();
        let (mut tail, mut cursor) = (chan.producer_cursor(), chan.cursor());
        let producer = {
            let chan = chan.clone();
            thread::spawn(move || {
                for i in 0..5 {
                    send(&chan, &mut tail, i);
                }
            })
        };
        let got: Vec<u32> = (0..5).map(|_| recv(&chan, &mut cursor)).collect();
        assert_eq!(got, [0, 1, 2, 3, 4]);
        producer.join().unwrap();
    });
}

#[test]
fn mpmc_list_retires_a_block_only_after_every_slot_is_read() {
    loom::model(|| {
        let chan = two_receivers::<List<u32, Many, Many>>();
        let consumer = {
            let chan = chan.clone();
            thread::spawn(move || [recv(&chan, &mut ()), recv(&chan, &mut ())])
        };
        for i in 0..3 {
            try_send(&chan, i).unwrap();
        }
        let mine = recv(&chan, &mut ());
        let [a, b] = consumer.join().unwrap();
        let mut all = [mine, a, b];
        all.sort_unstable();
        assert_eq!(all, [0, 1, 2]);
    });
}

/// Spinning consumers of many producers skip the producers' word below a
/// tail index one of them read (`ManyHead::claimed`): each value is still
/// received once, across a block boundary, and no consumer claims an index
/// no producer claimed (its read would spin forever: a loom deadlock).
#[test]
fn spinning_mpmc_list_consumers_claim_below_a_cached_tail_only_claimed_indices() {
    loom::model(|| {
        let chan = two_receivers::<List<u32, Many, Many, crate::wait::Spin>>();
        let consumer = {
            let chan = chan.clone();
            thread::spawn(move || [recv(&chan, &mut ()), recv(&chan, &mut ())])
        };
        for i in 0..3 {
            try_send(&chan, i).unwrap();
        }
        let mine = recv(&chan, &mut ());
        let [a, b] = consumer.join().unwrap();
        let mut all = [mine, a, b];
        all.sort_unstable();
        assert_eq!(all, [0, 1, 2]);
    });
}

#[test]
fn a_parked_receiver_is_woken_by_a_send_on_each_producer_arity() {
    loom::model(|| {
        let chan = Chan::<Ring<u32, 1, One, One>>::new();
        let (mut tail, mut cursor) = (chan.producer_cursor(), chan.cursor());
        let producer = {
            let chan = chan.clone();
            // SAFETY: the only producer, with its one cursor.
            thread::spawn(move || unsafe { chan.try_send(&mut tail, 7) }.unwrap())
        };
        // SAFETY: the only consumer.
        assert_eq!(unsafe { chan.recv_blocking(&mut cursor, None) }, Ok(7));
        producer.join().unwrap();
    });
    loom::model(|| {
        let chan = Chan::<Ring<u32, 2, Many, One>>::new();
        let mut cursor = chan.cursor();
        let producer = {
            let chan = chan.clone();
            thread::spawn(move || try_send(&chan, 7).unwrap())
        };
        // SAFETY: the only consumer.
        assert_eq!(unsafe { chan.recv_blocking(&mut cursor, None) }, Ok(7));
        producer.join().unwrap();
    });
}

/// Over 128 bytes: a receiver that finds it claimed but unwritten sleeps on
/// it (`PopError::Writing`) once its producer publishes `SeqCst`, that is,
/// once it claimed after a receiver asked for that (`Storage::watch_writes`).
#[derive(Debug, PartialEq)]
struct Large([u64; 17]);

/// Two producers each send a `Large` to a receiver that blocks for them,
/// having asked for sleepable writes before they start (`watch_first`) or
/// at its first wait on one, racing their claims.
fn large_values_reach_a_sleeping_receiver<S>(watch_first: bool)
where
    S: Storage<Item = Large, Senders = Many> + 'static,
{
    loom::model(move || {
        let chan = Chan::<S>::new();
        let mut cursor = chan.cursor();
        if watch_first {
            chan.storage().watch_writes();
        }
        let producers: Vec<_> = (0..2)
            .map(|i| {
                let chan = chan.clone();
                thread::spawn(move || try_send(&chan, Large([i; 17])).unwrap())
            })
            .collect();
        let mut got = [recv(&chan, &mut cursor).0[0], recv(&chan, &mut cursor).0[0]];
        got.sort_unstable();
        assert_eq!(got, [0, 1]);
        for producer in producers {
            producer.join().unwrap();
        }
    });
}

#[test]
fn a_receiver_asleep_on_a_large_value_being_written_is_woken_ring() {
    large_values_reach_a_sleeping_receiver::<Ring<Large, 2, Many, One>>(true);
}

#[test]
fn a_receiver_asleep_on_a_large_value_being_written_is_woken_list() {
    large_values_reach_a_sleeping_receiver::<List<Large, Many, One>>(true);
}

#[test]
fn a_receiver_asking_for_sleepable_writes_amid_claims_sleeps_only_on_later_ones_ring() {
    large_values_reach_a_sleeping_receiver::<Ring<Large, 2, Many, One>>(false);
}

#[test]
fn a_receiver_asking_for_sleepable_writes_amid_claims_sleeps_only_on_later_ones_list() {
    large_values_reach_a_sleeping_receiver::<List<Large, Many, One>>(false);
}

#[test]
fn a_parked_receiver_of_an_unbounded_channel_is_woken() {
    loom::model(|| {
        let chan = Chan::<List<u32, Many, One>>::new();
        let mut cursor = chan.cursor();
        let producer = {
            let chan = chan.clone();
            thread::spawn(move || try_send(&chan, 7).unwrap())
        };
        // SAFETY: the only consumer.
        assert_eq!(unsafe { chan.recv_blocking(&mut cursor, None) }, Ok(7));
        producer.join().unwrap();
    });
}

#[test]
fn a_parked_single_sender_is_woken_when_a_slot_frees() {
    loom::model(|| {
        let chan = Chan::<Ring<u32, 1, One, One>>::new();
        let mut cursor = chan.cursor();
        let consumer = {
            let chan = chan.clone();
            thread::spawn(move || {
                // SAFETY: the only consumer.
                let first = unsafe { chan.recv_blocking(&mut cursor, None) };
                // SAFETY: as above.
                let second = unsafe { chan.recv_blocking(&mut cursor, None) };
                (first, second)
            })
        };
        let mut tail = chan.producer_cursor();
        // SAFETY: the only producer, with its one cursor.
        unsafe {
            chan.send_blocking(&mut tail, 1, None).unwrap();
            chan.send_blocking(&mut tail, 2, None).unwrap();
        }
        assert_eq!(consumer.join().unwrap(), (Ok(1), Ok(2)));
    });
}

#[test]
fn parked_senders_are_granted_freed_slots() {
    loom::model(|| {
        let chan = Chan::<Ring<u32, 1, Many, One>>::new();
        let mut cursor = chan.cursor();
        try_send(&chan, 0).unwrap();
        let senders: Vec<_> = (1..3)
            .map(|v| {
                let chan = chan.clone();
                // SAFETY: many producers.
                thread::spawn(move || unsafe { chan.send_blocking(&mut (), v, None) }.unwrap())
            })
            .collect();
        let mut got = Vec::new();
        for _ in 0..3 {
            // SAFETY: the only consumer.
            got.push(unsafe { chan.recv_blocking(&mut cursor, None) }.unwrap());
        }
        for sender in senders {
            sender.join().unwrap();
        }
        got.sort_unstable();
        assert_eq!(got, [0, 1, 2]);
    });
}

#[test]
fn a_cancelled_send_passes_on_the_slot_it_was_granted() {
    loom::model(|| {
        let chan = Chan::<Ring<u32, 1, Many, One>>::new();
        let mut cursor = chan.cursor();
        try_send(&chan, 0).unwrap();
        let canceller = {
            let chan = chan.clone();
            thread::spawn(move || {
                let mut tail = ();
                // SAFETY: many producers.
                let mut send = pin!(unsafe { SendFuture::new(&*chan, &mut tail, 1) });
                let mut cx = Context::from_waker(Waker::noop());
                // Poll once (it may complete, or queue), then drop it, maybe
                // after it was granted the freed slot.
                send.as_mut().poll(&mut cx).is_ready()
            })
        };
        let waiter = {
            let chan = chan.clone();
            // SAFETY: many producers.
            thread::spawn(move || unsafe { chan.send_blocking(&mut (), 2, None) }.unwrap())
        };
        // SAFETY: the only consumer.
        let mut got = vec![unsafe { chan.recv_blocking(&mut cursor, None) }.unwrap()];
        let sent_by_canceller = canceller.join().unwrap();
        let expected = if sent_by_canceller { 3 } else { 2 };
        while got.len() < expected {
            // SAFETY: the only consumer.
            got.push(unsafe { chan.recv_blocking(&mut cursor, None) }.unwrap());
        }
        waiter.join().unwrap();
        got.sort_unstable();
        let want: &[u32] = if sent_by_canceller {
            &[0, 1, 2]
        } else {
            &[0, 2]
        };
        assert_eq!(got, want);
    });
}

/// The single producer's permits are `Send`: units split off one
/// reservation may push from several threads at once and take turns at the
/// producer's cursor, which its endpoint owns. Each value lands once, in a
/// slot of its own, and the consumer sees both.
fn units_of_one_producer_push_from_two_threads<S>()
where
    S: Storage<Item = u32, Senders = One, Receivers = One> + 'static,
{
    loom::model(|| {
        let (mut tx, mut rx) = endpoint::channel::<S>();
        let mut first = tx.by_ref().try_reserve(2).unwrap();
        let second = first.split(1);
        // SAFETY: a lifetime extension for loom's `'static` threads only:
        // both threads are joined below, before `tx` is used or dropped, so
        // the units never outlive the producer they borrow.
        let (first, second): (Units<Pusher<'static, S>>, Units<Pusher<'static, S>>) =
            unsafe { std::mem::transmute((first, second)) };
        let pushers: Vec<_> = [(first, 1), (second, 2)]
            .into_iter()
            .map(|(mut units, value)| thread::spawn(move || units.send(value).unwrap()))
            .collect();
        let mut got = [
            rx.by_ref().recv_blocking(None).unwrap(),
            rx.by_ref().recv_blocking(None).unwrap(),
        ];
        for pusher in pushers {
            pusher.join().unwrap();
        }
        got.sort_unstable();
        assert_eq!(got, [1, 2]);
        // Both units were used up: the whole capacity is free again.
        assert!(tx.by_ref().try_reserve(2).is_ok());
    });
}

#[test]
fn single_producer_ring_units_push_from_two_threads_each_land_once() {
    units_of_one_producer_push_from_two_threads::<Ring<u32, 2, One, One>>();
}

#[test]
fn single_producer_list_units_push_from_two_threads_each_land_once() {
    units_of_one_producer_push_from_two_threads::<List<u32, One, One>>();
}

#[test]
fn a_permit_dropped_while_a_sender_waits_wakes_it() {
    loom::model(|| {
        let chan = Chan::<Ring<u32, 1, Many, One>>::new();
        let mut cursor = chan.cursor();
        // SAFETY: many producers.
        unsafe { chan.try_reserve(1) }.unwrap();
        let waiter = {
            let chan = chan.clone();
            // SAFETY: many producers.
            thread::spawn(move || unsafe { chan.send_blocking(&mut (), 5, None) }.unwrap())
        };
        // Dropping the permit: give the unit back.
        // SAFETY: the unit reserved above.
        unsafe { chan.return_units(1) };
        // SAFETY: the only consumer.
        assert_eq!(unsafe { chan.recv_blocking(&mut cursor, None) }, Ok(5));
        waiter.join().unwrap();
        assert_eq!(chan.reserved(), 0);
    });
}

#[test]
fn a_granted_reservation_races_with_a_receive_and_a_cancel() {
    loom::model(|| {
        let chan = Chan::<Ring<u32, 1, Many, One>>::new();
        let mut cursor = chan.cursor();
        try_send(&chan, 0).unwrap();
        let reserver = {
            let chan = chan.clone();
            thread::spawn(move || {
                let node = pin!(QueueNode::default());
                let mut registered = false;
                let mut cx = Context::from_waker(Waker::noop());
                // SAFETY: many producers; the node is pinned, used only with
                // this channel, and withdrawn below, as a dropped
                // reservation's is.
                let polled = unsafe {
                    let polled = chan.poll_reserve(node.as_ref(), &mut registered, 1, &mut cx);
                    chan.cancel_send(node.as_ref(), &mut registered);
                    polled
                };
                matches!(polled, Poll::Ready(Ok(())))
            })
        };
        // SAFETY: the only consumer.
        assert_eq!(unsafe { chan.recv_blocking(&mut cursor, None) }, Ok(0));
        let holds_unit = reserver.join().unwrap();
        if holds_unit {
            // The reservation completed: its unit is ours to give back.
            // SAFETY: the unit that reservation took.
            unsafe { chan.return_units(1) };
        }
        // Whatever happened, the slot is free again: nothing leaked.
        assert_eq!(chan.reserved(), 0);
        try_send(&chan, 9).unwrap();
    });
}

#[test]
fn a_granted_waiter_takes_its_units_without_the_lock() {
    loom::model(|| {
        let queue = Arc::new(Queue::default());
        let node = pin!(QueueNode::default());
        // SAFETY: the node is pinned, used only with this queue and idle
        // (cancelled below) before it goes away.
        let register = || unsafe { queue.register(node.as_ref(), Waker::noop(), 1, |_| ()) };
        assert_eq!(register(), 0);
        let granter = {
            let queue = queue.clone();
            thread::spawn(move || {
                let mut units = 1;
                queue.grant(
                    |want| {
                        let k = want.min(units);
                        units -= k;
                        k
                    },
                    |_| (),
                );
                units
            })
        };
        // Polls as a woken future would, at any moment: the units arrive
        // once, through the node's flag or under the lock.
        let got = loop {
            match register() {
                0 => thread::yield_now(),
                got => break got,
            }
        };
        assert_eq!(got, 1);
        assert_eq!(granter.join().unwrap(), 0);
        assert!(!queue.is_waiting());
        // Idle again: a new registration waits, and cancelling it hands
        // back nothing.
        assert_eq!(register(), 0);
        assert!(queue.is_waiting());
        // SAFETY: as for `register`.
        assert_eq!(unsafe { queue.cancel(node.as_ref(), |_| ()) }.units(), 0);
        assert!(!queue.is_waiting());
    });
}

#[test]
fn a_waiting_reservation_races_with_the_last_receiver_dropping() {
    loom::model(|| {
        let chan = Chan::<Ring<u32, 1, Many, One>>::new();
        let mut cursor = chan.cursor();
        try_send(&chan, 0).unwrap();
        let reserver = {
            let chan = chan.clone();
            thread::spawn(move || {
                // SAFETY: many producers.
                match unsafe { chan.reserve_blocking(1, None) } {
                    // Granted the slot the receive freed: the send through
                    // it lands before the receiver goes or hands the value
                    // back; either way the unit is spent or returned.
                    // SAFETY: we hold the unit just reserved.
                    Ok(()) => unsafe { chan.push_unit(conjured(), 7) }
                        .map(|()| chan.pushed_unit())
                        .map_err(|e| e.0),
                    Err(_) => Err(7),
                }
            })
        };
        // The receiver takes the queued value, which may grant its slot to
        // the waiting reservation, and goes away.
        // SAFETY: the only consumer.
        assert_eq!(unsafe { chan.try_recv(&mut cursor) }.ok(), Some(0));
        // SAFETY: the only consumer, going away.
        unsafe { chan.drop_receiver() };
        // The reservation wakes (it cannot wait forever): either it sent
        // before the receiver went (and the drop drained the value) or the
        // value comes back. No unit of capacity is left held either way.
        let sent = reserver.join().unwrap();
        assert!(matches!(sent, Ok(()) | Err(7)), "{sent:?}");
        assert_eq!(chan.reserved(), 0);
        assert_eq!(chan.len(), 0);
    });
}

fn close_racing_with_send<S>()
where
    S: Storage<Item = u32> + 'static,
{
    // The consumer parks, not spins: a spin loop would make loom explore
    // every unproductive retry.
    close_racing_with(|chan: &Chan<S>, tail| {
        // SAFETY: the only producer thread, with the one producer cursor.
        unsafe { chan.try_send(tail, 1) }.is_ok()
    });
}

/// `close` from a third thread racing a send by `send` on the one producer's
/// cursor and a blocking receive: a send that returned true is received
/// before the receiver sees the channel closed, and nothing else is.
fn close_racing_with<S>(send: fn(&Chan<S>, &mut S::ProducerCursor) -> bool)
where
    S: Storage<Item = u32> + 'static,
{
    loom::model(move || {
        let chan = Chan::<S>::new();
        let (mut tail, mut cursor) = (chan.producer_cursor(), chan.cursor());
        let producer = {
            let chan = chan.clone();
            thread::spawn(move || send(&chan, &mut tail))
        };
        let closer = {
            let chan = chan.clone();
            // SAFETY: not the producer.
            thread::spawn(move || unsafe { chan.close(false) })
        };
        let mut got = Vec::new();
        // SAFETY: the only consumer.
        while let Ok(value) = unsafe { chan.recv_blocking(&mut cursor, None) } {
            got.push(value);
        }
        let accepted = producer.join().unwrap();
        closer.join().unwrap();
        assert_eq!(got, if accepted { vec![1] } else { vec![] });
    });
}

#[test]
fn close_racing_with_send_never_loses_an_accepted_value_spsc_ring() {
    close_racing_with_send::<Ring<u32, 2, One, One>>();
}

#[test]
fn close_racing_with_send_never_loses_an_accepted_value_mpsc_ring() {
    close_racing_with_send::<Ring<u32, 2, Many, One>>();
}

#[test]
fn close_racing_with_send_never_loses_an_accepted_value_spsc_list() {
    close_racing_with_send::<List<u32, One, One>>();
}

#[test]
fn close_racing_with_send_never_loses_an_accepted_value_mpsc_list() {
    close_racing_with_send::<List<u32, Many, One>>();
}

#[test]
fn dropping_the_last_receiver_drops_queued_values_exactly_once() {
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    loom::model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let chan = Chan::<Ring<Counted, 2, Many, One>>::new();
        let producer = {
            let (chan, drops) = (chan.clone(), drops.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    match try_send(&chan, Counted(drops.clone())) {
                        Ok(()) => {}
                        Err(TrySendError::Full(v) | TrySendError::Disconnected(v)) => drop(v),
                    }
                }
            })
        };
        // SAFETY: the only consumer, going away.
        unsafe { chan.drop_receiver() };
        producer.join().unwrap();
        // Everything sent before the drop was dropped by it; everything
        // after was handed back and dropped by the producer.
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        assert_eq!(chan.len(), 0);
    });
}

#[test]
fn a_timed_out_receive_leaves_no_registration_behind() {
    loom::model(|| {
        let chan = Chan::<Ring<u32, 1, One, One>>::new();
        let mut cursor = chan.cursor();
        // A deadline in the past: the receive gives up after one attempt.
        let past = std::time::Instant::now();
        // SAFETY: the only consumer.
        let received = unsafe { chan.recv_blocking(&mut cursor, Some(past)) };
        assert_eq!(received, Err(RecvTimeoutError::Timeout));
        let mut tail = chan.producer_cursor();
        // SAFETY: the only producer, with its one cursor.
        unsafe { chan.try_send(&mut tail, 1) }.unwrap();
        // SAFETY: the only consumer.
        assert_eq!(unsafe { chan.try_recv(&mut cursor) }, Ok(1));
    });
}

/// Registers a receive on `chan` and forgets it: it stays in the
/// receivers' wait list and never comes back for what it is handed.
fn forget_a_registered_recv<S: Storage<Receivers = Many, Cursor = ()>>(chan: &Chan<S>) {
    let mut cursor = ();
    // SAFETY: many consumers; the consumer contract binds nobody.
    let mut recv = Box::pin(unsafe { Recv::new(chan, &mut cursor) });
    let mut cx = Context::from_waker(Waker::noop());
    assert!(recv.as_mut().poll(&mut cx).is_pending());
    std::mem::forget(recv);
}

#[test]
fn a_waiting_sender_wakes_a_receiver_a_forgotten_recv_future_left_asleep() {
    loom::model(|| {
        let chan = Chan::<Ring<u32, 1, Many, Many>>::new();
        #[allow(
            clippy::let_unit_value,
            reason = "many consumers' cursor is `()`; named as in every other model"
        )]
        let mut cursor = chan.cursor();
        // A receive registered first and then forgotten: it keeps its place
        // at the front of the receivers' wait list, and the notification it
        // is given wakes nobody.
        forget_a_registered_recv(&chan);
        let receiver = {
            let chan = chan.clone();
            thread::spawn(move || recv(&chan, &mut cursor))
        };
        // The first send's notification may go to the forgotten future; at
        // capacity 1 the second then waits for room, and only a receive
        // can make it. Without the sender's nudge: a loom deadlock.
        send(&chan, &mut (), 1);
        send(&chan, &mut (), 2);
        assert_eq!(receiver.join().unwrap(), 1);
        // SAFETY: a consumer, the other one has finished.
        assert_eq!(unsafe { chan.try_recv(&mut cursor) }, Ok(2));
    });
}

/// `forgotten` receives registered first and then forgotten, at the front
/// of the receivers' wait list. Then `parked` receivers park behind them
/// and as many sends follow, nothing after them: only the check wakes that
/// come with a notification to a future can reach the parked receivers.
fn sends_reach_parked_receivers_behind(forgotten: usize, parked: u32) {
    loom::model(move || {
        let chan = Chan::<List<u32, Many, Many>>::new();
        for _ in 0..forgotten {
            forget_a_registered_recv(&chan);
        }
        let receivers: Vec<_> = (0..parked)
            .map(|_| {
                let chan = chan.clone();
                thread::spawn(move || recv(&chan, &mut ()))
            })
            .collect();
        for value in 0..parked {
            send(&chan, &mut (), value);
        }
        let mut got: Vec<u32> = receivers.into_iter().map(|r| r.join().unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, (0..parked).collect::<Vec<_>>());
    });
}

#[test]
fn a_parked_receiver_is_woken_by_the_one_send_a_forgotten_recv_future_was_notified_of() {
    // Without the check wake: a loom deadlock.
    sends_reach_parked_receivers_behind(1, 1);
}

#[test]
fn a_parked_receiver_is_woken_by_the_one_send_behind_two_forgotten_recv_futures() {
    // With a check wake that stops at one waiter behind the notified one
    // (the second forgotten receive): a loom deadlock.
    sends_reach_parked_receivers_behind(2, 1);
}

#[test]
fn a_thread_parked_on_two_receives_is_woken_by_either_and_takes_exactly_one() {
    // What `select!` does: one thread polls two receive futures in turn with
    // one parking waker (`park::block_on`), takes the first that is ready
    // and drops the other, which withdraws its registration.
    loom::model(|| {
        let a = Chan::<Ring<u32, 1, Many, Many>>::new();
        let b = Chan::<List<u32, Many, Many>>::new();
        let selector = {
            let (a, b) = (a.clone(), b.clone());
            thread::spawn(move || {
                let (mut cursor_a, mut cursor_b) = (a.cursor(), b.cursor());
                // SAFETY: many consumers.
                let mut recv_a = pin!(unsafe { Recv::new(&*a, &mut cursor_a) });
                // SAFETY: many consumers.
                let mut recv_b = pin!(unsafe { Recv::new(&*b, &mut cursor_b) });
                let chosen = pin!(std::future::poll_fn(|cx| {
                    if let Poll::Ready(got) = recv_a.as_mut().poll(cx) {
                        return Poll::Ready(('a', got));
                    }
                    recv_b.as_mut().poll(cx).map(|got| ('b', got))
                }));
                crate::wait::block_on(chosen, None, crate::wait::Backoff::new).expect("no deadline")
            })
        };
        // Each channel gets one value; the select takes exactly one of
        // them, and the other stays queued for the next receiver.
        try_send(&a, 1).unwrap();
        try_send(&b, 2).unwrap();
        let (which, got) = selector.join().unwrap();
        let left = if which == 'a' {
            assert_eq!(got, Ok(1));
            // SAFETY: many consumers; the selector has finished.
            unsafe { b.try_recv(&mut b.cursor()) }
        } else {
            assert_eq!(got, Ok(2));
            // SAFETY: as above.
            unsafe { a.try_recv(&mut a.cursor()) }
        };
        assert!(left.is_ok(), "the receive not chosen took nothing");
    });
}

#[test]
fn two_sends_reach_two_parked_receivers_behind_two_forgotten_recv_futures() {
    // Each notification handed to a forgotten receive wakes a parked
    // receiver of its own: a check wake that stops at a receiver an earlier
    // one already sent to look leaves the second parked receiver asleep with
    // the second value queued (a loom deadlock).
    sends_reach_parked_receivers_behind(2, 2);
}

/// A forgotten receive, then a receive of a thread that parks, then a
/// receiver thread in `recv_blocking`. The one send's notification goes to
/// the forgotten receive, and the parked receive is woken to look for it;
/// it gives up instead (as at a deadline), and must pass that on to the
/// receiver behind it, whose registration races with the send.
fn a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on<S>()
where
    S: Storage<Item = u32, Senders = Many, Receivers = Many, Cursor = ()> + 'static,
{
    loom::model(|| {
        let chan = Chan::<S>::new();
        let mut cx = Context::from_waker(Waker::noop());
        forget_a_registered_recv(&chan);
        let mut parked_cursor = ();
        // SAFETY: many consumers; the consumer contract binds nobody. The
        // future is dropped by this thread, which plays the one that parks
        // on it.
        let mut parked = Box::pin(unsafe { Recv::parked(&*chan, &mut parked_cursor) });
        assert!(parked.as_mut().poll(&mut cx).is_pending());
        let receiver = {
            let chan = chan.clone();
            thread::spawn(move || recv(&chan, &mut ()))
        };
        try_send(&chan, 1).unwrap();
        // Without the notification passed on here: a loom deadlock.
        drop(parked);
        assert_eq!(receiver.join().unwrap(), 1);
    });
}

#[test]
fn a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on_ring() {
    a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on::<Ring<u32, 2, Many, Many>>();
}

#[test]
fn a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on_list() {
    a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on::<List<u32, Many, Many>>();
}

/// A spin or yield channel closed from the receiver's side while its one
/// sender busy-waits to send and its receiver busy-waits to receive: a send
/// that returned `Ok` is received before the receiver sees the channel
/// closed, and the busy ends see the close (neither waits forever: a loom
/// deadlock or a branch limit otherwise).
fn close_racing_with_busy_ends<S>()
where
    S: Storage<Item = u32> + 'static,
{
    assert!(
        !<S::Wait as crate::wait::Wait>::PARKS,
        "a policy that keeps no waiters"
    );
    close_racing_with(|chan: &Chan<S>, tail| {
        // SAFETY: the only producer thread, with the one producer cursor.
        unsafe { chan.send_blocking(tail, 1, None) }.is_ok()
    });
}

#[test]
fn a_close_races_a_busy_sender_and_receiver_spin_spsc_ring() {
    close_racing_with_busy_ends::<Ring<u32, 1, One, One, crate::wait::Spin>>();
}

#[test]
fn a_close_races_a_busy_sender_and_receiver_spin_mpsc_list() {
    close_racing_with_busy_ends::<List<u32, Many, One, crate::wait::Spin>>();
}

#[test]
fn a_close_races_a_busy_sender_and_receiver_spin_mpsc_ring() {
    close_racing_with_busy_ends::<Ring<u32, 2, Many, One, crate::wait::Spin>>();
}

#[test]
fn a_close_races_a_busy_sender_and_receiver_spin_mpmc_ring() {
    close_racing_with_busy_ends::<Ring<u32, 2, Many, Many, crate::wait::Spin>>();
}

#[test]
fn a_close_races_a_busy_sender_and_receiver_yield_spsc_ring() {
    close_racing_with_busy_ends::<Ring<u32, 1, One, One, crate::wait::Yield>>();
}

#[test]
fn a_close_races_a_busy_sender_and_receiver_yield_mpsc_list() {
    close_racing_with_busy_ends::<List<u32, Many, One, crate::wait::Yield>>();
}
