// A yield channel keeps no waiters, so nothing could wake a receive future:
// it has no `recv()`.
fn main() {
    let (_tx, mut rx) = asyncband::channel!(mpsc, bounded = 4, u32, wait = yield);
    let _ = rx.recv();
}
