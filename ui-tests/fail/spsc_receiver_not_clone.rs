use asyncband::spsc;

fn main() {
    let (_tx, rx) = spsc::unbounded::<u32>();
    let _other = rx.clone();
}
