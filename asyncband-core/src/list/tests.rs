//! The list's own tests: block crossings, the pool, drops and closing, for
//! each supported pair of ends.

use std::sync::Arc;

use super::{BLOCK, List, ListTopology, POOL};
use crate::arity::{Arity, Many, One};
use crate::storage::{PopError, PushError, Storage};
use crate::sync::Ordering;

fn in_order<P: Arity, C: Arity>(n: u64)
where
    (P, C): ListTopology,
    List<u64, P, C>: Storage<Item = u64, ProducerCursor: Send>,
{
    let list = Arc::new(List::<u64, P, C>::new());
    let mut cursor = list.cursor();
    let mut tail = list.producer_cursor();
    let producer = {
        let list = Arc::clone(&list);
        std::thread::spawn(move || {
            for i in 0..n {
                // SAFETY: the only producer.
                unsafe { list.try_push(&mut tail, i) }.unwrap();
            }
        })
    };
    let mut next = 0;
    while next < n {
        // SAFETY: the only consumer.
        match unsafe { list.try_pop(&mut cursor) } {
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
fn every_arity_crosses_blocks_in_order_across_threads() {
    let n = if cfg!(miri) { 100 } else { 20_000 };
    in_order::<One, One>(n);
    in_order::<Many, One>(n);
    in_order::<Many, Many>(n);
}

#[test]
fn a_drained_burst_leaves_at_most_the_pool_and_the_current_block() {
    let list = List::<u64, Many, One>::new();
    let mut cursor = list.cursor();
    let n = if cfg!(miri) { 200 } else { 100_000 };
    // SAFETY: single-threaded.
    unsafe {
        for i in 0..n {
            list.try_push(&mut (), i).unwrap();
        }
        for i in 0..n {
            assert_eq!(list.try_pop(&mut cursor), Ok(i));
        }
    }
    let pooled = list
        .pool
        .cells
        .iter()
        .filter(|c| !c.load(Ordering::Relaxed).is_null())
        .count();
    assert!(pooled <= POOL);
    assert_eq!(list.len(), 0);
}

#[test]
fn dropping_a_list_drops_what_it_holds_once() {
    let live = Arc::new(());
    {
        let list = List::<Arc<()>, Many, Many>::new();
        let spsc = List::<Arc<()>, One, One>::new();
        let mut spsc_cursor = spsc.cursor();
        let mut spsc_tail = spsc.producer_cursor();
        // SAFETY: single-threaded.
        unsafe {
            for _ in 0..=(3 * BLOCK) {
                list.try_push(&mut (), Arc::clone(&live)).unwrap();
                spsc.try_push(&mut spsc_tail, Arc::clone(&live)).unwrap();
            }
            drop(list.try_pop(&mut list.cursor()));
            drop(spsc.try_pop(&mut spsc_cursor));
        }
    }
    assert_eq!(Arc::strong_count(&live), 1);
}

fn close_keeps_what_was_sent<P: Arity, C: Arity>()
where
    (P, C): ListTopology,
{
    let list = List::<u8, P, C>::new();
    let mut cursor = list.cursor();
    let mut tail = list.producer_cursor();
    // SAFETY: single-threaded.
    unsafe {
        list.try_push(&mut tail, 1).unwrap();
        assert!(list.close(false));
        assert_eq!(list.try_push(&mut tail, 2), Err(PushError::Closed(2)));
        assert_eq!(list.try_pop(&mut cursor), Ok(1));
        assert_eq!(list.try_pop(&mut cursor), Err(PopError::Closed));
    }
}

#[test]
fn closing_keeps_values_sent_before_and_refuses_later_ones() {
    close_keeps_what_was_sent::<One, One>();
    close_keeps_what_was_sent::<Many, One>();
    close_keeps_what_was_sent::<Many, Many>();
}

#[test]
fn draining_drops_every_queued_value() {
    let live = Arc::new(());
    let list = List::<Arc<()>, Many, One>::new();
    // SAFETY: single-threaded; closed before draining.
    unsafe {
        for _ in 0..(2 * BLOCK + 3) {
            list.try_push(&mut (), Arc::clone(&live)).unwrap();
        }
        list.close(false);
        list.drain();
    }
    assert_eq!(Arc::strong_count(&live), 1);
}

#[test]
fn peek_sees_the_head_across_a_block_boundary() {
    let list = List::<usize, One, One>::new();
    let mut cursor = list.cursor();
    let mut tail = list.producer_cursor();
    // SAFETY: single-threaded.
    unsafe {
        for i in 0..=BLOCK {
            list.try_push(&mut tail, i).unwrap();
        }
        for i in 0..=BLOCK {
            assert_eq!(list.peek(&mut cursor), Some(&i));
            assert_eq!(list.try_pop(&mut cursor), Ok(i));
        }
        assert_eq!(list.peek(&mut cursor), None);
    }
}

/// A receiver that keeps waiting reads "empty" from its slot, a claim in
/// flight included, and asks producers for no marks; a closed list still
/// reads closed.
#[test]
fn a_waiting_look_asks_producers_for_no_marks() {
    let list = List::<u64, Many, One>::new();
    let mut cursor = list.cursor();
    let polling = || list.tail.word.load(Ordering::SeqCst) & super::tail::POLLING != 0;
    // SAFETY: single-threaded: this is the only producer and consumer.
    unsafe {
        assert_eq!(
            list.try_front(&mut cursor, true).err(),
            Some(PopError::Empty)
        );
        let (index, block, _) = list.tail.claim::<true>(&list.pool).ok().unwrap();
        let in_flight = list.try_front(&mut cursor, true).err();
        let marks = polling();
        super::tail::ManyTail::<u64, crate::wait::Park, One>::write::<true>(block, index, false, 0);
        assert_eq!((in_flight, marks), (Some(PopError::Empty), false));
        assert_eq!(list.try_pop(&mut cursor), Ok(0));
        assert_eq!(
            list.try_front(&mut cursor, false).err(),
            Some(PopError::Empty)
        );
        assert!(polling(), "a polling look marks from now on");
        list.close(true);
        assert_eq!(
            list.try_front(&mut cursor, true).err(),
            Some(PopError::Closed)
        );
    }
}

/// A single consumer that polled an empty list reads "empty" from an
/// unmarked slot, while a producer publishing behind a claim in flight
/// marks that claim, so the consumer reads it as busy, not empty.
#[test]
fn a_polling_consumer_reads_a_claim_in_flight_from_the_mark_a_later_producer_left() {
    let list = List::<u64, Many, One>::new();
    let mut cursor = list.cursor();
    // SAFETY: single-threaded: this is the only producer and consumer.
    unsafe {
        assert_eq!(
            list.try_front(&mut cursor, false).err(),
            Some(PopError::Empty)
        );
        // A producer claims index 0 and stalls before writing it.
        let (index, block, _) = list.tail.claim::<true>(&list.pool).ok().unwrap();
        let alone = list.try_front(&mut cursor, false).err();
        // Another publishes index 1, marking index 0 first.
        list.try_push(&mut (), 1).unwrap();
        let behind = list.try_front(&mut cursor, false).err();
        // The stalled producer writes (before any assertion, so that a
        // failing one does not leave the drop waiting on the claim).
        super::tail::ManyTail::<u64, crate::wait::Park, One>::write::<true>(block, index, false, 0);
        assert_eq!(
            (index, alone, behind),
            (0, Some(PopError::Empty), Some(PopError::Busy))
        );
        assert_eq!(list.try_pop(&mut cursor), Ok(0));
        assert_eq!(list.try_pop(&mut cursor), Ok(1));
        assert_eq!(
            list.try_front(&mut cursor, false).err(),
            Some(PopError::Empty)
        );
    }
}
