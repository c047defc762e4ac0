//! Unit tests of the channel's own methods, and the helpers the crate's
//! tests use to reach a channel's cursors.

use super::Chan;
use crate::arity::{Many, One};
use crate::error::{TryRecvError, TrySendError};
use crate::ring::Ring;
use crate::storage::{Capacity, Storage, conjured};

/// Reserves zero, more than the capacity, and far more, then checks that
/// nothing was held.
fn reserve_out_of_range<S: Storage + Capacity>(chan: &Chan<S>) {
    let cap = S::CAPACITY.unwrap();
    // SAFETY: acting as a producer; nothing is held on success (checked).
    unsafe {
        assert_eq!(chan.try_reserve(0), Ok(()));
        for n in [cap + 1, usize::MAX / 2, usize::MAX] {
            assert_eq!(chan.try_reserve(n), Err(TrySendError::Full(())), "{n}");
        }
    }
    assert_eq!(chan.reserved(), 0);
}

#[test]
fn a_reservation_of_zero_or_more_than_the_capacity_holds_nothing() {
    let spsc = Chan::<Ring<u64, 4, One, One>>::new();
    let (mut tail, mut cursor) = (spsc.producer_cursor(), spsc.cursor());
    // SAFETY: the only producer's and the only consumer's cursors.
    unsafe {
        spsc.try_send(&mut tail, 0).unwrap();
        reserve_out_of_range(&spsc);
        for value in 1..4 {
            spsc.try_send(&mut tail, value).unwrap();
        }
        for value in 0..4 {
            assert_eq!(spsc.try_recv(&mut cursor), Ok(value));
        }
    }
    reserve_out_of_range(&Chan::<Ring<u64, 4, Many, One>>::new());
    let many_consumers = Chan::<Ring<u64, 4, Many, Many>>::new();
    reserve_out_of_range(&many_consumers);
    // SAFETY: closing from no producer has no contract; acting as a
    // producer, holding nothing.
    unsafe {
        many_consumers.close(false);
        assert_eq!(
            many_consumers.try_reserve(0),
            Err(TrySendError::Disconnected(()))
        );
    }
}

#[test]
fn no_sender_or_receiver_is_counted_back_in_once_the_last_is_gone() {
    let chan = Chan::<Ring<u64, 4, Many, Many>>::new();
    // SAFETY: many producers: the cursor holds nothing. The receiver and
    // sender `new` counted are each given up once; nothing is received for
    // the receiver afterwards.
    unsafe {
        chan.try_send(conjured(), 7).unwrap();
        chan.drop_receiver();
        chan.drop_sender();
    }
    assert!(!chan.try_count_in(true) && !chan.try_count_in(false));
    assert_eq!((chan.receiver_count(), chan.sender_count()), (0, 0));
    // SAFETY: many consumers: the cursor holds nothing.
    let after = unsafe { chan.try_recv(conjured()) };
    assert_eq!(after, Err(TryRecvError::Disconnected), "drained");
}
