fn main() {
    let (tx, _rx) = asyncband::mpsc::unbounded::<u32>();
    asyncband::select! {
        reserve(tx) -> _ => {}
    }
}
