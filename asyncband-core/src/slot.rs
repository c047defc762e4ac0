//! One cell of storage: an optional stamp and room for one value.
//!
//! With many producers a slot carries a *stamp*, a 64-bit word that says
//! which position the slot serves and whether its value is written:
//!
//! | stamp | meaning |
//! | --- | --- |
//! | `2q` | empty, writable for position `q` |
//! | `2q + 1` | holds the value for position `q`, readable |
//! | `2q + 2^63` | claimed for position `q`, still being written, marked by a later producer for a polling consumer ([`marked`]) |
//!
//! A slot reused for a later lap (or a recycled block) needs no reset: a
//! stale stamp never equals the one a reader expects. A single producer's
//! index says everything, so its slots carry a zero-sized [`NoStamp`].

use std::mem::MaybeUninit;

use crate::sync::{AtomicU64, Ordering, SeqCst, UnsafeCell};

/// The per-slot publication word a producer arity needs.
pub trait Stamp: Send + Sync + 'static {
    /// A stamp holding `value`.
    fn new(value: u64) -> Self;
    /// Loads the stamp.
    fn load(&self, order: Ordering) -> u64;
    /// Stores the stamp.
    fn store(&self, value: u64, order: Ordering);
    /// A `SeqCst` load for a store-buffer argument.
    fn load_seq_cst(&self) -> u64;
    /// A `SeqCst` store for a store-buffer argument.
    fn store_seq_cst(&self, value: u64);
}

/// The stamp of a slot written by many producers.
pub type Stamped = AtomicU64;

impl Stamp for AtomicU64 {
    fn new(value: u64) -> Self {
        AtomicU64::new(value)
    }

    #[inline]
    fn load(&self, order: Ordering) -> u64 {
        AtomicU64::load(self, order)
    }

    #[inline]
    fn store(&self, value: u64, order: Ordering) {
        SeqCst::store_at(self, value, order);
    }

    #[inline]
    fn load_seq_cst(&self) -> u64 {
        SeqCst::load_sc(self)
    }

    #[inline]
    fn store_seq_cst(&self, value: u64) {
        SeqCst::store_sc(self, value);
    }
}

/// No stamp: a single producer publishes through its index instead.
#[derive(Debug)]
pub struct NoStamp;

impl Stamp for NoStamp {
    fn new(_: u64) -> Self {
        NoStamp
    }

    #[inline]
    fn load(&self, _: Ordering) -> u64 {
        0
    }

    #[inline]
    fn store(&self, _: u64, _: Ordering) {}

    #[inline]
    fn load_seq_cst(&self) -> u64 {
        0
    }

    #[inline]
    fn store_seq_cst(&self, _: u64) {}
}

/// Whether `T` is over 128 bytes: a receive then moves it straight into its
/// result (`chan::Popped`), and a receiver may sleep on it being written
/// (many producers then publish it with a `SeqCst` stamp, [`Slot::publish`],
/// small next to the copy).
#[inline]
pub(crate) const fn is_large<T>() -> bool {
    size_of::<T>() > 128
}

/// The mark on a claimed slot still being written, set by a later producer
/// for a single polling consumer (positions stay below 2^62).
pub(crate) const CLAIMED: u64 = 1 << 63;

/// The stamp of a slot claimed for position `pos` and still being written,
/// once a later producer marked it: no other stamp is this high.
#[inline]
pub(crate) const fn marked(pos: u64) -> u64 {
    writable(pos) | CLAIMED
}

/// The stamp meaning "empty, writable for position `pos`".
#[inline]
pub(crate) const fn writable(pos: u64) -> u64 {
    pos << 1
}

/// The stamp meaning "holds the value for position `pos`".
#[inline]
pub(crate) const fn readable(pos: u64) -> u64 {
    (pos << 1) | 1
}

/// One cell of storage.
pub(crate) struct Slot<T, S> {
    pub(crate) stamp: S,
    /// # Safety
    ///
    /// Initialised exactly while the protocol says the slot holds a value;
    /// accessed only by the party it gives the slot to.
    value: UnsafeCell<MaybeUninit<T>>,
}

impl<T, S: Stamp> Slot<T, S> {
    /// Makes the memory at `slot` an empty slot stamped `stamp`, writing only
    /// the stamp (no `T`-sized temporary on the stack).
    ///
    /// # Safety
    ///
    /// `slot` is valid for writes and aligned, and holds no live slot.
    pub(crate) unsafe fn init(slot: *mut Self, stamp: u64) {
        // SAFETY: valid and aligned (the caller's contract); any bytes are a
        // valid empty `UnsafeCell<MaybeUninit<T>>`.
        #[cfg(not(asyncband_loom))]
        unsafe {
            (&raw mut (*slot).stamp).write(S::new(stamp));
        }
        // SAFETY: as above; loom's cell has state, so it is built whole.
        #[cfg(asyncband_loom)]
        unsafe {
            slot.write(Self {
                stamp: S::new(stamp),
                value: UnsafeCell::new(MaybeUninit::uninit()),
            });
        }
    }

    /// Moves `value` in.
    ///
    /// # Safety
    ///
    /// The caller owns the slot for writing and it holds no value.
    #[inline]
    pub(crate) unsafe fn write(&self, value: T) {
        // SAFETY: the caller owns the empty slot.
        self.value.with_mut(|cell| unsafe { (*cell).write(value) });
    }

    /// Moves the value of `*value` in, leaving `None` (one copy).
    ///
    /// # Safety
    ///
    /// As for [`Slot::write`], and `*value` holds a value.
    #[inline]
    pub(crate) unsafe fn write_from(&self, value: &mut Option<T>) {
        // SAFETY: `*value` holds a value (caller's contract); the caller
        // owns the empty slot.
        unsafe { self.write(value.take().unwrap_unchecked()) };
    }

    /// Moves the value out.
    ///
    /// # Safety
    ///
    /// The caller owns the slot for reading and it holds a value, which is
    /// logically gone afterwards.
    #[inline]
    pub(crate) unsafe fn read(&self) -> T {
        // SAFETY: the caller owns the initialised slot and takes its value.
        self.value
            .with(|cell| unsafe { (*cell).assume_init_read() })
    }

    /// Publishes the value just written: stores its `readable` `stamp`. A
    /// large value's, once a receiver `watched` for writes, is `SeqCst`, the
    /// producer's half of the store-buffer race behind [`PopError::Writing`]
    /// (the receiver's is [`Slot::published`]), so a receiver asleep on a
    /// value being written is woken. Otherwise a release store.
    ///
    /// [`PopError::Writing`]: crate::storage::PopError::Writing
    #[inline]
    pub(crate) fn publish(&self, stamp: u64, watched: bool) {
        if is_large::<T>() && watched {
            // SeqCst, and so a release, as below.
            self.stamp.store_seq_cst(stamp);
        } else {
            // ORDERING: Release pairs with the consumer's Acquire load in
            // `published`: the value is visible before the stamp says so.
            self.stamp.store(stamp, Ordering::Release);
        }
    }

    /// Loads the stamp: whether the value is published ([`Slot::publish`]).
    #[inline]
    pub(crate) fn published(&self) -> u64 {
        if is_large::<T>() {
            // SeqCst (`publish`), and so an acquire, as below.
            self.stamp.load_seq_cst()
        } else {
            // ORDERING: Acquire pairs with the Release store in `publish`.
            self.stamp.load(Ordering::Acquire)
        }
    }

    /// Borrows the value.
    ///
    /// # Safety
    ///
    /// The slot holds a value that nobody moves out or overwrites while the
    /// reference lives.
    #[inline]
    pub(crate) unsafe fn get(&self) -> &T {
        // SAFETY: initialised, and kept in place by the caller's promise.
        self.value.with(|cell| unsafe { (*cell).assume_init_ref() })
    }
}
