//! The synchronisation primitives the core is written against.
//!
//! [loom]'s under `--cfg asyncband_loom`, else `std`'s; the rest of the
//! crate imports them only from here.

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

    /// loom has no clock: a timed park is a plain park.
    #[cfg(asyncband_loom)]
    pub(crate) fn park_timeout(_: std::time::Duration) {
        park();
    }
}

#[cfg(asyncband_loom)]
use loom::cell::UnsafeCell as RawUnsafeCell;
#[cfg(not(asyncband_loom))]
use std::cell::UnsafeCell as RawUnsafeCell;

/// An `UnsafeCell` with loom's closure API, so loom checks every access.
#[derive(Debug, Default)]
pub(crate) struct UnsafeCell<T> {
    inner: RawUnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            inner: RawUnsafeCell::new(value),
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
/// ([`crate::wait`]), and the other stores to the same words.
///
/// Natively plain accesses. loom models `SeqCst` loads and stores as
/// acquire/release only, and Miri's weak-memory emulation (before
/// rust-lang/miri#5104) lets a `SeqCst` load return a release store since
/// overwritten by a `SeqCst` store (`TESTING.md`), both admitting what C++20
/// forbids, so there the loads are read-modify-writes; under loom, which can
/// lose a plain store to such a word in its modification order, every store
/// is a swap too ([`SeqCst::store_at`]).
pub(crate) trait SeqCst {
    type Value;
    fn load_sc(&self) -> Self::Value;
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
