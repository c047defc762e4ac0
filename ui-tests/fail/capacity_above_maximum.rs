fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, bounded = 2097152, u32);
}
