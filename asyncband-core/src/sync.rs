//! The synchronisation primitives the core is written against.
//!
//! Under `--cfg asyncband_loom` every atomic, cell, lock and thread operation
//! comes from [loom], so the model checker sees each of them; otherwise they
//! are `std`'s. Code elsewhere in the crate imports only from here.

#[cfg(not(asyncband_loom))]
pub(crate) use std::sync::{
    Arc, Mutex, MutexGuard,
    atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering},
};

#[cfg(asyncband_loom)]
pub(crate) use loom::sync::{
    Arc, Mutex, MutexGuard,
    atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering},
};

/// Threads: `park`, `yield_now` and handles, from `std` or loom.
pub(crate) mod thread {
    #[cfg(not(asyncband_loom))]
    pub(crate) use std::thread::{Thread, current, park, park_timeout, yield_now};

    #[cfg(asyncband_loom)]
    pub(crate) use loom::thread::{Thread, current, park, yield_now};

    /// loom has no clock, so a timed park is a plain park there; models never
    /// rely on a timeout firing.
    #[cfg(asyncband_loom)]
    pub(crate) fn park_timeout(_: std::time::Duration) {
        park();
    }
}

/// How often `try_recv` re-checks a value that a producer is still writing
/// before it reports the channel empty.
pub(crate) const BUSY_TRY_SPINS: u32 = if cfg!(asyncband_loom) { 1 } else { 128 };

/// Spins before a thread waiting out another's few-instruction transition
/// (a block hand-over) starts yielding.
pub(crate) const PAUSE_SPINS: u32 = if cfg!(asyncband_loom) { 1 } else { 64 };

/// One iteration of a busy wait: a `spin_loop` hint, or a loom yield so the
/// model checker can run the thread being waited for.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(not(asyncband_loom))]
    std::hint::spin_loop();
    #[cfg(asyncband_loom)]
    loom::thread::yield_now();
}

/// A spin latch: pushes through the units of a single producer take turns
/// on it ([`Turns`]), since units are `Send` and may push from several
/// threads at once. Held for a push of a few instructions, which runs no
/// user code.
#[derive(Debug)]
pub(crate) struct Latch(AtomicBool);

/// The latch, held until this drops.
pub(crate) struct Held<'a>(&'a AtomicBool);

impl Latch {
    pub(crate) fn new() -> Self {
        Self(AtomicBool::new(false))
    }

    /// Waits for the latch and holds it until the guard drops.
    #[inline]
    pub(crate) fn hold(&self) -> Held<'_> {
        // ORDERING: Acquire pairs with the Release in `Held::drop`: the
        // previous holder's writes are visible to this one.
        while self
            .0
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spin_hint();
        }
        Held(&self.0)
    }
}

impl Drop for Held<'_> {
    #[inline]
    fn drop(&mut self) {
        // ORDERING: Release hands this holder's writes to the next one.
        self.0.store(false, Ordering::Release);
    }
}

/// A single producer's cursor, in its endpoint: the producer uses it
/// through `&mut` (or lends it whole, [`Turns::lend`]), and the units it
/// reserved, which may push from several threads at once, take turns on a
/// [`Latch`] to use it.
#[repr(C)]
pub(crate) struct Turns<C> {
    /// First, so that the cursor's address is the value's.
    cursor: std::cell::UnsafeCell<C>,
    latch: Latch,
}

/// One turn at a [`Turns`]' cursor, until this drops.
pub(crate) struct Turn<'a, C> {
    cursor: &'a mut C,
    _held: Held<'a>,
}

// SAFETY: the cursor moves with the value; `C: Send` is required and enough.
unsafe impl<C: Send> Send for Turns<C> {}
// SAFETY: through `&Turns` the cursor is reached only under the latch
// (`take_turn`) or by a caller that has it to itself (`lend`), so it is used
// by one thread at a time, as `Mutex<C>`, which is `Sync` for `C: Send`.
unsafe impl<C: Send> Sync for Turns<C> {}

impl<C> Turns<C> {
    pub(crate) fn new(cursor: C) -> Self {
        Self {
            latch: Latch::new(),
            cursor: std::cell::UnsafeCell::new(cursor),
        }
    }

    /// The cursor, for the only user of `self`.
    #[inline]
    pub(crate) fn get_mut(&mut self) -> &mut C {
        self.cursor.get_mut()
    }

    /// The cursor, for a caller that has `self` to itself for `'a` although
    /// it holds it shared (a producer's borrowed right, which lent no units
    /// that are still alive).
    ///
    /// # Safety
    ///
    /// Nothing else uses the cursor (through `lend` or [`Turns::take_turn`])
    /// while the reference lives.
    #[inline]
    #[allow(
        clippy::mut_from_ref,
        reason = "exclusivity is the caller's contract, as for `UnsafeCell::get`"
    )]
    pub(crate) unsafe fn lend(&self) -> &mut C {
        // SAFETY: the caller's contract.
        unsafe { &mut *self.cursor.get() }
    }

    /// The cursor, once the latch is ours.
    #[inline]
    pub(crate) fn take_turn(&self) -> Turn<'_, C> {
        let held = self.latch.hold();
        Turn {
            // SAFETY: holding the latch, whose Acquire orders this use after
            // the previous holder's; every user of a shared `Turns` either
            // takes a turn or has the cursor to itself (`lend`'s contract).
            cursor: unsafe { &mut *self.cursor.get() },
            _held: held,
        }
    }
}

impl<C> std::ops::Deref for Turn<'_, C> {
    type Target = C;

    fn deref(&self) -> &C {
        self.cursor
    }
}

impl<C> std::ops::DerefMut for Turn<'_, C> {
    fn deref_mut(&mut self) -> &mut C {
        self.cursor
    }
}

impl<C: std::fmt::Debug> std::fmt::Debug for Turns<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turns").finish_non_exhaustive()
    }
}

/// An `UnsafeCell` with loom's closure API, so that loom can check every
/// access to a protocol-guarded value.
#[derive(Debug)]
pub(crate) struct UnsafeCell<T> {
    #[cfg(not(asyncband_loom))]
    inner: std::cell::UnsafeCell<T>,
    #[cfg(asyncband_loom)]
    inner: loom::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            #[cfg(not(asyncband_loom))]
            inner: std::cell::UnsafeCell::new(value),
            #[cfg(asyncband_loom)]
            inner: loom::cell::UnsafeCell::new(value),
        }
    }

    /// Runs `f` with a shared pointer to the value.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(not(asyncband_loom))]
        return f(self.inner.get());
        #[cfg(asyncband_loom)]
        return self.inner.with(f);
    }

    /// Runs `f` with an exclusive pointer to the value.
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(not(asyncband_loom))]
        return f(self.inner.get());
        #[cfg(asyncband_loom)]
        return self.inner.with_mut(f);
    }
}

/// `SeqCst` loads and stores that take part in a store-buffer argument
/// (see [`crate::wait`]), and the other stores to the same words.
///
/// Natively they are plain accesses (a `SeqCst` load is a plain `mov` on
/// x86). loom models `SeqCst` loads and stores as acquire/release only, which
/// admits executions the C++ memory model forbids, so under `asyncband_loom`
/// the `SeqCst` ones become read-modify-writes, which read the newest value
/// and chain through release sequences: at least as strong as `SeqCst` for
/// these patterns, and what loom can check. loom keeps modification order as
/// a partial order, in which a read-modify-write can lose a concurrent plain
/// store, so every other store to such a word ([`SeqCst::store_at`]) is a
/// swap under loom too.
///
/// Miri's weak-memory emulation (nightly of 2026-05, before the fix for
/// rust-lang/miri#5104) lets a `SeqCst` load return a release store that a
/// `SeqCst` store has since overwritten, an outcome C++20 forbids and x86
/// cannot produce: the store-buffer litmus in `TESTING.md` fails under it.
/// Our protocols have exactly that shape (a producer's release store of a
/// stamp, overwritten by the consumer's `SeqCst` store that frees the slot),
/// so under Miri the `SeqCst` loads are read-modify-writes as under loom.
/// Every other access keeps its ordering and its weak behaviours.
pub(crate) trait SeqCst {
    /// The value type.
    type Value;
    /// A `SeqCst` load.
    fn load_sc(&self) -> Self::Value;
    /// A `SeqCst` store.
    fn store_sc(&self, value: Self::Value);
    /// A store with `order` to a word that is also read with `load_sc`.
    fn store_at(&self, value: Self::Value, order: Ordering);
}

macro_rules! seq_cst {
    ($atomic:ty, $value:ty, $zero:expr) => {
        impl SeqCst for $atomic {
            type Value = $value;

            #[inline]
            fn load_sc(&self) -> $value {
                #[cfg(not(any(asyncband_loom, miri)))]
                return self.load(Ordering::SeqCst);
                #[cfg(any(asyncband_loom, miri))]
                return self.fetch_or($zero, Ordering::SeqCst);
            }

            #[inline]
            fn store_sc(&self, value: $value) {
                self.store_at(value, Ordering::SeqCst);
            }

            #[inline]
            fn store_at(&self, value: $value, order: Ordering) {
                #[cfg(not(asyncband_loom))]
                self.store(value, order);
                #[cfg(asyncband_loom)]
                self.swap(value, order);
            }
        }
    };
}

seq_cst!(AtomicU64, u64, 0);
seq_cst!(AtomicUsize, usize, 0);
seq_cst!(AtomicBool, bool, false);
