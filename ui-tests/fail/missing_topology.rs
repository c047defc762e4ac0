fn main() {
    let (_tx, _rx) = asyncband::channel!(bounded = 64, u32);
}
