use asyncband::mpmc;

fn main() {
    let (_tx, _rx) = mpmc::Bounded::<[u8; 2048], 64, 1024>::channel();
}
