// A spin channel has no `send()` future: a future cannot busy-wait.
fn main() {
    let (mut tx, _rx) = asyncband::channel!(spsc, bounded = 4, u32, wait = spin);
    let _ = tx.send(1);
}
