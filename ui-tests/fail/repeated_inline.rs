fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, unbounded, u32, inline = 8, inline = 16);
}
