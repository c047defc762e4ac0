//! Multi-producer, single-consumer channels.
//!
//! Senders are `Clone` and take `&self`; each value sent is one atomic claim.
//! The single receiver takes values with no read-modify-write at all. Each
//! producer's values arrive in the order it sent them. Senders waiting for
//! room are served in the order they began to wait.
//!
//! # Examples
//!
//! ```
//! use asyncband::mpsc;
//!
//! let (tx, mut rx) = mpsc::bounded::<(usize, u64), 4096>();
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

pub use crate::multi::{Sender, WeakSender};
pub use crate::permit::{OwnedPermit, Permit, Permits};
pub use crate::single::Receiver;

crate::flavour::flavours!("mpsc", "MPSC", Many, One);
