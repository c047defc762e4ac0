//! `Sink`: a slot reserved by `poll_ready` goes back when the sink is
//! dropped or taken apart without `start_send`, a grant to a sink that is
//! never polled again passes on, and values arrive in order.

use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

use asyncband::{mpsc, spsc};
use asyncband_tests::{WakeCounter, current_thread, within};
use futures::sink::{Sink, SinkExt};

/// One `poll_ready` with a waker that does nothing.
fn ready<S: Sink<u32> + Unpin>(sink: &mut S) -> Poll<Result<(), S::Error>> {
    Pin::new(sink).poll_ready(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn a_ready_sink_dropped_without_a_send_gives_its_slot_back() {
    let (tx, mut rx) = mpsc::bounded::<u32, 1>();
    let mut sink = tx.clone().into_sink();
    assert!(matches!(ready(&mut sink), Poll::Ready(Ok(()))));
    assert!(tx.is_full(), "poll_ready reserves the slot");
    drop(sink);
    assert!(!tx.is_full(), "the dropped sink's slot is free again");
    tx.try_send(1).unwrap();
    assert_eq!(rx.try_recv(), Ok(1));
}

#[test]
fn a_ready_sink_taken_apart_gives_its_slot_back() {
    let (tx, mut rx) = spsc::bounded::<u32, 1>();
    let mut sink = tx.into_sink();
    assert!(matches!(ready(&mut sink), Poll::Ready(Ok(()))));
    assert!(rx.is_full(), "poll_ready reserves the slot");
    let mut tx = sink.into_inner().unwrap();
    assert!(!rx.is_full());
    tx.try_send(1).unwrap();
    assert_eq!(rx.try_recv(), Ok(1));
}

#[test]
fn a_waiting_sink_taken_apart_after_room_came_leaves_the_room() {
    let (mut tx, mut rx) = spsc::bounded::<u32, 1>();
    tx.try_send(0).unwrap();
    let mut sink = tx.into_sink();
    assert!(ready(&mut sink).is_pending());
    assert_eq!(rx.try_recv(), Ok(0));
    let mut tx = sink.into_inner().unwrap();
    assert_eq!(tx.try_send(5), Ok(()));
    assert_eq!(rx.try_recv(), Ok(5));
}

#[test]
fn a_grant_to_a_sink_never_polled_again_passes_to_the_sender_behind_it() {
    let (tx, mut rx) = mpsc::bounded::<u32, 1>();
    tx.try_send(0).unwrap();
    let mut sink = tx.clone().into_sink();
    assert!(ready(&mut sink).is_pending());
    let counter = WakeCounter::new();
    let mut send = pin!(tx.send(7));
    assert!(counter.poll(send.as_mut()).is_pending());
    assert_eq!(
        rx.try_recv(),
        Ok(0),
        "the freed slot is granted to the sink"
    );
    drop(sink);
    assert!(counter.wakes() >= 1, "the send behind the sink is woken");
    assert_eq!(counter.poll(send.as_mut()), Poll::Ready(Ok(())));
    assert_eq!(rx.try_recv(), Ok(7));
    assert_eq!(tx.try_send(8), Ok(()));
}

#[test]
fn values_through_a_sink_arrive_in_order_and_a_closed_sink_refuses_more() {
    within(|| {
        let (tx, mut rx) = mpsc::bounded::<u32, 2>();
        let consumer = std::thread::spawn(move || rx.iter().collect::<Vec<_>>());
        current_thread().block_on(async move {
            let mut sink = tx.into_sink();
            for value in 0..200 {
                sink.send(value).await.unwrap();
            }
            sink.close().await.unwrap();
            assert!(sink.send(1).await.is_err());
        });
        assert_eq!(consumer.join().unwrap(), (0..200).collect::<Vec<_>>());
    });
}

#[test]
fn start_send_after_the_receiver_is_gone_hands_the_value_back() {
    let (tx, rx) = spsc::bounded::<u32, 2>();
    let mut sink = tx.into_sink();
    assert!(matches!(ready(&mut sink), Poll::Ready(Ok(()))));
    drop(rx);
    let err = Pin::new(&mut sink).start_send(3).unwrap_err();
    assert_eq!(err.0, Some(3));
}
