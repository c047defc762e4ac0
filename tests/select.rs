//! `select!`, `select_biased!` and `Select`, written once and run against
//! all six flavours (both channels of a select are of the flavour under
//! test; mixes of flavours and types are in `mixed`).
//!
//! `every_flavour!` holds what needs only receiving and sending,
//! `bounded!` what needs a bound (full channels, `reserve` arms). Anything
//! that could hang runs under [`within`]; randomized tests print their seed
//! when they fail (`ASYNCBAND_SEED` replays it).

use std::cell::Cell;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

use asyncband::error::{RecvError, SendError, TryRecvError};
use asyncband::{Select, select, select_biased};
use asyncband_tests::{
    SeedReport, XorShift, assert_received_exactly_the_accepted, scale, test_seed, within,
};

/// The bound of the bounded flavours under test: small, so senders wait.
const CAP: usize = 4;
/// Time for another thread to reach its wait (not needed for correctness).
const SETTLE: Duration = Duration::from_millis(20);
/// Selects in the fairness tests.
const ROUNDS: usize = 10_000;

/// A waker that panics at its first wake.
struct PanicsOnWake {
    armed: AtomicBool,
}

impl PanicsOnWake {
    fn armed() -> (Arc<Self>, Waker) {
        let this = Arc::new(Self {
            armed: AtomicBool::new(true),
        });
        let waker = Waker::from(Arc::clone(&this));
        (this, waker)
    }

    fn is_armed(&self) -> bool {
        self.armed.load(Ordering::SeqCst)
    }
}

impl Wake for PanicsOnWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        assert!(
            !self.armed.swap(false, Ordering::SeqCst),
            "a waker that panics"
        );
    }
}

macro_rules! every_flavour {
    () => {
        #[test]
        fn tokio_and_futures_select_over_receives_lose_and_duplicate_nothing() {
            within(|| {
                let n = scale(2_000);
                let (mut a_tx, mut a) = F::<u64>::channel();
                let (mut b_tx, mut b) = F::<u64>::channel();
                asyncband_tests::current_thread().block_on(async move {
                    let producer = tokio::spawn(async move {
                        for i in (0..n).map(|i| i as u64) {
                            a_tx.send(i).await.unwrap();
                            b_tx.send(i).await.unwrap();
                            if i % 7 == 0 {
                                tokio::task::yield_now().await;
                            }
                        }
                    });
                    let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
                    let mut round = 0u64;
                    while got_a.len() + got_b.len() < 2 * n {
                        round += 1;
                        // Every round builds fresh receive futures; the ones
                        // not chosen are dropped, which must take nothing.
                        if round % 2 == 0 {
                            // A drained channel whose producer is done
                            // completes its arm at once with an error.
                            tokio::select! {
                                v = a.recv() => got_a.extend(v.ok()),
                                v = b.recv() => got_b.extend(v.ok()),
                                () = tokio::task::yield_now() => {}
                            }
                        } else {
                            use futures::FutureExt;
                            futures::select! {
                                v = a.recv().fuse() => got_a.extend(v.ok()),
                                v = b.recv().fuse() => got_b.extend(v.ok()),
                                () = tokio::task::yield_now().fuse() => {}
                            }
                        }
                    }
                    producer.await.unwrap();
                    let expected: Vec<u64> = (0..n).map(|i| i as u64).collect();
                    assert_eq!(got_a, expected, "each value once, in order");
                    assert_eq!(got_b, expected, "each value once, in order");
                });
            });
        }

        #[test]
        fn a_select_loop_with_random_timeouts_and_closes_receives_each_accepted_value_once() {
            let seed = test_seed();
            let _report = SeedReport::new("select loop", seed);
            let mut rng = XorShift::new(seed);
            let per_producer = scale(2_000) as u64;
            let (tx_a, mut a) = F::<u64>::channel();
            let (tx_b, mut b) = F::<u64>::channel();
            let producers: Vec<_> = [tx_a, tx_b]
                .into_iter()
                .map(|mut tx| {
                    let mut rng = rng.fork();
                    let close_at = rng.between(per_producer / 2, per_producer);
                    thread::spawn(move || {
                        let mut accepted = Vec::new();
                        for seq in 0..per_producer {
                            if seq == close_at {
                                tx.close();
                            }
                            let timeout = Duration::from_micros(rng.below(200));
                            if tx.send_timeout(seq, timeout).is_ok() {
                                accepted.push(seq);
                            }
                        }
                        accepted
                    })
                })
                .collect();
            let received = within(move || {
                let mut received = Vec::new();
                let (mut a_open, mut b_open) = (true, true);
                while a_open || b_open {
                    let wait = Duration::from_micros(rng.below(300));
                    if a_open && b_open {
                        select! {
                            recv(a) -> msg => match msg {
                                Ok(seq) => received.push((0, seq)),
                                Err(RecvError) => a_open = false,
                            },
                            recv(b) -> msg => match msg {
                                Ok(seq) => received.push((1, seq)),
                                Err(RecvError) => b_open = false,
                            },
                            default(wait) => {}
                        }
                    } else if a_open {
                        select! {
                            recv(a) -> msg => match msg {
                                Ok(seq) => received.push((0, seq)),
                                Err(RecvError) => a_open = false,
                            },
                            default(wait) => {}
                        }
                    } else {
                        select! {
                            recv(b) -> msg => match msg {
                                Ok(seq) => received.push((1, seq)),
                                Err(RecvError) => b_open = false,
                            },
                            default(wait) => {}
                        }
                    }
                }
                received
            });
            let accepted: Vec<Vec<u64>> =
                producers.into_iter().map(|p| p.join().unwrap()).collect();
            assert_received_exactly_the_accepted(&[received], &accepted);
        }

        #[test]
        fn a_select_loop_of_send_arms_sends_each_value_once_and_builds_only_what_it_sends() {
            let seed = test_seed();
            let _report = SeedReport::new("send arms", seed);
            let mut rng = XorShift::new(seed);
            let total = scale(2_000) as u64;
            let (mut tx_a, mut a) = F::<u64>::channel();
            let (mut tx_b, mut b) = F::<u64>::channel();
            let consumers: Vec<_> = [
                thread::spawn(move || a.iter().collect::<Vec<_>>()),
                thread::spawn(move || b.iter().collect::<Vec<_>>()),
            ]
            .into();
            within(move || {
                let next = Cell::new(0u64);
                let build = || {
                    let value = next.get();
                    next.set(value + 1);
                    value
                };
                let mut timeouts = 0;
                while next.get() < total {
                    let wait = Duration::from_micros(rng.below(100));
                    select! {
                        send(tx_a, build()) -> res => res.unwrap(),
                        send(tx_b, build()) -> res => res.unwrap(),
                        default(wait) => timeouts += 1,
                    }
                }
                let _ = timeouts;
            });
            let mut all = Vec::new();
            for consumer in consumers {
                let got = consumer.join().unwrap();
                assert!(
                    got.windows(2).all(|w| w[0] < w[1]),
                    "one channel's values in order"
                );
                all.extend(got);
            }
            all.sort_unstable();
            assert_eq!(all, (0..total).collect::<Vec<_>>());
        }

        #[test]
        fn a_parked_select_wakes_when_its_channel_is_closed() {
            within(|| {
                let (tx_a, mut a) = F::<u64>::channel();
                let (_tx_b, mut b) = F::<u64>::channel();
                let closer = thread::spawn(move || {
                    thread::sleep(SETTLE);
                    drop(tx_a);
                });
                let got = select! {
                    recv(a) -> msg => msg,
                    recv(b) -> _ => unreachable!("nothing is sent on `b`"),
                };
                assert_eq!(got, Err(RecvError));
                closer.join().unwrap();
            })
        }

        #[test]
        fn a_parked_select_wakes_for_a_value_sent_later() {
            within(|| {
                let (mut tx_a, mut a) = F::<u64>::channel();
                let (_tx_b, mut b) = F::<u64>::channel();
                let producer = thread::spawn(move || {
                    thread::sleep(SETTLE);
                    tx_a.send_blocking(9).unwrap();
                    tx_a
                });
                let got = select! {
                    recv(b) -> _ => unreachable!("nothing is sent on `b`"),
                    recv(a) -> msg => msg,
                };
                assert_eq!(got, Ok(9));
                drop(producer.join().unwrap());
            })
        }

        #[test]
        fn select_is_fair_between_two_ready_arms_behind_one_that_is_not() {
            let (_idle_tx, mut idle) = F::<u64>::channel();
            let (mut tx_a, mut a) = F::<u64>::channel();
            let (mut tx_b, mut b) = F::<u64>::channel();
            tx_a.try_send(0).unwrap();
            tx_b.try_send(0).unwrap();
            let mut wins = [0usize; 2];
            for _ in 0..ROUNDS {
                select! {
                    recv(idle) -> _ => unreachable!("nothing is sent on it"),
                    recv(a) -> msg => {
                        msg.unwrap();
                        wins[0] += 1;
                        tx_a.try_send(0).unwrap();
                    }
                    recv(b) -> msg => {
                        msg.unwrap();
                        wins[1] += 1;
                        tx_b.try_send(0).unwrap();
                    }
                }
            }
            for won in wins {
                assert!(
                    (ROUNDS * 4 / 10..=ROUNDS * 6 / 10).contains(&won),
                    "wins {wins:?}: each ready arm should win 40 to 60 %"
                );
            }
        }

        #[test]
        fn select_biased_takes_the_first_ready_arm_in_written_order() {
            let (mut tx_a, mut a) = F::<u64>::channel();
            let (mut tx_b, mut b) = F::<u64>::channel();
            tx_a.try_send(1).unwrap();
            tx_b.try_send(2).unwrap();
            for _ in 0..100 {
                let got = select_biased! {
                    recv(b) -> msg => msg.unwrap(),
                    recv(a) -> msg => msg.unwrap(),
                };
                assert_eq!(got, 2);
                tx_b.try_send(2).unwrap();
            }
            assert_eq!(a.try_recv(), Ok(1), "the second arm took nothing");
        }

        #[test]
        fn default_never_blocks() {
            within(|| {
                let (_tx_a, mut a) = F::<u64>::channel();
                let (_tx_b, mut b) = F::<u64>::channel();
                let start = Instant::now();
                let mut defaults = 0;
                for _ in 0..100 {
                    select! {
                        recv(a) -> _ => unreachable!(),
                        recv(b) -> _ => unreachable!(),
                        default => defaults += 1,
                    }
                }
                assert_eq!(defaults, 100);
                assert!(
                    start.elapsed() < Duration::from_secs(2),
                    "took {:?}",
                    start.elapsed()
                );
            })
        }

        #[test]
        fn default_with_a_timeout_waits_that_long_then_runs() {
            within(|| {
                let (_tx, mut rx) = F::<u64>::channel();
                let start = Instant::now();
                let ran = select! {
                    recv(rx) -> _ => false,
                    default(SETTLE) => true,
                };
                assert!(ran);
                assert!(start.elapsed() >= SETTLE);
            })
        }

        #[test]
        fn a_send_arm_on_a_closed_channel_completes_with_its_value_back() {
            let (mut tx, rx) = F::<String>::channel();
            drop(rx);
            let got = select! {
                send(tx, "back".to_string()) -> res => res,
            };
            assert_eq!(got, Err(SendError("back".to_string())));
        }

        #[test]
        fn a_select_never_takes_from_the_arm_it_does_not_choose() {
            let (mut tx_a, mut a) = F::<u64>::channel();
            let (mut tx_b, mut b) = F::<u64>::channel();
            let mut taken = 0;
            for round in 0..200 {
                tx_a.try_send(round).unwrap();
                tx_b.try_send(round).unwrap();
                select! {
                    recv(a) -> msg => assert_eq!(msg, Ok(round)),
                    recv(b) -> msg => assert_eq!(msg, Ok(round)),
                }
                taken += 1;
                // One of the two values is left: take it directly.
                let left = a.try_recv().or_else(|_| b.try_recv());
                assert_eq!(left, Ok(round));
                assert!(a.try_recv().is_err() && b.try_recv().is_err());
            }
            assert_eq!(taken, 200);
        }

        #[test]
        fn select_receives_from_the_receivers_of_a_slice_exactly_once() {
            let per_producer = scale(1_000) as u64;
            let mut receivers = Vec::new();
            let producers: Vec<_> = (0..3)
                .map(|_| {
                    let (mut tx, rx) = F::<u64>::channel();
                    receivers.push(rx);
                    thread::spawn(move || {
                        for seq in 0..per_producer {
                            tx.send_blocking(seq).unwrap();
                        }
                    })
                })
                .collect();
            let received = within(move || {
                let mut ids: Vec<usize> = (0..receivers.len()).collect();
                let mut received = Vec::new();
                while !receivers.is_empty() {
                    let (index, msg) = Select::new(&mut receivers).recv();
                    match msg {
                        Ok(seq) => received.push((ids[index], seq)),
                        Err(RecvError) => {
                            receivers.swap_remove(index);
                            ids.swap_remove(index);
                        }
                    }
                }
                received
            });
            for producer in producers {
                producer.join().unwrap();
            }
            let accepted: Vec<Vec<u64>> = (0..3).map(|_| (0..per_producer).collect()).collect();
            assert_received_exactly_the_accepted(&[received], &accepted);
        }

        #[test]
        fn select_over_a_slice_times_out_tries_and_reports_a_closed_channel() {
            within(|| {
                let (mut tx_a, a) = F::<u64>::channel();
                let (tx_b, b) = F::<u64>::channel();
                let mut receivers = [a, b];
                let mut select = Select::new(&mut receivers);
                assert_eq!(select.try_recv(), None);
                let start = Instant::now();
                assert_eq!(select.recv_timeout(SETTLE), None);
                assert!(start.elapsed() >= SETTLE);
                assert_eq!(select.recv_deadline(Instant::now() + SETTLE), None);
                tx_a.try_send(5).unwrap();
                assert_eq!(select.recv_timeout(SETTLE), Some((0, Ok(5))));
                drop(tx_b);
                assert_eq!(select.recv(), (1, Err(RecvError)));
                let producer = thread::spawn(move || {
                    thread::sleep(SETTLE);
                    tx_a.send_blocking(6).unwrap();
                    tx_a
                });
                let mut biased = Select::new(&mut receivers[..1]).biased();
                assert_eq!(biased.recv(), (0, Ok(6)));
                drop(producer.join().unwrap());
            })
        }

        #[test]
        fn select_over_a_slice_is_fair_between_ready_receivers_behind_idle_ones() {
            // 3 draws the order on the stack, 100 into a vector.
            for n in [3, 100] {
                let (mut senders, mut receivers): (Vec<_>, Vec<_>) =
                    (0..n).map(|_| F::<u64>::channel()).unzip();
                let ready = [n / 2, n / 2 + 1];
                for &index in &ready {
                    senders[index].try_send(0).unwrap();
                }
                let mut wins = [0usize; 2];
                for _ in 0..ROUNDS {
                    let (index, msg) = Select::new(&mut receivers).recv();
                    msg.unwrap();
                    wins[ready.iter().position(|&r| r == index).unwrap()] += 1;
                    senders[index].try_send(0).unwrap();
                }
                for won in wins {
                    assert!(
                        (ROUNDS * 4 / 10..=ROUNDS * 6 / 10).contains(&won),
                        "{n} receivers, wins {wins:?}: each ready one should win 40 to 60 %"
                    );
                }
            }
        }

        #[test]
        fn select_over_a_slice_is_fair_and_can_be_biased() {
            let (mut tx_a, a) = F::<u64>::channel();
            let (mut tx_b, b) = F::<u64>::channel();
            tx_a.try_send(0).unwrap();
            tx_b.try_send(0).unwrap();
            let mut receivers = [a, b];
            let mut wins = [0usize; 2];
            for _ in 0..ROUNDS {
                let (index, msg) = Select::new(&mut receivers).recv();
                msg.unwrap();
                wins[index] += 1;
                if index == 0 {
                    tx_a.try_send(0).unwrap();
                } else {
                    tx_b.try_send(0).unwrap();
                }
            }
            for won in wins {
                assert!(
                    (ROUNDS * 4 / 10..=ROUNDS * 6 / 10).contains(&won),
                    "wins {wins:?}: each receiver should win 40 to 60 %"
                );
            }
            for _ in 0..100 {
                assert_eq!(Select::new(&mut receivers).biased().recv(), (0, Ok(0)));
                tx_a.try_send(0).unwrap();
            }
        }
    };
}

macro_rules! bounded {
    () => {
        #[test]
        fn a_reserve_arm_not_chosen_holds_no_capacity() {
            let (mut tx, mut rx) = F::<u64>::channel();
            let (mut other_tx, mut other) = F::<u64>::channel();
            other_tx.try_send(1).unwrap();
            select_biased! {
                recv(other) -> msg => assert_eq!(msg, Ok(1)),
                reserve(tx) -> _ => unreachable!("the first arm was ready"),
            }
            for i in 0..CAP as u64 {
                tx.try_send(i).unwrap();
            }
            assert!(tx.try_send(99).is_err(), "exactly the capacity is free");
            assert_eq!(rx.try_recv(), Ok(0));
        }

        #[test]
        fn a_reserve_arm_that_waited_and_was_not_chosen_gives_its_slot_back() {
            within(|| {
                for _ in 0..20 {
                    let (mut tx, mut rx) = F::<u64>::channel();
                    let (mut other_tx, mut other) = F::<u64>::channel();
                    for i in 0..CAP as u64 {
                        tx.try_send(i).unwrap();
                    }
                    let helper = thread::spawn(move || {
                        thread::sleep(Duration::from_millis(2));
                        // Frees one slot (maybe granted to the waiting
                        // reservation) and makes the other arm ready.
                        assert_eq!(rx.recv_blocking(), Ok(0));
                        other_tx.try_send(7).unwrap();
                        (rx, other_tx)
                    });
                    let reserved = select! {
                        reserve(tx) -> permit => {
                            drop(permit.unwrap());
                            true
                        }
                        recv(other) -> msg => {
                            assert_eq!(msg, Ok(7));
                            false
                        }
                    };
                    let (_rx, _other_tx) = helper.join().unwrap();
                    let _ = reserved;
                    assert!(tx.try_send(100).is_ok(), "the freed slot is free");
                    assert!(tx.try_send(101).is_err(), "and only that one");
                }
            })
        }

        #[test]
        fn a_send_arm_value_is_not_built_when_the_arm_is_not_chosen() {
            let (mut full, _full_rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                full.try_send(i).unwrap();
            }
            let (mut tx, mut rx) = F::<u64>::channel();
            let built = Cell::new(0);
            for round in 0..50 {
                select! {
                    send(full, { built.set(built.get() + 1); 99 }) -> _ => unreachable!("the channel is full"),
                    send(tx, round) -> res => res.unwrap(),
                }
                assert_eq!(rx.try_recv(), Ok(round));
            }
            let timed_out = select! {
                send(full, { built.set(built.get() + 1); 99 }) -> _ => false,
                default(Duration::from_millis(5)) => true,
            };
            assert!(timed_out);
            assert_eq!(built.get(), 0);
        }

        #[test]
        fn a_bounded_arm_body_may_use_its_sender_again() {
            let (mut tx, mut rx) = F::<u64>::channel();
            select! {
                send(tx, 1) -> res => {
                    res.unwrap();
                    tx.try_send(2).unwrap();
                }
            }
            select! {
                reserve(tx) -> permit => {
                    permit.unwrap().send(3).unwrap();
                    tx.try_send(4).unwrap();
                }
            }
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2, 3, 4]);
        }

        #[test]
        fn a_body_may_move_the_sender_of_a_bounded_arm_not_chosen() {
            let (mut tx, mut rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                tx.try_send(i).unwrap();
            }
            let (mut stop_tx, mut stop) = F::<u64>::channel();
            stop_tx.try_send(0).unwrap();
            select! {
                send(tx, 99) -> _ => unreachable!("the channel is full"),
                recv(stop) -> _ => drop(tx),
            }
            let drained: Vec<u64> = rx.try_iter().collect();
            assert_eq!(drained, (0..CAP as u64).collect::<Vec<_>>());
            assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
        }

        #[test]
        fn a_parked_send_arm_completes_when_room_is_made() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let (_other_tx, mut other) = F::<u64>::channel();
                let consumer = thread::spawn(move || {
                    thread::sleep(SETTLE);
                    let first = rx.recv_blocking();
                    (first, rx)
                });
                select! {
                    send(tx, 99) -> res => res.unwrap(),
                    recv(other) -> _ => unreachable!(),
                }
                let (first, mut rx) = consumer.join().unwrap();
                assert_eq!(first, Ok(0));
                let rest: Vec<u64> = rx.try_iter().collect();
                assert_eq!(rest, [1, 2, 3, 99]);
            })
        }

        #[test]
        fn a_parked_reserve_arm_completes_with_an_error_when_the_receiver_goes() {
            within(|| {
                let (mut tx, rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let dropper = thread::spawn(move || {
                    thread::sleep(SETTLE);
                    drop(rx);
                });
                select! {
                    reserve(tx) -> permit => assert_eq!(permit.unwrap_err(), SendError(())),
                }
                dropper.join().unwrap();
            })
        }
    };
}

/// What needs two senders of one bounded channel.
macro_rules! many_senders {
    () => {
        #[test]
        fn a_permit_chosen_is_given_back_when_dropping_another_arm_unwinds() {
            within(|| {
                let mut settle = SETTLE;
                for _ in 0..8 {
                    let (tx, mut rx) = F::<u64>::channel();
                    for i in 0..CAP as u64 - 2 {
                        tx.try_send(i).unwrap();
                    }
                    let held = tx.try_reserve_many(2).unwrap();
                    let selecting = {
                        let (first, second) = (tx.clone(), tx.clone());
                        thread::spawn(move || {
                            panic::catch_unwind(AssertUnwindSafe(|| {
                                select_biased! {
                                    reserve(first) -> permit => drop(permit),
                                    reserve(second) -> permit => drop(permit),
                                }
                            }))
                            .is_err()
                        })
                    };
                    // Both arms wait, in that order; then a task's send
                    // behind them.
                    thread::sleep(settle);
                    let (panics, waker) = PanicsOnWake::armed();
                    let mut queued = Box::pin(tx.send(7));
                    let mut cx = Context::from_waker(&waker);
                    assert!(queued.as_mut().poll(&mut cx).is_pending());
                    // One slot to each arm, at once. The select takes the
                    // first and drops the second, which passes its slot on
                    // to the send: that wake panics.
                    if panic::catch_unwind(AssertUnwindSafe(|| drop(held))).is_err() {
                        // The send queued first: the select was not
                        // waiting yet. Try again, with longer to settle.
                        assert!(!selecting.join().unwrap());
                        settle *= 2;
                        continue;
                    }
                    assert!(
                        selecting.join().unwrap(),
                        "dropping the second arm panicked"
                    );
                    assert!(!panics.is_armed());
                    assert_eq!(
                        queued
                            .as_mut()
                            .poll(&mut Context::from_waker(Waker::noop())),
                        Poll::Ready(Ok(()))
                    );
                    // CAP - 2 values, then 7: the chosen permit's slot is
                    // the one left.
                    assert!(tx.try_send(8).is_ok(), "the chosen permit's slot was lost");
                    assert!(tx.try_send(9).is_err());
                    let mut expected: Vec<u64> = (0..CAP as u64 - 2).collect();
                    expected.extend([7, 8]);
                    assert_eq!(rx.try_iter().collect::<Vec<_>>(), expected);
                    return;
                }
                panic!("the select never waited before the send queued");
            })
        }
    };
}

#[allow(unused_mut)]
mod spsc_bounded {
    use super::*;
    type F<T> = asyncband::spsc::Bounded<T, CAP>;
    every_flavour!();
    bounded!();
}

#[allow(unused_mut)]
mod spsc_unbounded {
    use super::*;
    type F<T> = asyncband::spsc::Unbounded<T>;
    every_flavour!();
}

#[allow(unused_mut)]
mod mpsc_bounded {
    use super::*;
    type F<T> = asyncband::mpsc::Bounded<T, CAP>;
    every_flavour!();
    bounded!();
    many_senders!();
}

#[allow(unused_mut)]
mod mpsc_unbounded {
    use super::*;
    type F<T> = asyncband::mpsc::Unbounded<T>;
    every_flavour!();
}

#[allow(unused_mut)]
mod mpmc_bounded {
    use super::*;
    type F<T> = asyncband::mpmc::Bounded<T, CAP>;
    every_flavour!();
    bounded!();
    many_senders!();
}

#[allow(unused_mut)]
mod mpmc_unbounded {
    use super::*;
    type F<T> = asyncband::mpmc::Unbounded<T>;
    every_flavour!();
}

/// Arms of different flavours and payload types in one select, endpoints
/// named through references and fields, and bodies that leave the loop.
mod mixed {
    use super::*;
    use asyncband::{mpmc, mpsc, spsc};

    struct Endpoints {
        ticks: spsc::Receiver<spsc::Bounded<u8, 2>>,
        names: mpmc::Receiver<mpmc::Unbounded<String>>,
    }

    #[test]
    fn arms_mix_flavours_types_and_kinds_of_endpoint_expressions() {
        let (mut tick_tx, ticks) = spsc::bounded::<u8, 2>();
        let (name_tx, names) = mpmc::unbounded::<String>();
        let (out, mut out_rx) = mpsc::unbounded::<usize>();
        let mut endpoints = Endpoints { ticks, names };
        let names_ref = &endpoints.names.clone();
        tick_tx.try_send(1).unwrap();
        name_tx.try_send("x".to_string()).unwrap();
        let mut seen = Vec::new();
        let ticks_ref = &mut endpoints.ticks;
        loop {
            select! {
                recv(ticks_ref) -> tick => seen.push(format!("tick {}", tick.unwrap())),
                recv(names_ref) -> name => {
                    let name = name.unwrap();
                    seen.push(name);
                }
                recv(endpoints.names) -> name => seen.push(name.unwrap()),
                send(&out, seen.len()) -> res => {
                    res.unwrap();
                    if seen.len() == 2 {
                        break;
                    }
                }
            }
        }
        seen.sort();
        assert_eq!(seen, ["tick 1", "x"]);
        let sent: Vec<usize> = out_rx.try_iter().collect();
        assert_eq!(
            sent.last(),
            Some(&2),
            "the send of the last round: {sent:?}"
        );
    }

    #[test]
    fn a_body_can_return_an_error_with_the_question_mark() {
        fn first(rx: &mut mpsc::Receiver<mpsc::Unbounded<u8>>) -> Result<u8, RecvError> {
            let value = select! {
                recv(rx) -> msg => msg?,
            };
            Ok(value)
        }
        let (tx, mut rx) = mpsc::unbounded::<u8>();
        tx.try_send(4).unwrap();
        assert_eq!(first(&mut rx), Ok(4));
        drop(tx);
        assert_eq!(first(&mut rx), Err(RecvError));
    }

    #[test]
    fn a_select_with_only_default_runs_it() {
        assert!(select! { default => true });
        assert!(select! { default(Duration::ZERO) => true });
    }
}

/// Selects over `wait = spin` and `wait = yield` channels, whose arms keep
/// no waiters and wake the select at once: it polls them in rounds, paced
/// by the policy, and must still see every value, close and timeout.
mod busy {
    use super::*;
    use asyncband::wait::{Park, Spin, Wait, Yield};
    use asyncband::{mpsc, spsc};

    /// Two producers, one per channel of policy `W`, into one select: every
    /// value once and in order, and each close seen.
    fn one_select_takes_two_streams<W: Wait>() {
        let per_producer = scale(2_000) as u64;
        let (a_tx, mut a) = mpsc::Bounded::<u64, CAP, { usize::MAX }, W>::channel();
        let (mut b_tx, mut b) = spsc::Unbounded::<u64, { usize::MAX }, W>::channel();
        let producers = [
            thread::spawn(move || (0..per_producer).for_each(|i| a_tx.send_blocking(i).unwrap())),
            thread::spawn(move || (0..per_producer).for_each(|i| b_tx.send_blocking(i).unwrap())),
        ];
        let (mut next_a, mut next_b) = (0, 0);
        let a_closed_first = loop {
            select! {
                recv(a) -> value => match value {
                    Ok(value) => {
                        assert_eq!(value, next_a, "channel a out of order");
                        next_a += 1;
                    }
                    Err(RecvError) => break true,
                },
                recv(b) -> value => match value {
                    Ok(value) => {
                        assert_eq!(value, next_b, "channel b out of order");
                        next_b += 1;
                    }
                    Err(RecvError) => break false,
                },
            }
        };
        let (rest, next) = if a_closed_first {
            (b.iter().collect::<Vec<_>>(), &mut next_b)
        } else {
            (a.iter().collect::<Vec<_>>(), &mut next_a)
        };
        let expected: Vec<u64> = (*next..per_producer).collect();
        assert_eq!(rest, expected, "the other channel's rest, in order");
        *next = per_producer;
        assert_eq!((next_a, next_b), (per_producer, per_producer));
        for producer in producers {
            producer.join().expect("a producer panicked");
        }
    }

    #[test]
    fn a_select_over_spin_channels_takes_two_streams() {
        within(one_select_takes_two_streams::<Spin>);
    }

    #[test]
    fn a_select_over_yield_channels_takes_two_streams() {
        within(one_select_takes_two_streams::<Yield>);
    }

    /// A select over an empty channel of policy `W` waits out its timeout,
    /// and one over a value sent later by another thread takes it.
    fn times_out_then_takes_a_late_value<W: Wait>() {
        let (tx, mut rx) = mpsc::Bounded::<u8, CAP, { usize::MAX }, W>::channel();
        let started = Instant::now();
        let timed_out = select! {
            recv(rx) -> value => panic!("nothing was sent, got {value:?}"),
            default(SETTLE) => true,
        };
        assert!(timed_out && started.elapsed() >= SETTLE);
        let sender = thread::spawn(move || {
            thread::sleep(SETTLE);
            tx.try_send(7).unwrap();
            tx
        });
        let mut receivers = [rx];
        assert_eq!(Select::new(&mut receivers).recv(), (0, Ok(7)));
        drop(sender.join().expect("the sender panicked"));
        assert_eq!(Select::new(&mut receivers).recv(), (0, Err(RecvError)));
    }

    #[test]
    fn a_select_over_a_spin_channel_times_out_then_takes_a_late_value() {
        within(times_out_then_takes_a_late_value::<Spin>);
    }

    #[test]
    fn a_select_over_a_yield_channel_times_out_then_takes_a_late_value() {
        within(times_out_then_takes_a_late_value::<Yield>);
    }

    #[test]
    fn a_select_over_a_park_and_a_yield_channel_sees_a_value_on_either() {
        within(|| {
            let (park_tx, mut parks) = mpsc::Bounded::<u8, CAP, { usize::MAX }, Park>::channel();
            let (yield_tx, mut yields) = mpsc::Bounded::<u8, CAP, { usize::MAX }, Yield>::channel();
            for (which, value) in [(0, 1), (1, 2)] {
                let (park_tx, yield_tx) = (park_tx.clone(), yield_tx.clone());
                let sender = thread::spawn(move || {
                    thread::sleep(SETTLE);
                    if which == 0 {
                        park_tx.try_send(value).unwrap();
                    } else {
                        yield_tx.try_send(value).unwrap();
                    }
                });
                let got = select! {
                    recv(parks) -> value => (0, value),
                    recv(yields) -> value => (1, value),
                };
                assert_eq!(got, (which, Ok(value)));
                sender.join().expect("the sender panicked");
            }
        });
    }
}
