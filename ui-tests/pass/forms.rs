// Every topology, bounded and unbounded, with and without `inline`.
use asyncband::channel;

#[derive(Debug, PartialEq)]
struct Frame([u8; 32]);

fn main() {
    let (mut tx, mut rx) = channel!(spsc, bounded = 4, u32);
    tx.try_send(1).unwrap();
    assert_eq!(rx.try_recv(), Ok(1));
    assert_eq!(tx.capacity(), Some(4));

    let (mut tx, mut rx) = channel!(spsc, unbounded, String);
    tx.try_send("tick".to_owned()).unwrap();
    assert_eq!(rx.try_recv().as_deref(), Ok("tick"));

    let (tx, mut rx) = channel!(mpsc, bounded = 4096, Vec<u8>);
    tx.clone().try_send(vec![1]).unwrap();
    assert_eq!(rx.try_recv(), Ok(vec![1]));

    let (tx, mut rx) = channel!(mpsc, unbounded, (u8, char));
    tx.try_send((1, 'a')).unwrap();
    assert_eq!(rx.try_recv(), Ok((1, 'a')));

    let (tx, rx) = channel!(mpmc, bounded = 64, Frame, inline = 1024);
    tx.try_send(Frame([7; 32])).unwrap();
    assert_eq!(rx.clone().try_recv(), Ok(Frame([7; 32])));
    assert_eq!(tx.capacity(), Some(64));

    // The payload type exactly fits, and a trailing comma is fine.
    let (tx, rx) = channel!(mpmc, unbounded, Frame, inline = 32,);
    tx.try_send(Frame([1; 32])).unwrap();
    assert_eq!(rx.try_recv(), Ok(Frame([1; 32])));
    assert_eq!(tx.capacity(), None);
}
