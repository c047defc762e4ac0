fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, bounded = 64, bounded = 128, u32);
}
