// The expansion of `select!` and `select_biased!` names only absolute
// paths: it needs no prelude.
#![no_implicit_prelude]

fn main() {
    let (tx, mut rx) = ::asyncband::mpsc::bounded::<u32, 4>();
    let (mut out, _out_rx) = ::asyncband::spsc::unbounded::<u32>();
    tx.try_send(1).unwrap();
    let got = ::asyncband::select! {
        recv(rx) -> msg => msg.unwrap(),
        reserve(tx) -> _ => 0,
        send(out, 2) -> _ => 0,
        default(::std::time::Duration::from_millis(1)) => 0,
    };
    ::std::assert!(got <= 1);
    ::asyncband::select_biased! {
        recv(rx) -> _ => {}
        default => {}
    }
}
