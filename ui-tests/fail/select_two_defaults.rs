fn main() {
    let (_tx, mut rx) = asyncband::mpsc::unbounded::<u32>();
    asyncband::select! {
        recv(rx) -> _ => {}
        default => {}
        default => {}
    }
}
