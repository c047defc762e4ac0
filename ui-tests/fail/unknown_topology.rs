fn main() {
    let (_tx, _rx) = asyncband::channel!(spmc, bounded = 64, u32);
}
