//! The channel: one storage, the wait sets of its policy, and the endpoint
//! counts, generic over the [`Storage`]. Its methods are split by side:
//! `send.rs` (pushing, reserving, granting), `recv.rs` (popping,
//! notifying); `future.rs` holds the futures they drive. It owns no policy
//! beyond who is woken when:
//!
//! - a push notifies one waiting receiver, if the receivers' wait set says
//!   anyone waits (one `SeqCst` load; a constant `false` for a spin channel);
//! - a pop, a returned unit or a cancelled grant frees capacity, *granted*
//!   to waiting senders in the order they queued;
//! - closing, or the last sender or receiver going away, wakes everybody.
//!
//! Nothing here locks, fences or touches a waker while nobody waits.
//!
//! # The contract of single sides
//!
//! The methods that move values are `unsafe` and crate-private: a single
//! side passes its one cursor by `&mut` (as the [`Storage`] contract says),
//! and a consumer-side call is made only for a receiver still counted. The
//! [`endpoint`](crate::endpoint) types keep these promises.

mod future;
mod recv;
mod send;

use std::fmt;

use crossbeam_utils::CachePadded;

pub use future::{Closed, Recv, RecvMany, Send};
pub(crate) use send::assert_reservable;

use crate::arity::Arity;
use crate::storage::Storage;
use crate::sync::{Arc, AtomicUsize, Ordering};
use crate::unwind::{catch, resume};
use crate::wait::{ReceiveWaits, Wait, WaitSet};

/// The wait set of the senders of storage `S`.
pub(crate) type TxWait<S> = <<S as Storage>::Wait as Wait>::Waiters<<S as Storage>::Senders>;
/// The wait set of the receivers of storage `S`.
pub(crate) type RxWait<S> = <<S as Storage>::Wait as Wait>::Waiters<<S as Storage>::Receivers>;
/// The waiter node of a sender of storage `S`.
pub(crate) type TxNode<S> = <TxWait<S> as WaitSet>::Node;
/// The waiter node of a receiver of storage `S`.
pub(crate) type RxNode<S> = <RxWait<S> as WaitSet>::Node;
/// The waiter node of a future waiting for the close.
pub(crate) type ClosingNode<S> = <<<S as Storage>::Wait as Wait>::Closing as WaitSet>::Node;

/// Read-mostly words: written only when somebody starts or stops waiting.
struct Waiters<S: Storage> {
    /// Receivers waiting for a value.
    rx: RxWait<S>,
    /// Senders waiting for capacity.
    tx: TxWait<S>,
    /// Futures waiting for the close.
    closed: <S::Wait as Wait>::Closing,
    /// How the blocking receives' last waits went, steering the next.
    receive_waits: ReceiveWaits,
}

/// A channel over storage `S`, shared by its endpoints; what is public are
/// its queries.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, _rx) = endpoint::channel::<Ring<u32, 4, Many, One>>();
/// tx.shared().try_send(7).unwrap();
/// let chan = tx.chan();
/// assert_eq!((chan.len(), chan.capacity(), chan.is_full()), (1, Some(4), false));
/// assert_eq!((chan.sender_count(), chan.receiver_count()), (1, 1));
/// ```
pub struct Chan<S: Storage> {
    storage: S,
    waiters: CachePadded<Waiters<S>>,
    senders: CachePadded<AtomicUsize>,
    receivers: AtomicUsize,
    /// Weak senders and weak receivers: counted for the queries only, they
    /// keep nothing open.
    weak_senders: AtomicUsize,
    weak_receivers: AtomicUsize,
}

// SAFETY: a storage is `Send` and `Sync` whenever its items are `Send` (the
// `Storage` contract); the wait sets and counts always are.
unsafe impl<S: Storage> std::marker::Send for Chan<S> where S::Item: std::marker::Send {}
// SAFETY: as for `Send`: `&Chan` only moves values, never shares one.
unsafe impl<S: Storage> Sync for Chan<S> where S::Item: std::marker::Send {}

impl<S: Storage> fmt::Debug for Chan<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chan")
            .field("storage", &self.storage)
            .field("len", &self.len())
            .field("capacity", &S::CAPACITY)
            .field("closed", &self.is_closed())
            .field("senders", &self.sender_count())
            .field("receivers", &self.receiver_count())
            .finish_non_exhaustive()
    }
}

/// Queries answered by the storage's query of the same name, or by an
/// endpoint count field.
macro_rules! queries {
    ($($(#[$doc:meta])* $query:ident -> $ty:ty,)*) => {$(
        $(#[$doc])*
        #[must_use]
        pub fn $query(&self) -> $ty {
            self.storage.$query()
        }
    )*};
    ($($(#[$doc:meta])* $query:ident: $field:ident,)*) => {$(
        $(#[$doc])*
        #[must_use]
        pub fn $query(&self) -> usize {
            // ORDERING: Relaxed; a query.
            self.$field.load(Ordering::Relaxed)
        }
    )*};
}

/// Queries: what any endpoint may ask.
impl<S: Storage> Chan<S> {
    queries! {
        /// Values queued now (held units are not values).
        len -> usize,
        /// No value is queued.
        is_empty -> bool,
        /// No send or reservation could succeed now: queued values, held units
        /// and grants fill the bound, or senders are queued. Never for an
        /// unbounded channel.
        is_full -> bool,
        /// Units of capacity held as permits or granted to woken senders.
        reserved -> usize,
        /// Whether the channel is closed (explicitly, or because every sender
        /// or every receiver is gone).
        is_closed -> bool,
    }

    /// The bound, or `None` when unbounded.
    #[must_use]
    pub fn capacity(&self) -> Option<usize> {
        S::CAPACITY
    }

    queries! {
        /// Live senders.
        sender_count: senders,
        /// Live receivers.
        receiver_count: receivers,
        /// Live weak senders.
        weak_sender_count: weak_senders,
        /// Live weak receivers.
        weak_receiver_count: weak_receivers,
    }
}

impl<S: Storage> Chan<S> {
    /// A new open channel with one sender and one receiver counted.
    pub(crate) fn new() -> Arc<Self> {
        S::Wait::prepare();
        Arc::new(Self {
            storage: S::new(),
            waiters: CachePadded::new(Waiters {
                rx: Default::default(),
                tx: Default::default(),
                closed: Default::default(),
                receive_waits: ReceiveWaits::default(),
            }),
            senders: CachePadded::new(AtomicUsize::new(1)),
            receivers: AtomicUsize::new(1),
            weak_senders: AtomicUsize::new(0),
            weak_receivers: AtomicUsize::new(0),
        })
    }

    pub(crate) fn storage(&self) -> &S {
        &self.storage
    }

    pub(crate) fn rx_wait(&self) -> &RxWait<S> {
        &self.waiters.rx
    }

    pub(crate) fn tx_wait(&self) -> &TxWait<S> {
        &self.waiters.tx
    }

    /// Closes the channel (as [`Storage::close`]) and wakes every waiter.
    ///
    /// # Safety
    ///
    /// With `from_producer` on a single-producer channel, the caller is the
    /// producer and no producer-side call runs at the same time.
    pub(crate) unsafe fn close(&self, from_producer: bool) -> bool {
        // SAFETY: the caller's contract is `Storage::close`'s.
        let closed = unsafe { self.storage.close(from_producer) };
        self.wake_all();
        closed
    }

    /// Wakes every waiter; a waker's panic is resumed after the last set.
    fn wake_all(&self) {
        let mut panic = None;
        catch(&mut panic, || self.waiters.rx.wake_all(|_| ()));
        catch(&mut panic, || {
            self.waiters.tx.wake_all(|waiting| {
                // SAFETY: the senders' wait set marks the storage as it turns
                // empty.
                unsafe { self.storage.set_waiting(waiting) }
            });
        });
        catch(&mut panic, || self.waiters.closed.wake_all(|_| ()));
        resume(panic);
    }

    /// Counts one more sender, or receiver (`receivers`), if any is left:
    /// once the last is gone the channel is closed for good.
    pub(crate) fn try_count_in(&self, receivers: bool) -> bool {
        let counter = if receivers {
            &self.receivers
        } else {
            &*self.senders
        };
        // ORDERING: Relaxed loads; the AcqRel compare-exchange is ordered
        // against the last one's drop.
        counter
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |count| {
                (count != 0).then(|| count + 1)
            })
            .is_ok()
    }

    /// Counts a weak sender or receiver coming or going.
    pub(crate) fn count_weak(&self, receivers: bool, coming: bool) {
        let counter = if receivers {
            &self.weak_receivers
        } else {
            &self.weak_senders
        };
        // ORDERING: Relaxed; nothing is published through these counts.
        if coming {
            counter.fetch_add(1, Ordering::Relaxed);
        } else {
            counter.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// A sender goes away; the last one closes the channel.
    ///
    /// # Safety
    ///
    /// The caller gives up one counted sender, once; on a single-producer
    /// channel it is the producer, with no producer-side call running.
    pub(crate) unsafe fn drop_sender(&self) {
        // ORDERING: AcqRel: the last sender sees every other sender's work.
        if self.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            // SAFETY: the last sender is going away: no producer-side call runs.
            unsafe { self.close(true) };
        }
    }

    /// A receiver goes away; the last one closes the channel and drops the
    /// values still queued, right now.
    ///
    /// # Safety
    ///
    /// The caller gives up one counted receiver, once, and makes no
    /// consumer-side call for it from then on; on a single-consumer channel
    /// it is the consumer, going away with its cursor.
    pub(crate) unsafe fn drop_receiver(&self) {
        // ORDERING: AcqRel: the last receiver sees every other receiver's
        // work before it drains.
        if self.receivers.fetch_sub(1, Ordering::AcqRel) == 1 {
            // SAFETY: not as the producer; `close(false)` binds nothing.
            unsafe { self.storage.close(false) };
            // Woken after the drain (also on unwind): a woken sender sees the
            // queued values dropped.
            let _wake = WakeAllOnDrop(self);
            // SAFETY: closed, and the last counted receiver: no
            // consumer-side call runs now or later.
            unsafe { self.storage.drain() };
        }
    }
}

/// Wakes every waiter of a channel when dropped, also during unwinding.
struct WakeAllOnDrop<'a, S: Storage>(&'a Chan<S>);

impl<S: Storage> Drop for WakeAllOnDrop<'_, S> {
    fn drop(&mut self) {
        self.0.wake_all();
    }
}

/// Whether a side of arity `A` has many endpoints: a constant branch.
#[inline(always)]
#[allow(clippy::inline_always, reason = "a constant")]
const fn many<A: Arity>() -> bool {
    A::MANY
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests;

/// What the crate's tests (the loom models too) reach a channel through.
#[cfg(test)]
impl<S: Storage> Chan<S> {
    /// A consumer's cursor, at the position the consumers published; the
    /// test that makes it keeps the consumer contract.
    pub(crate) fn cursor(&self) -> S::Cursor {
        self.storage.cursor()
    }

    /// A producer's cursor, likewise.
    pub(crate) fn producer_cursor(&self) -> S::ProducerCursor {
        self.storage.producer_cursor()
    }
}
