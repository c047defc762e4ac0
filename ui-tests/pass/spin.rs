// Spin and yield channels: the try and blocking operations, permits, counts,
// weak endpoints and `select!` over them (which busy-polls).
use asyncband::{channel, mpsc, select, spsc, wait::{Spin, Yield}};

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
}
