// A single producer with many consumers is not a supported topology: its
// consumers would share the cursor only a single consumer may use.
use asyncband_core::arity::{Many, One};
use asyncband_core::endpoint;
use asyncband_core::ring::Ring;

fn main() {
    let (_tx, _rx) = endpoint::channel::<Ring<u32, 4, One, Many>>();
}
