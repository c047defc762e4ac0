//! Single-producer, single-consumer channels.
//!
//! One sender, one receiver, neither `Clone`. Both sides move values with
//! plain loads and one store of their own index, and read the other side's
//! index only when their cached copy says full or empty: the cheapest channel
//! there is. Values arrive in the order they were sent.
//!
//! # Examples
//!
//! ```
//! use asyncband::spsc;
//!
//! let (mut tx, mut rx) = spsc::bounded::<u64, 1024>();
//! let producer = std::thread::spawn(move || {
//!     for tick in 0..10_000 {
//!         tx.send_blocking(tick).unwrap();
//!     }
//! });
//! let mut expected = 0;
//! while let Ok(tick) = rx.recv_blocking() {
//!     assert_eq!(tick, expected);
//!     expected += 1;
//! }
//! producer.join().unwrap();
//! assert_eq!(expected, 10_000);
//! ```

pub use crate::permit::{Permit, Permits};
pub use crate::single::{Receiver, Sender};

crate::flavour::flavours!("spsc", "SPSC", One, One);
