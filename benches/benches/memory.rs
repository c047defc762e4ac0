//! Cell 8 of the suite: memory footprint, counted by a global allocator.
//!
//! - `bounded_1024`: a bounded channel of 1024 `u64`s, live bytes right after
//!   it is made and once it is full; the footprint per slot is the full
//!   figure divided by 1024.
//! - `unbounded_1m`: an unbounded channel of `u64`s, live bytes after it is
//!   made, at the peak of a burst of 1,048,576 messages sent before any is
//!   received, and once the burst has drained (the channel still alive).
//!   `units` counts the allocations of the burst's last allocation size that
//!   are still live after the drain: for block lists (asyncband, tokio,
//!   crossbeam, async-channel, std) that is the number of blocks retained.
//!   rapidfire keeps every block until the channel is dropped, so its
//!   drained figure is its peak.
//!
//! Everything runs on one thread, so the counts are exact and repeatable.
//! Output: one line per implementation, whitespace-separated, lines starting
//! with `#` are headers (`cargo x bench-report` parses this).

// The adapters serve the `channels` bench too; this one uses only their
// constructors and non-blocking operations.
#[allow(
    dead_code,
    unused_imports,
    reason = "the suite's adapters; this cell uses the constructors and try operations"
)]
#[path = "../peers/mod.rs"]
mod peers;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use peers::{
    AsyncChannel, AsyncbandMpmc, AsyncbandMpsc, AsyncbandSpsc, Crossbeam, Flume, Kanal, Rapidfire,
    RapidfireMpsc, Rtrb, StdMpsc, SyncBounded, SyncUnbounded, Thingbuf, Tokio, TryRecv, TrySend,
};

/// Capacity of the bounded channels measured.
const CAP: usize = 1024;
/// Messages in the unbounded burst.
const BURST: u64 = 1 << 20;

/// Bytes currently allocated.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The most bytes allocated at once since the last reset.
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// The size of the latest allocation.
static LAST_SIZE: AtomicUsize = AtomicUsize::new(0);
/// An allocation size to count live allocations of (0: none).
static WATCHED_SIZE: AtomicUsize = AtomicUsize::new(0);
/// Live allocations of `WATCHED_SIZE` bytes.
static WATCHED_LIVE: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting.
struct Counting;

impl Counting {
    fn allocated(size: usize) {
        let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
        PEAK.fetch_max(live, Ordering::Relaxed);
        LAST_SIZE.store(size, Ordering::Relaxed);
        if size == WATCHED_SIZE.load(Ordering::Relaxed) {
            WATCHED_LIVE.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn freed(size: usize) {
        LIVE.fetch_sub(size, Ordering::Relaxed);
        if size == WATCHED_SIZE.load(Ordering::Relaxed) {
            WATCHED_LIVE.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

// SAFETY: every call is forwarded to `System` unchanged; the counting on the
// side touches only atomics and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which
        // is `System.alloc`'s.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            Self::allocated(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            Self::allocated(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller passes a block this allocator (that is,
        // `System`) returned, with its layout.
        unsafe { System.dealloc(ptr, layout) };
        Self::freed(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract, which
        // is `System.realloc`'s.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            Self::freed(layout.size());
            Self::allocated(new_size);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Bytes of a bounded channel of [`CAP`] `u64`s: right after it is made,
/// and once it is full.
fn bounded<C: SyncBounded<u64, CAP>>() -> (usize, usize) {
    let base = live();
    let (mut tx, mut rx) = C::channel();
    let created = live() - base;
    for value in 0..CAP as u64 {
        assert!(tx.try_send(value), "full before its capacity");
    }
    let full = live() - base;
    for value in 0..CAP as u64 {
        assert_eq!(rx.try_recv(), Some(value));
    }
    drop((tx, rx));
    (created, full)
}

/// A burst of [`BURST`] messages, then a drain.
fn burst<Tx: TrySend<u64>, Rx: TryRecv<u64>>(tx: &mut Tx, rx: &mut Rx) {
    for value in 0..BURST {
        assert!(tx.try_send(value), "an unbounded channel is full");
    }
    for value in 0..BURST {
        assert_eq!(rx.try_recv(), Some(value));
    }
    assert_eq!(rx.try_recv(), None);
}

/// What an unbounded channel holds on to.
struct Unbounded {
    created: usize,
    peak: usize,
    drained: usize,
    units: usize,
    unit_size: usize,
}

/// Bytes of an unbounded channel of `u64`s: after it is made, at the peak of
/// a burst, and after the burst has drained.
fn unbounded<C: SyncUnbounded<u64>>() -> Unbounded {
    // A first burst on a throwaway channel finds the size the channel
    // allocates its storage in (its block, or its buffer's last growth).
    let unit_size = {
        let (mut tx, mut rx) = C::channel();
        burst(&mut tx, &mut rx);
        LAST_SIZE.load(Ordering::Relaxed)
    };
    WATCHED_SIZE.store(unit_size, Ordering::Relaxed);
    WATCHED_LIVE.store(0, Ordering::Relaxed);

    let base = live();
    let (mut tx, mut rx) = C::channel();
    let created = live() - base;
    PEAK.store(live(), Ordering::Relaxed);
    burst(&mut tx, &mut rx);
    let peak = PEAK.load(Ordering::Relaxed) - base;
    let drained = live() - base;
    let units = WATCHED_LIVE.load(Ordering::Relaxed);
    drop((tx, rx));
    WATCHED_SIZE.store(0, Ordering::Relaxed);
    Unbounded {
        created,
        peak,
        drained,
        units,
        unit_size,
    }
}

#[allow(
    clippy::cast_precision_loss,
    reason = "byte counts far below 2^52, printed as a ratio"
)]
fn print_bounded<C: SyncBounded<u64, CAP>>(name: &str) {
    let (created, full) = bounded::<C>();
    println!(
        "bounded_1024 {name:<14} {created:>12} {full:>12} {:>10.1}",
        full as f64 / CAP as f64
    );
}

fn print_unbounded<C: SyncUnbounded<u64>>(name: &str) {
    let Unbounded {
        created,
        peak,
        drained,
        units,
        unit_size,
    } = unbounded::<C>();
    println!(
        "unbounded_1m {name:<14} {created:>12} {peak:>12} {drained:>12} {units:>6} {unit_size:>10}"
    );
}

fn main() {
    println!("# cell        implementation    created_bytes   full_bytes  bytes_per_slot");
    print_bounded::<AsyncbandSpsc>("AsyncbandSpsc");
    print_bounded::<AsyncbandMpsc>("AsyncbandMpsc");
    print_bounded::<AsyncbandMpmc>("AsyncbandMpmc");
    print_bounded::<Rtrb>("Rtrb");
    print_bounded::<Tokio>("Tokio");
    print_bounded::<Crossbeam>("Crossbeam");
    print_bounded::<AsyncChannel>("AsyncChannel");
    print_bounded::<Flume>("Flume");
    print_bounded::<Kanal>("Kanal");
    print_bounded::<Thingbuf>("Thingbuf");
    print_bounded::<StdMpsc>("StdMpsc");
    print_bounded::<RapidfireMpsc>("RapidfireMpsc");
    print_bounded::<Rapidfire>("Rapidfire");

    println!(
        "# cell        implementation    created_bytes   peak_bytes drained_bytes units unit_bytes"
    );
    print_unbounded::<AsyncbandSpsc>("AsyncbandSpsc");
    print_unbounded::<AsyncbandMpsc>("AsyncbandMpsc");
    print_unbounded::<AsyncbandMpmc>("AsyncbandMpmc");
    print_unbounded::<Tokio>("Tokio");
    print_unbounded::<Crossbeam>("Crossbeam");
    print_unbounded::<AsyncChannel>("AsyncChannel");
    print_unbounded::<Flume>("Flume");
    print_unbounded::<Kanal>("Kanal");
    print_unbounded::<StdMpsc>("StdMpsc");
    print_unbounded::<RapidfireMpsc>("RapidfireMpsc");
    print_unbounded::<Rapidfire>("Rapidfire");
}
