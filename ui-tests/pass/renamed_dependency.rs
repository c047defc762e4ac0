// The expansion reaches the crate through `$crate`, never by name. Here the
// crate is reachable only as `band`, and `asyncband` names `core`: an
// expansion that spelled `::asyncband::…` would not compile. (trybuild gives
// every case the same dependencies, and Cargo refuses two dependencies on one
// package under different names, hence `extern crate … as`.)
extern crate asyncband as band;
extern crate core as asyncband;

fn main() {
    let (tx, mut rx) = band::channel!(mpsc, bounded = 8, u32);
    tx.try_send(1).unwrap();
    assert_eq!(rx.try_recv(), Ok(1));
    let _: asyncband::marker::PhantomData<band::mpsc::Sender<band::mpsc::Bounded<u32, 8>>> =
        asyncband::marker::PhantomData::<_>;
    drop(tx);
}
