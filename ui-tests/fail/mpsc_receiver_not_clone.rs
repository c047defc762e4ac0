use asyncband::mpsc;

fn main() {
    let (_tx, rx) = mpsc::unbounded::<u32>();
    let _other = rx.clone();
}
