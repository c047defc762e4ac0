// A yield channel's receiver is not a `Stream`.
fn stream<S: futures::Stream>(_: S) {}

fn main() {
    let (_tx, rx) = asyncband::channel!(mpmc, bounded = 4, u32, wait = yield);
    stream(rx);
}
