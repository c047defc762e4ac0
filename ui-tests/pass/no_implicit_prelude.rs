// The expansion names only absolute paths: it needs no prelude.
#![no_implicit_prelude]

fn main() {
    let (tx, mut rx) = ::asyncband::channel!(mpsc, bounded = 64, u32, inline = 8);
    tx.try_send(1).unwrap();
    ::std::assert_eq!(rx.try_recv(), ::std::result::Result::Ok(1));

    let (mut tx, mut rx) = ::asyncband::channel!(spsc, unbounded, u32);
    tx.try_send(2).unwrap();
    ::std::assert_eq!(rx.try_recv(), ::std::result::Result::Ok(2));
}
