// The wait policies are `spin`, `yield` and `park`.
fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, bounded = 4, u32, wait = sleep);
}
