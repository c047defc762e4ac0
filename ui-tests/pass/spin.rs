// Spin and yield channels: the try and blocking operations, permits, counts,
// weak endpoints and `select!` over them (which polls in rounds).
use asyncband::{channel, mpsc, select, spsc, wait::{Spin, Yield}};
use asyncband_core::wait::membarrier_calls;
use std::time::Duration;

fn main() {
    let (mut tx, mut rx) = channel!(spsc, bounded = 4, u32, wait = spin);
    let _: &spsc::Sender<spsc::Bounded<u32, 4, { usize::MAX }, Spin>> = &tx;
    tx.try_send(1).unwrap();
    tx.send_blocking(2).unwrap();
    tx.try_reserve().unwrap().send(3).unwrap();
    assert_eq!(rx.recv_blocking(), Ok(1));
    assert_eq!(rx.try_recv(), Ok(2));
    select! {
        recv(rx) -> value => assert_eq!(value, Ok(3)),
    }

    let (tx, rx) = channel!(mpmc, unbounded, String, inline = 64, wait = spin);
    let weak = tx.downgrade();
    weak.upgrade().unwrap().try_send("a".to_owned()).unwrap();
    assert_eq!(rx.clone().recv_blocking().as_deref(), Ok("a"));
    assert_eq!((tx.sender_count(), rx.receiver_count()), (1, 1));

    let (tx, mut rx) = channel!(mpsc, bounded = 2, u64, wait = yield);
    let _: &mpsc::Sender<mpsc::Bounded<u64, 2, { usize::MAX }, Yield>> = &tx;
    tx.send_blocking(1).unwrap();
    tx.try_reserve().unwrap().send(2).unwrap();
    assert_eq!(rx.recv_blocking(), Ok(1));
    select! {
        recv(rx) -> value => assert_eq!(value, Ok(2)),
    }

    let (tx, mut rx) = channel!(mpsc, bounded = 2, u8, wait = park);
    tx.try_send(1).unwrap();
    assert_eq!(rx.try_recv(), Ok(1));

    // A select waiting on an empty spin and a full yield channel makes no
    // `membarrier` call: nobody waits for their publishes (this process
    // runs nothing else that could make one).
    let (_tx, mut empty) = channel!(spsc, bounded = 4, u8, wait = spin);
    let (mut full, _rx) = channel!(spsc, bounded = 1, u8, wait = yield);
    full.try_send(0).unwrap();
    let before = membarrier_calls();
    let waited = select! {
        recv(empty) -> value => panic!("nothing was sent, got {value:?}"),
        send(full, 1) -> sent => panic!("the channel is full, got {sent:?}"),
        default(Duration::from_millis(5)) => true,
    };
    assert!(waited);
    assert_eq!(membarrier_calls(), before, "a spin select called membarrier");
}
