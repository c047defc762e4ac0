//! Unit tests of the endpoints: held units, and single producers whose
//! units push from several threads.

use std::future::Future;

use super::channel;
use crate::arity::{Many, One};
use crate::error::TrySendError;
use crate::list::List;
use crate::ring::Ring;
use crate::storage::{Capacity, Storage};

#[test]
fn units_give_back_exactly_what_they_hold_however_they_are_split_and_used() {
    let (mut tx, mut rx) = channel::<Ring<u32, 4, One, One>>();
    let mut all = tx.by_ref().try_reserve(4).unwrap();
    let mut two = all.split(2);
    assert_eq!((all.len(), two.len()), (2, 2));
    two.send(1).unwrap();
    drop(two);
    all.send(2).unwrap();
    assert_eq!(all.chan().reserved(), 1);
    drop(all);
    assert_eq!(tx.chan().reserved(), 0);
    // Two values queued, two units free: no more, no less.
    assert_eq!(
        tx.by_ref().try_reserve(3).unwrap_err(),
        TrySendError::Full(())
    );
    let free = tx.by_ref().try_reserve(2).unwrap();
    drop(free);
    assert_eq!(rx.by_ref().try_recv(), Ok(1));
    assert_eq!(rx.by_ref().try_recv(), Ok(2));
    assert_eq!(tx.by_ref().try_reserve(4).map(|units| units.len()), Ok(4));
}

#[test]
fn a_send_through_used_up_units_panics_and_returns_nothing_it_did_not_hold() {
    let (tx, mut rx) = channel::<Ring<u32, 2, Many, One>>();
    let mut one = tx.shared().try_reserve(1).unwrap();
    one.send(7).unwrap();
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| one.send(8)));
    assert!(unwound.is_err());
    drop(one);
    // One value queued and nothing held: exactly one more fits.
    assert_eq!(tx.chan().reserved(), 0);
    assert!(tx.shared().try_send(9).is_ok());
    assert!(tx.chan().is_full());
    assert_eq!(rx.by_ref().try_recv(), Ok(7));
    assert_eq!(rx.by_ref().try_recv(), Ok(9));
}

#[test]
fn a_unit_is_used_by_its_send_or_given_back_once_when_dropped() {
    let (tx, mut rx) = channel::<Ring<u32, 2, Many, One>>();
    let mut sent = tx.shared().try_reserve(1).unwrap();
    let dropped = tx.shared().try_reserve(1).unwrap();
    assert_eq!(tx.chan().reserved(), 2);
    sent.send(1).unwrap();
    drop(dropped);
    // One value queued and nothing held: exactly one more fits.
    assert_eq!(tx.chan().reserved(), 0);
    assert!(tx.shared().try_send(2).is_ok());
    assert!(tx.chan().is_full());
    assert_eq!(rx.by_ref().try_recv(), Ok(1));
    // A unit sent on a closed channel hands its value back and the
    // unit too.
    let mut late = tx.shared().try_reserve(1).unwrap();
    assert!(rx.close());
    assert_eq!(late.send(3).unwrap_err().into_inner(), 3);
    assert_eq!(tx.chan().reserved(), 0);
}

#[test]
fn units_hand_out_exactly_as_many_single_units_as_they_hold() {
    let (mut tx, _rx) = channel::<Ring<u32, 4, One, One>>();
    let mut units = tx.by_ref().try_reserve(3).unwrap();
    let taken: Vec<_> =
        std::iter::from_fn(|| (!units.is_empty()).then(|| units.split(1))).collect();
    assert_eq!((taken.len(), units.len()), (3, 0));
    assert_eq!(units.chan().reserved(), 3);
    drop(taken);
    assert_eq!(units.chan().reserved(), 0);
    drop(units);
    assert_eq!(tx.by_ref().try_reserve(4).map(|units| units.len()), Ok(4));
}

/// Two halves of one reservation of a single producer, sending from two
/// threads at once: every value arrives, each half's in order.
fn units_of_one_producer_push_from_two_threads<S>()
where
    S: Storage<Item = u32, Senders = One, Receivers = One, Wait = crate::wait::Park>,
{
    const HALF: u32 = 32;
    const SECOND: u32 = 1 << 30;
    let rounds = if cfg!(miri) { 2 } else { 400 };
    let (mut tx, mut rx) = channel::<S>();
    let mut next = [0, SECOND];
    for _ in 0..rounds {
        let mut first = tx.by_ref().try_reserve(2 * HALF as usize).unwrap();
        let second = first.split(HALF as usize);
        std::thread::scope(|scope| {
            for (mut units, base) in [(first, next[0]), (second, next[1])] {
                scope.spawn(move || {
                    for i in 0..HALF {
                        units.send(base + i).unwrap();
                    }
                });
            }
        });
        let mut got = Vec::new();
        rx.by_ref().try_recv_many(&mut got, usize::MAX);
        assert_eq!(got.len(), 2 * HALF as usize, "a value was lost");
        for (half, start) in next.iter_mut().enumerate() {
            let own: Vec<u32> = got
                .iter()
                .copied()
                .filter(|&value| (value >= SECOND) == (half == 1))
                .collect();
            assert_eq!(own, (*start..*start + HALF).collect::<Vec<_>>());
            *start += HALF;
        }
    }
}

#[test]
fn units_of_a_single_list_producer_push_from_two_threads() {
    units_of_one_producer_push_from_two_threads::<List<u32, One, One>>();
}

#[test]
fn units_of_a_single_ring_producer_push_from_two_threads() {
    units_of_one_producer_push_from_two_threads::<Ring<u32, 64, One, One>>();
}

/// A reservation polled again after it completed reserves again, while
/// the units it made first push from another thread: the reservation
/// reads only what the producer publishes, the pushes take turns at the
/// producer's cursor, and every value arrives, each sender's in order.
/// The other thread starts on a relaxed flag raised after the second
/// poll, which orders nothing, so a reservation that touched the cursor
/// would race with that thread's pushes (Miri reports it).
fn a_reservation_polled_again_while_its_units_push_elsewhere<S>()
where
    S: Storage<Item = u32, Senders = One, Receivers = One, Wait = crate::wait::Park>,
{
    const N: u32 = 16;
    const AGAIN: u32 = if cfg!(miri) { 4 } else { 32 };
    const MAIN: u32 = 1 << 30;
    let (mut tx, mut rx) = channel::<S>();
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut reserve = std::pin::pin!(tx.by_ref().reserve(N as usize));
    let mut again = || {
        let std::task::Poll::Ready(Ok(units)) = reserve.as_mut().poll(&mut cx) else {
            panic!("room for more units");
        };
        units
    };
    let mut first = again();
    let go = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            // ORDERING: Relaxed on purpose: see the doc comment.
            while !go.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::yield_now();
            }
            for i in 0..N {
                first.send(i).unwrap();
            }
        });
        for k in 0..AGAIN {
            let mut more = again();
            // ORDERING: Relaxed, as above.
            go.store(true, std::sync::atomic::Ordering::Relaxed);
            for i in 0..N {
                more.send(MAIN + k * N + i).unwrap();
            }
        }
    });
    let mut got = Vec::new();
    rx.by_ref().try_recv_many(&mut got, usize::MAX);
    let theirs: Vec<u32> = got.iter().copied().filter(|&v| v < MAIN).collect();
    let ours: Vec<u32> = got.iter().copied().filter(|&v| v >= MAIN).collect();
    assert_eq!(theirs, (0..N).collect::<Vec<_>>());
    assert_eq!(ours, (MAIN..MAIN + AGAIN * N).collect::<Vec<_>>());
}

#[test]
fn a_ring_reservation_polled_again_runs_beside_the_units_it_made() {
    a_reservation_polled_again_while_its_units_push_elsewhere::<Ring<u32, 1024, One, One>>();
}

#[test]
fn a_list_reservation_polled_again_runs_beside_the_units_it_made() {
    a_reservation_polled_again_while_its_units_push_elsewhere::<List<u32, One, One>>();
}

#[test]
fn splitting_off_more_units_than_are_held_panics() {
    let (mut tx, _rx) = channel::<Ring<u32, 4, One, One>>();
    let mut units = tx.by_ref().try_reserve(2).unwrap();
    let split = std::panic::AssertUnwindSafe(|| drop(units.split(3)));
    assert!(std::panic::catch_unwind(split).is_err());
    assert_eq!(units.len(), 2);
    drop(units);
    assert_eq!(<Ring<u32, 4, One, One> as Capacity>::CAP, 4);
    assert_eq!(tx.by_ref().try_reserve(4).map(|units| units.len()), Ok(4));
}
