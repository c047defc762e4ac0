//! Blocking a thread on a channel operation: spin briefly, yield, then park.
//!
//! Every blocking operation of the channel is its async operation driven to
//! completion on the calling thread: the future registers a [`Waker`] that
//! unparks the thread, and cancellation (a timeout) is the future's drop, so
//! blocking and async waiters share one cancel-safe protocol.
//!
//! Before parking, [`Backoff`] spins for about one cross-core round trip and
//! then yields a few times: most waits on a busy channel end within that
//! window and never pay for a park/unpark pair. Spinning only helps when the
//! thread being waited for is running on another core, so when as many
//! threads are already spinning as there are cores the newcomer skips
//! straight to parking; on an oversubscribed machine pure spinning would
//! steal the very time slices the other side needs.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering as StdOrdering};
use std::sync::{Arc as StdArc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use crate::sync::{spin_hint, thread};

/// Spin rounds: round `k` issues `2^k` spin hints (1 + 2 + … + 64 hints).
const SPIN_ROUNDS: u32 = 7;
/// Rounds spun before the schedule joins the shared spinner count: most
/// waits on a busy channel end within them, and they should cost nothing
/// but the spinning.
const FREE_ROUNDS: u32 = 3;
/// Yields after the spin rounds, before parking.
const YIELD_ROUNDS: u32 = 4;

/// Threads currently in a spin phase, across all channels. Not a protocol
/// word: it only steers how long a thread spins.
static SPINNING: StdAtomicUsize = StdAtomicUsize::new(0);

fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The spin-then-yield schedule a blocking operation runs through before it
/// registers and parks.
///
/// # Examples
///
/// ```
/// use asyncband_core::park::Backoff;
///
/// let mut backoff = Backoff::new();
/// let mut rounds = 0;
/// while backoff.snooze() {
///     rounds += 1;
/// }
/// assert!(rounds <= 11);
/// ```
#[derive(Debug)]
pub struct Backoff {
    round: u32,
    /// Whether this schedule has started (and looked at the spinner count).
    started: bool,
    /// Whether this schedule is counted in `SPINNING`.
    counted: bool,
}

impl Backoff {
    /// A fresh schedule. It costs nothing until a few rounds of
    /// [`Backoff::snooze`] have passed: a wait that ends quickly never
    /// touches the shared spinner count.
    pub const fn new() -> Self {
        Self {
            round: 0,
            started: false,
            counted: false,
        }
    }

    /// Joins the spinners; if every core already has one, the schedule is
    /// empty and the caller parks at once.
    fn start(&mut self) {
        self.started = true;
        let spinning = SPINNING.fetch_add(1, StdOrdering::Relaxed);
        self.counted = true;
        if cfg!(asyncband_loom) || spinning >= cores() {
            self.round = SPIN_ROUNDS + YIELD_ROUNDS;
            self.release();
        }
    }

    fn release(&mut self) {
        if self.counted {
            self.counted = false;
            SPINNING.fetch_sub(1, StdOrdering::Relaxed);
        }
    }

    /// Waits a little; returns false once the schedule is over and the
    /// caller should park instead.
    pub fn snooze(&mut self) -> bool {
        if !self.started && (self.round >= FREE_ROUNDS || cfg!(asyncband_loom)) {
            self.start();
        }
        if self.round < SPIN_ROUNDS {
            for _ in 0..1u32 << self.round {
                spin_hint();
            }
        } else if self.round < SPIN_ROUNDS + YIELD_ROUNDS {
            thread::yield_now();
        } else {
            self.release();
            return false;
        }
        self.round += 1;
        true
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Backoff {
    fn drop(&mut self) {
        self.release();
    }
}

/// Unparks one thread when woken.
struct Unparker(thread::Thread);

impl Wake for Unparker {
    fn wake(self: StdArc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &StdArc<Self>) {
        self.0.unpark();
    }
}

fn thread_waker() -> Waker {
    #[cfg(not(asyncband_loom))]
    {
        thread_local! {
            static WAKER: Waker = Waker::from(StdArc::new(Unparker(thread::current())));
        }
        WAKER.with(Waker::clone)
    }
    #[cfg(asyncband_loom)]
    {
        Waker::from(StdArc::new(Unparker(thread::current())))
    }
}

/// Drives `future` to completion on this thread, parking while it is
/// pending. With a `deadline`, gives up when it passes and returns `None`;
/// the future is then dropped by the caller, which cancels it cleanly.
///
/// # Examples
///
/// ```
/// use asyncband_core::park::block_on;
/// use std::pin::pin;
///
/// let answer = block_on(pin!(async { 42 }), None);
/// assert_eq!(answer, Some(42));
/// ```
pub fn block_on<F: Future>(
    mut future: Pin<&mut F>,
    deadline: Option<Instant>,
) -> Option<F::Output> {
    let waker = thread_waker();
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return Some(output);
        }
        match deadline {
            None => thread::park(),
            Some(deadline) => {
                let now = Instant::now();
                if now >= deadline {
                    return None;
                }
                thread::park_timeout(deadline - now);
            }
        }
    }
}
