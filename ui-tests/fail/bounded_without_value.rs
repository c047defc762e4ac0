fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, bounded, u32);
}
