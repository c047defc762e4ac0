fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, bounded = 0, u32);
}
