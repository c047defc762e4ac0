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

/// One iteration of a busy wait: a `spin_loop` hint, or a loom yield so the
/// model checker can run the thread being waited for.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(not(asyncband_loom))]
    std::hint::spin_loop();
    #[cfg(asyncband_loom)]
    loom::thread::yield_now();
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
