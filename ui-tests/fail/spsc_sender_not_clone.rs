use asyncband::spsc;

fn main() {
    let (tx, _rx) = spsc::unbounded::<u32>();
    let _other = tx.clone();
}
