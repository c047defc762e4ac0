//! The ring's unit tests, for every supported topology.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::*;
use crate::arity::{Arity, Many, One};
use crate::slot::Slot;
use crate::storage::{Capacity, PopError, PushError, Storage};

/// Pushes on one thread and pops on another, checking order.
fn threaded<const CAP: usize, P: Arity, C: Arity>(n: u64)
where
    (P, C): RingTopology,
    Ring<u64, CAP, P, C>: Storage<Item = u64, ProducerCursor: Send>,
{
    let ring = Arc::new(Ring::<u64, CAP, P, C>::new());
    let mut cursor = ring.cursor();
    let mut tail = ring.producer_cursor();
    let producer = {
        let ring = Arc::clone(&ring);
        std::thread::spawn(move || {
            for i in 0..n {
                let mut value = i;
                // SAFETY: the only producer.
                while let Err(PushError::Full(v)) = unsafe { ring.try_push(&mut tail, value) } {
                    value = v;
                    std::thread::yield_now();
                }
            }
        })
    };
    let mut next = 0;
    while next < n {
        // SAFETY: the only consumer.
        match unsafe { ring.try_pop(&mut cursor) } {
            Ok(value) => {
                assert_eq!(value, next);
                next += 1;
            }
            Err(_) => std::thread::yield_now(),
        }
    }
    producer.join().unwrap();
}

#[test]
fn every_arity_hands_values_over_in_order_across_threads() {
    let n = if cfg!(miri) { 50 } else { 20_000 };
    threaded::<1, One, One>(n);
    threaded::<4, One, One>(n);
    threaded::<1, Many, One>(n);
    threaded::<4, Many, One>(n);
    threaded::<2, Many, Many>(n);
}

fn fills_to_exactly_cap<P: Arity, C: Arity>()
where
    (P, C): RingTopology,
    Ring<String, 4, P, C>: Storage<Item = String>,
{
    let ring = Ring::<String, 4, P, C>::new();
    let mut cursor = ring.cursor();
    let mut tail = ring.producer_cursor();
    // SAFETY: single-threaded.
    unsafe {
        for i in 0..4 {
            ring.try_push(&mut tail, i.to_string()).unwrap();
        }
        assert!(ring.is_full());
        assert_eq!(
            ring.try_push(&mut tail, "x".into()),
            Err(PushError::Full("x".into()))
        );
        assert_eq!(ring.len(), 4);
        assert_eq!(ring.try_pop(&mut cursor).as_deref(), Ok("0"));
        ring.try_push(&mut tail, "4".into()).unwrap();
        for i in 1..5 {
            assert_eq!(ring.try_pop(&mut cursor), Ok(i.to_string()));
        }
        assert_eq!(ring.try_pop(&mut cursor), Err(PopError::Empty));
    }
}

#[test]
fn a_ring_is_full_at_exactly_its_capacity() {
    fills_to_exactly_cap::<One, One>();
    fills_to_exactly_cap::<Many, One>();
    fills_to_exactly_cap::<Many, Many>();
}

fn units_count_against_capacity<P: Arity, C: Arity>()
where
    (P, C): RingTopology,
    Ring<u8, 4, P, C>: Capacity<Item = u8>,
{
    let ring = Ring::<u8, 4, P, C>::new();
    let mut cursor = ring.cursor();
    let mut tail = ring.producer_cursor();
    // SAFETY: single-threaded.
    unsafe {
        ring.try_acquire(2).unwrap();
        ring.try_push(&mut tail, 1).unwrap();
        ring.try_push(&mut tail, 2).unwrap();
        assert!(ring.is_full());
        assert_eq!(ring.try_acquire(1), Err(PushError::Full(())));
        ring.push_reserved(&mut tail, 3).unwrap();
        assert_eq!(ring.reserved(), 1);
        ring.release(1);
        assert_eq!(ring.reserved(), 0);
        ring.try_push(&mut tail, 4).unwrap();
        assert_eq!(
            (ring.try_pop(&mut cursor), ring.try_pop(&mut cursor)),
            (Ok(1), Ok(2))
        );
        assert_eq!(
            (ring.try_pop(&mut cursor), ring.try_pop(&mut cursor)),
            (Ok(3), Ok(4))
        );
    }
}

#[test]
fn reserved_units_count_against_capacity() {
    units_count_against_capacity::<One, One>();
    units_count_against_capacity::<Many, One>();
    units_count_against_capacity::<Many, Many>();
}

/// A send while units are held checks the slot `R` positions ahead of
/// the one it claims; it must still write the claimed one, on every lap.
fn sends_past_held_units_write_their_own_slot<C: Arity>()
where
    (Many, C): RingTopology,
    Ring<u64, 4, Many, C>: Capacity<Item = u64>,
{
    let ring = Ring::<u64, 4, Many, C>::new();
    let mut cursor = ring.cursor();
    let mut tail = ring.producer_cursor();
    // SAFETY: single-threaded.
    unsafe {
        for lap in 0..3 {
            let base = lap * 10;
            ring.try_acquire(2).unwrap();
            ring.try_push(&mut tail, base + 1).unwrap();
            ring.try_push(&mut tail, base + 2).unwrap();
            assert_eq!(
                ring.try_push(&mut tail, base + 9),
                Err(PushError::Full(base + 9))
            );
            assert_eq!(ring.try_pop(&mut cursor), Ok(base + 1));
            ring.push_reserved(&mut tail, base + 3).unwrap();
            ring.push_reserved(&mut tail, base + 4).unwrap();
            ring.try_push(&mut tail, base + 5).unwrap();
            for want in 2..=5 {
                assert_eq!(ring.try_pop(&mut cursor), Ok(base + want));
            }
            assert_eq!(ring.try_pop(&mut cursor), Err(PopError::Empty));
        }
    }
}

#[test]
fn sends_while_units_are_held_write_the_claimed_slot() {
    sends_past_held_units_write_their_own_slot::<One>();
    sends_past_held_units_write_their_own_slot::<Many>();
}

#[test]
fn queued_senders_block_newcomers_but_not_grants() {
    let ring = Ring::<u8, 2, Many, One>::new();
    // SAFETY: single-threaded; as the senders' wait set would.
    unsafe {
        ring.set_waiting(true);
        assert_eq!(ring.try_push(&mut (), 1), Err(PushError::Full(1)));
        assert_eq!(ring.try_acquire(1), Err(PushError::Full(())));
        assert_eq!(ring.grant(5), 2);
        ring.push_reserved(&mut (), 1).unwrap();
        ring.push_reserved(&mut (), 2).unwrap();
        ring.set_waiting(false);
    }
    assert_eq!(ring.len(), 2);
}

fn may_grant_only_while_a_unit_is_free<C: Arity>()
where
    (Many, C): RingTopology,
    Ring<u8, 2, Many, C>: Capacity<Item = u8>,
{
    let ring = Ring::<u8, 2, Many, C>::new();
    let mut cursor = ring.cursor();
    let mut tail = ring.producer_cursor();
    assert!(ring.may_grant());
    // SAFETY: single-threaded.
    unsafe {
        ring.try_push(&mut tail, 1).unwrap();
        assert!(ring.may_grant());
        // A held unit fills the bound as a value does.
        ring.try_acquire(1).unwrap();
        assert!(!ring.may_grant());
        assert_eq!(ring.grant(1), 0);
        ring.release(1);
        assert!(ring.may_grant());
        ring.try_push(&mut tail, 2).unwrap();
        assert!(!ring.may_grant());
        assert_eq!(ring.try_pop(&mut cursor), Ok(1));
    }
    assert!(ring.may_grant());
    // SAFETY: single-threaded; the unit is this test's.
    assert_eq!(unsafe { ring.grant(1) }, 1);
    assert!(!ring.may_grant());
}

#[test]
fn a_grant_may_take_a_unit_only_while_one_is_free() {
    may_grant_only_while_a_unit_is_free::<One>();
    may_grant_only_while_a_unit_is_free::<Many>();
}

fn close_keeps_what_was_sent<P: Arity, C: Arity>()
where
    (P, C): RingTopology,
    Ring<u8, 4, P, C>: Storage<Item = u8>,
{
    let ring = Ring::<u8, 4, P, C>::new();
    let mut cursor = ring.cursor();
    let mut tail = ring.producer_cursor();
    // SAFETY: single-threaded.
    unsafe {
        ring.try_push(&mut tail, 1).unwrap();
        assert!(ring.close(false));
        assert!(!ring.close(false));
        assert_eq!(ring.try_push(&mut tail, 2), Err(PushError::Closed(2)));
        assert_eq!(ring.try_acquire(1), Err(PushError::Closed(())));
        assert_eq!(ring.try_pop(&mut cursor), Ok(1));
        assert_eq!(ring.try_pop(&mut cursor), Err(PopError::Closed));
    }
}

#[test]
fn closing_keeps_values_sent_before_and_refuses_later_ones() {
    close_keeps_what_was_sent::<One, One>();
    close_keeps_what_was_sent::<Many, One>();
    close_keeps_what_was_sent::<Many, Many>();
}

#[test]
fn dropping_a_ring_drops_what_it_holds_once() {
    let live = Arc::new(());
    {
        let ring = Ring::<Arc<()>, 4, Many, One>::new();
        let mut cursor = ring.cursor();
        let spsc = Ring::<Arc<()>, 4, One, One>::new();
        let mut spsc_tail = spsc.producer_cursor();
        // SAFETY: single-threaded.
        unsafe {
            for _ in 0..3 {
                ring.try_push(&mut (), Arc::clone(&live)).unwrap();
                spsc.try_push(&mut spsc_tail, Arc::clone(&live)).unwrap();
            }
            drop(ring.try_pop(&mut cursor));
        }
        assert_eq!(Arc::strong_count(&live), 6);
    }
    assert_eq!(Arc::strong_count(&live), 1);
}

fn push_from_moves_only_what_fits<P: Arity>()
where
    (P, One): RingTopology,
    Ring<Arc<()>, 1, P, One>: Storage<Item = Arc<()>>,
{
    let live = Arc::new(());
    {
        let ring = Ring::<Arc<()>, 1, P, One>::new();
        let mut cursor = ring.cursor();
        let mut tail = ring.producer_cursor();
        let mut first = Some(Arc::clone(&live));
        let mut second = Some(Arc::clone(&live));
        // SAFETY: single-threaded.
        unsafe {
            assert_eq!(ring.try_push_from(&mut tail, &mut first), Ok(()));
            assert!(first.is_none(), "a push that fits takes the value");
            assert_eq!(
                ring.try_push_from(&mut tail, &mut second),
                Err(PushError::Full(()))
            );
            assert!(second.is_some(), "a push that does not fit leaves it");
            ring.close(true);
            assert_eq!(
                ring.try_pop(&mut cursor).map(|v| Arc::ptr_eq(&v, &live)),
                Ok(true)
            );
            assert_eq!(
                ring.try_push_from(&mut tail, &mut second),
                Err(PushError::Closed(()))
            );
            assert!(second.is_some(), "a refused push hands it back");
        }
        assert_eq!(Arc::strong_count(&live), 2, "moved, never copied");
    }
    assert_eq!(Arc::strong_count(&live), 1);
}

#[test]
fn a_push_from_an_option_moves_the_value_only_when_it_fits() {
    push_from_moves_only_what_fits::<One>();
    push_from_moves_only_what_fits::<Many>();
}

#[test]
fn draining_drops_every_queued_value() {
    let live = Arc::new(());
    let ring = Ring::<Arc<()>, 8, Many, Many>::new();
    // SAFETY: single-threaded; closed before draining.
    unsafe {
        for _ in 0..5 {
            ring.try_push(&mut (), Arc::clone(&live)).unwrap();
        }
        ring.close(false);
        ring.drain();
    }
    assert_eq!(Arc::strong_count(&live), 1);
    assert_eq!(ring.len(), 0);
}

#[test]
fn zero_sized_values_travel_through_every_arity() {
    let spsc = Ring::<(), 2, One, One>::new();
    let mut spsc_cursor = spsc.cursor();
    let mut spsc_tail = spsc.producer_cursor();
    let mpmc = Ring::<(), 2, Many, Many>::new();
    // SAFETY: single-threaded.
    unsafe {
        spsc.try_push(&mut spsc_tail, ()).unwrap();
        mpmc.try_push(&mut (), ()).unwrap();
        assert_eq!(spsc.try_pop(&mut spsc_cursor), Ok(()));
        assert_eq!(mpmc.try_pop(&mut mpmc.cursor()), Ok(()));
    }
    assert_eq!(size_of::<Slot<(), crate::slot::NoStamp>>(), 0);
}

#[test]
fn peek_leaves_the_value_in_place() {
    let ring = Ring::<String, 2, Many, One>::new();
    let mut cursor = ring.cursor();
    // SAFETY: single-threaded.
    unsafe {
        assert!(ring.peek(&mut cursor).is_none());
        ring.try_push(&mut (), "a".into()).unwrap();
        assert_eq!(ring.peek(&mut cursor).map(String::as_str), Some("a"));
        assert_eq!(ring.len(), 1);
        assert_eq!(ring.try_pop(&mut cursor).as_deref(), Ok("a"));
    }
}

/// Polls a `Recv` on `chan` whose next position a producer has claimed
/// but not written; returns the poll's outcome and the wakes it caused
/// while claimed and after the publish, and what it then received.
fn poll_while_claimed<T: Send + std::fmt::Debug>(
    chan: &crate::chan::Chan<Ring<T, 4, Many, One>>,
    value: T,
) -> (bool, usize, usize, Option<T>) {
    use std::pin::pin;
    use std::sync::atomic::AtomicUsize as Count;
    use std::task::{Context, Poll, Wake, Waker};

    struct Counting(Count);
    impl Wake for Counting {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let wakes = Arc::new(Counting(Count::new(0)));
    let handle = Waker::from(Arc::clone(&wakes));
    let mut cx = Context::from_waker(&handle);

    let ring = chan.storage();
    // A producer claims position 0 and is still writing it.
    // The first compare-exchange reports the current word.
    let mut word = 0;
    while let Err(current) = ring.cas_tail(
        word,
        word + Buffer::<T, 4, Claiming<OneConsumer<crate::wait::Park>>>::ONE_POS,
    ) {
        word = current;
    }
    let mut cursor = chan.cursor();
    // SAFETY: `chan` has no other consumer, and this is its only cursor.
    let mut recv = pin!(unsafe { crate::chan::Recv::new(chan, &mut cursor) });
    let pending = recv.as_mut().poll(&mut cx).is_pending();
    let wakes_while_claimed = wakes.0.load(Ordering::Relaxed);
    // The producer finishes: writes, publishes, notifies.
    // SAFETY: the position was claimed above and holds no value.
    unsafe { ring.publish(word, u64::MAX, &mut Some(value)) };
    chan.notify_receivers();
    let wakes_after_publish = wakes.0.load(Ordering::Relaxed);
    let received = match recv.as_mut().poll(&mut cx) {
        Poll::Ready(Ok(value)) => Some(value),
        _ => None,
    };
    (pending, wakes_while_claimed, wakes_after_publish, received)
}

#[test]
fn a_receive_sleeps_on_a_large_value_being_written_and_the_publish_wakes_it() {
    #[derive(Debug, PartialEq)]
    struct Large([u64; 20]);
    let chan = crate::chan::Chan::<Ring<Large, 4, Many, One>>::new();
    chan.storage().watch_writes();
    let (pending, wakes, after, received) = poll_while_claimed(&chan, Large([7; 20]));
    assert!(pending, "nothing to receive while the value is written");
    assert_eq!(wakes, 0, "it sleeps: no wake of its own");
    assert_eq!(after, 1, "the producer's publish wakes it");
    assert_eq!(received, Some(Large([7; 20])));
}

#[test]
fn a_large_value_is_published_for_a_sleeper_only_once_a_receive_would_sleep() {
    #[derive(Debug, PartialEq)]
    struct Large([u64; 20]);
    let chan = crate::chan::Chan::<Ring<Large, 4, Many, One>>::new();
    // Claimed before any receive watched: its producer may miss the flag.
    let first = poll_while_claimed(&chan, Large([1; 20]));
    assert_eq!(first, (true, 1, 1, Some(Large([1; 20]))), "it polls again");
    // That receive asked later producers to publish for a sleeper.
    let second = poll_while_claimed(&chan, Large([2; 20]));
    assert_eq!(second, (true, 0, 1, Some(Large([2; 20]))), "it sleeps");
}

#[test]
fn a_receive_spins_on_a_small_value_being_written_and_wakes_itself() {
    let chan = crate::chan::Chan::<Ring<u64, 4, Many, One>>::new();
    chan.storage().watch_writes();
    let (pending, wakes, after, received) = poll_while_claimed(&chan, 7);
    assert!(pending, "nothing to receive while the value is written");
    assert_eq!(wakes, 1, "its producer may miss the flag: it polls again");
    assert_eq!(after, 1, "not registered: the publish wakes nobody");
    assert_eq!(received, Some(7));
}
