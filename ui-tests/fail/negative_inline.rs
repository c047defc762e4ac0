fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, bounded = 64, u32, inline = -8);
}
