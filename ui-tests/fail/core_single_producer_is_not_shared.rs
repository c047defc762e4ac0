// The one producer of a single-producer channel can be neither cloned nor
// shared: there is exactly one, by type.
use asyncband_core::arity::One;
use asyncband_core::endpoint;
use asyncband_core::ring::Ring;

fn main() {
    let (tx, _rx) = endpoint::channel::<Ring<u32, 4, One, One>>();
    let _second = tx.clone();
    let _shared = tx.shared();
}
