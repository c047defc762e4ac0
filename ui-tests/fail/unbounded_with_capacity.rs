fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, unbounded = 64, u32);
}
