fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, bounded = 64, unbounded, u32);
}
