// A channel's storage is not reachable from its endpoints: taking capacity
// that nobody returns, or marking senders as queued, would leave an empty
// channel reporting `Full` for good.
use asyncband_core::arity::Many;
use asyncband_core::endpoint;
use asyncband_core::ring::Ring;

fn main() {
    let (tx, _rx) = endpoint::channel::<Ring<u32, 4, Many, Many>>();
    let storage = tx.chan().storage();
    let _taken = storage.grant(4);
    storage.set_waiting(true);
}
