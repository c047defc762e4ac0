// A spin channel has no `closed()` future.
fn main() {
    let (tx, _rx) = asyncband::channel!(mpsc, unbounded, u32, wait = spin);
    let _ = tx.closed();
}
