// Every mistake is reported at once.
fn main() {
    let (_tx, _rx) = asyncband::channel!(spmc, bounded = 100, u32, inline = 1.5);
}
