fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, u32);
}
