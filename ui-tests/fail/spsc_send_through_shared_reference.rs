use asyncband::spsc;

fn send(tx: &spsc::Sender<spsc::Bounded<u32, 64>>) {
    let _ = tx.try_send(1);
}

fn main() {
    let (tx, _rx) = spsc::bounded::<u32, 64>();
    send(&tx);
}
