// Counting an endpoint in without one to count it out would keep a channel
// open after its last endpoint: the counts are the endpoints' own.
use asyncband_core::arity::One;
use asyncband_core::endpoint;
use asyncband_core::ring::Ring;

fn main() {
    let (tx, rx) = endpoint::channel::<Ring<u32, 4, One, One>>();
    tx.chan().add_sender();
    tx.chan().try_add_sender();
    rx.chan().add_receiver();
    rx.chan().try_add_receiver();
}
