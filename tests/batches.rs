//! Batches: `try_send_many`, `send_many`, `try_recv_many`, `recv_many`,
//! `recv_many_blocking`, with exact counts, on every flavour.

use std::future::Future;

use asyncband::{mpmc, mpsc, spsc};
use asyncband_tests::{Ledger, current_thread, within};

macro_rules! batches {
    ($name:ident, $topology:ident, bounded) => {
        mod $name {
            use super::*;

            #[test]
            fn try_send_many_fills_exactly_the_free_slots_and_leaves_the_rest() {
                #[allow(unused_mut)]
                let (mut tx, mut rx) = $topology::bounded::<u32, 8>();
                tx.try_send(100).unwrap();
                let mut values = 0..20;
                assert_eq!(tx.try_send_many(&mut values), Ok(7));
                assert_eq!(values.next(), Some(7), "nothing taken that was not sent");
                assert!(tx.is_full());
                assert_eq!(tx.try_send_many(&mut values), Ok(0));
                let mut got = Vec::new();
                assert_eq!(rx.try_recv_many(&mut got, 100), 8);
                assert_eq!(got, [100, 0, 1, 2, 3, 4, 5, 6]);
            }

            #[test]
            fn try_send_many_respects_held_permits() {
                #[allow(unused_mut)]
                let (mut tx, mut rx) = $topology::bounded::<u32, 4>();
                let permit = tx.try_reserve().unwrap();
                // The permit holds one of the four slots until it is sent.
                permit.send(9).unwrap();
                assert_eq!(tx.try_send_many(&mut (0..10)), Ok(3));
                assert_eq!(rx.try_iter().collect::<Vec<_>>(), [9, 0, 1, 2]);
            }

            #[test]
            fn send_many_waits_for_room_and_sends_everything_in_order() {
                within(|| {
                    #[allow(unused_mut)]
                    let (mut tx, mut rx) = $topology::bounded::<u32, 4>();
                    let consumer = std::thread::spawn(move || rx.iter().collect::<Vec<_>>());
                    let sent = current_thread().block_on(tx.send_many(&mut (0..1000)));
                    assert_eq!(sent, Ok(1000));
                    drop(tx);
                    assert_eq!(consumer.join().unwrap(), (0..1000).collect::<Vec<_>>());
                })
            }

            #[test]
            fn send_many_that_exactly_fills_the_free_slots_completes_at_once() {
                within(|| {
                    #[allow(unused_mut)]
                    let (mut tx, mut rx) = $topology::bounded::<u32, 4>();
                    let mut values = vec![1, 2, 3, 4].into_iter();
                    let sent = futures::executor::block_on(futures::future::poll_fn(|cx| {
                        let send = std::pin::pin!(tx.send_many(&mut values));
                        std::task::Poll::Ready(send.poll(cx))
                    }));
                    assert_eq!(
                        sent,
                        std::task::Poll::Ready(Ok(4)),
                        "waited with every value sent"
                    );
                    assert!(tx.is_full());
                    assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2, 3, 4]);
                })
            }

            #[test]
            fn send_many_of_an_empty_iterator_to_a_full_channel_completes_at_once() {
                within(|| {
                    #[allow(unused_mut)]
                    let (mut tx, _rx) = $topology::bounded::<u32, 2>();
                    tx.try_send_many(&mut (0..2)).unwrap();
                    let mut none = std::iter::empty();
                    let sent = futures::executor::block_on(futures::future::poll_fn(|cx| {
                        let send = std::pin::pin!(tx.send_many(&mut none));
                        std::task::Poll::Ready(send.poll(cx))
                    }));
                    assert_eq!(sent, std::task::Poll::Ready(Ok(0)));
                })
            }

            #[test]
            fn send_many_then_recv_in_one_task_when_the_batch_fills_the_channel() {
                within(|| {
                    #[allow(unused_mut)]
                    let (mut tx, mut rx) = $topology::bounded::<u32, 8>();
                    current_thread().block_on(async {
                        assert_eq!(tx.send_many(&mut (0..8)).await, Ok(8));
                        assert_eq!(rx.recv().await, Ok(0));
                    });
                })
            }

            #[test]
            fn send_many_to_a_closed_channel_hands_back_the_value_in_hand() {
                let ledger = Ledger::new();
                #[allow(unused_mut)]
                let (mut tx, rx) = $topology::bounded::<_, 4>();
                let mut values = (0..3).map(|_| ledger.track());
                drop(rx);
                let err = current_thread()
                    .block_on(tx.send_many(&mut values))
                    .unwrap_err();
                drop(err);
                drop(values);
                ledger.assert_each_dropped_once();
            }
        }
    };
    ($name:ident, $topology:ident, unbounded) => {
        mod $name {
            use super::*;

            #[test]
            fn try_send_many_to_a_closed_channel_hands_back_the_value_in_hand_and_takes_no_more() {
                let ledger = Ledger::new();
                #[allow(unused_mut)]
                let (mut tx, rx) = $topology::unbounded::<_>();
                let mut values = (0..3).map(|_| ledger.track());
                drop(rx);
                let err = tx.try_send_many(&mut values).unwrap_err();
                drop(err);
                assert_eq!(
                    values.by_ref().count(),
                    2,
                    "only the value in hand was taken"
                );
                ledger.assert_each_dropped_once();
            }

            #[test]
            fn try_send_many_sends_everything() {
                #[allow(unused_mut)]
                let (mut tx, mut rx) = $topology::unbounded::<u32>();
                let mut values = 0..500;
                assert_eq!(tx.try_send_many(&mut values), Ok(500));
                assert_eq!(values.next(), None);
                let mut got = Vec::new();
                assert_eq!(rx.try_recv_many(&mut got, 1000), 500);
                assert_eq!(got, (0..500).collect::<Vec<_>>());
            }

            #[test]
            fn recv_many_waits_for_one_then_takes_what_is_ready_up_to_the_limit() {
                #[allow(unused_mut)]
                let (mut tx, mut rx) = $topology::unbounded::<u32>();
                assert_eq!(tx.try_send_many(&mut (0..10)), Ok(10));
                let mut got = Vec::new();
                assert_eq!(current_thread().block_on(rx.recv_many(&mut got, 4)), 4);
                assert_eq!(rx.recv_many_blocking(&mut got, 100), 6);
                assert_eq!(got, (0..10).collect::<Vec<_>>());
                drop(tx);
                assert_eq!(rx.recv_many_blocking(&mut got, 100), 0);
                assert_eq!(current_thread().block_on(rx.recv_many(&mut got, 1)), 0);
            }
        }
    };
}

batches!(spsc_bounded, spsc, bounded);
batches!(mpsc_bounded, mpsc, bounded);
batches!(mpmc_bounded, mpmc, bounded);
batches!(spsc_unbounded, spsc, unbounded);
batches!(mpsc_unbounded, mpsc, unbounded);
batches!(mpmc_unbounded, mpmc, unbounded);
