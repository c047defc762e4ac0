fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, bounded = 100, u32);
}
