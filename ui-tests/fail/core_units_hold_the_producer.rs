// Held units borrow the producer's right to send: the single producer
// cannot send around them (a push through a unit and a plain send of one
// producer would race), nor outlive the producer with them.
use asyncband_core::arity::One;
use asyncband_core::endpoint;
use asyncband_core::ring::Ring;

fn main() {
    let (mut tx, _rx) = endpoint::channel::<Ring<u32, 4, One, One>>();
    let mut right = tx.by_ref();
    let mut units = right.reborrow().try_reserve(1).unwrap();
    right.try_send(1).unwrap();
    units.send(2).unwrap();
    drop(tx);
    drop(units);
}
