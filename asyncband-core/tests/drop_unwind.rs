//! Dropping the last receiver of a channel whose queued values panic in
//! `Drop`: every value is dropped once, and once the sender is gone too,
//! every block is freed, however many of them panic. A test binary of its
//! own, for the allocator that counts live bytes.

#![cfg(not(asyncband_loom))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};

use asyncband_core::arity::{Many, One};
use asyncband_core::endpoint;
use asyncband_core::list::List;
use asyncband_core::ring::Ring;
use asyncband_core::storage::Storage;

/// The system allocator, counting the bytes live from the threads that
/// asked for it (the test harness's own threads allocate meanwhile).
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

/// Adds `bytes` to [`LIVE`] when this thread is counted.
fn count(bytes: isize) {
    if COUNTED.try_with(Cell::get).unwrap_or(false) {
        LIVE.fetch_add(bytes, Ordering::SeqCst);
    }
}

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(isize::try_from(layout.size()).unwrap());
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-isize::try_from(layout.size()).unwrap());
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Counts its drops, and panics in the armed ones.
struct Bomb(bool);

static DROPS: AtomicUsize = AtomicUsize::new(0);

impl Drop for Bomb {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::SeqCst);
        assert!(!self.0, "a planned panic in a value's drop");
    }
}

/// Sends `count` values, arming those at `armed`, drops the receiver and
/// then the sender, and returns the bytes the channel left allocated.
fn leaked<S: Storage<Item = Bomb, Senders = Many>>(count: usize, armed: &[usize]) -> isize {
    let before = LIVE.load(Ordering::SeqCst);
    DROPS.store(0, Ordering::SeqCst);
    let (tx, rx) = endpoint::channel::<S>();
    for k in 0..count {
        assert!(tx.shared().try_send(Bomb(armed.contains(&k))).is_ok());
    }
    let outcome = catch_unwind(AssertUnwindSafe(move || drop(rx)));
    drop(tx);
    assert_eq!(
        outcome.is_err(),
        !armed.is_empty(),
        "the first panic propagates"
    );
    drop(outcome);
    assert_eq!(
        DROPS.load(Ordering::SeqCst),
        count,
        "each value dropped once"
    );
    LIVE.load(Ordering::SeqCst) - before
}

#[test]
fn dropping_a_channel_whose_values_panic_drops_each_once_and_frees_everything() {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    COUNTED.with(|counted| counted.set(true));
    // Once, for what the panic machinery allocates and keeps.
    leaked::<List<Bomb, Many, One>>(1, &[0]);
    for armed in [&[][..], &[0], &[0, 199], &[5, 6, 7]] {
        assert_eq!(
            leaked::<List<Bomb, Many, One>>(200, armed),
            0,
            "list {armed:?}"
        );
        assert_eq!(
            leaked::<List<Bomb, Many, Many>>(200, armed),
            0,
            "list {armed:?}"
        );
        assert_eq!(
            leaked::<Ring<Bomb, 256, Many, One>>(200, armed),
            0,
            "ring {armed:?}"
        );
    }
    std::panic::set_hook(hook);
}
