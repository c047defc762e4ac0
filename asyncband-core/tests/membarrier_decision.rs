//! The process decides about `membarrier`, and registers for it, when its
//! first channel with a single endpoint is made: registering takes
//! milliseconds, which must not land in a send. A file of its own, so that
//! no other test has decided first in this process.

use asyncband_core::arity::One;
use asyncband_core::endpoint;
use asyncband_core::ring::Ring;
use asyncband_core::wait::membarrier_decided;

#[test]
fn making_a_channel_with_a_single_endpoint_decides_about_the_barrier() {
    assert!(!membarrier_decided(), "nothing has decided yet");
    let (mut tx, mut rx) = endpoint::channel::<Ring<u8, 4, One, One>>();
    assert!(membarrier_decided());
    tx.by_ref().try_send(1).unwrap();
    assert_eq!(rx.by_ref().try_recv(), Ok(1));
}
