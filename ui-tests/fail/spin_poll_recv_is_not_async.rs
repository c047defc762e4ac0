// A spin channel has no `poll_recv`: a `Pending` poll would wait for a wake
// that nothing sends.
use std::task::{Context, Waker};

fn main() {
    let (_tx, mut rx) = asyncband::channel!(spsc, unbounded, u32, wait = spin);
    let _ = rx.poll_recv(&mut Context::from_waker(Waker::noop()));
}
