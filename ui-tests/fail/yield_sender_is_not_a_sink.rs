// A yield channel's sender cannot become a `Sink`.
fn main() {
    let (tx, _rx) = asyncband::channel!(mpsc, bounded = 4, u32, wait = yield);
    let _ = tx.into_sink();
}
