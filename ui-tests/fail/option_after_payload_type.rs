fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, u32, bounded = 64);
}
