use asyncband::mpsc;

fn main() {
    let (_tx, _rx) = mpsc::Bounded::<u32, 100>::channel();
}
