//! Multi-producer, multi-consumer channels.
//!
//! Both sides are `Clone` and take `&self`; each value is one atomic claim
//! on each side, and goes to exactly one receiver. Each receiver sees one
//! producer's values in the order they were sent. Waiting senders and
//! waiting receivers are each served in the order they began to wait.
//!
//! # Examples
//!
//! ```
//! use asyncband::mpmc;
//!
//! let (tx, rx) = mpmc::bounded::<(usize, u64), 4096>();
//! let producers: Vec<_> = (0..4)
//!     .map(|id| {
//!         let tx = tx.clone();
//!         std::thread::spawn(move || {
//!             for seq in 0..1000 {
//!                 tx.send_blocking((id, seq)).unwrap();
//!             }
//!         })
//!     })
//!     .collect();
//! drop(tx);
//! let mut next = [0u64; 4];
//! for (id, seq) in rx.iter() {
//!     assert_eq!(seq, next[id]);
//!     next[id] += 1;
//! }
//! producers.into_iter().for_each(|p| p.join().unwrap());
//! assert_eq!(next, [1000; 4]);
//! ```

pub use crate::multi::{Receiver, Sender, WeakReceiver, WeakSender};
pub use crate::permit::{OwnedPermit, Permit, Permits};

crate::flavour::flavours!("mpmc", "MPMC", Many, Many);
