fn main() {
    let (_tx, mut rx) = asyncband::mpsc::unbounded::<u32>();
    asyncband::select! {
        take(rx) -> _ => {}
    }
}
