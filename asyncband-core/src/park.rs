//! Blocking a thread on a channel operation: spin briefly, yield a few
//! times, then park.
//!
//! Every blocking operation of the channel is its async operation driven to
//! completion on the calling thread: the future registers a [`Waker`] that
//! unparks the thread, and cancellation (a timeout) is the future's drop, so
//! blocking and async waiters share one cancel-safe protocol.
//!
//! Before parking, [`Backoff`] spins for a few microseconds, checking
//! often: most waits on a busy channel end within that window and never pay
//! for a park/unpark pair. Spinning only helps when the
//! thread being waited for is running on another core, so when as many
//! threads are already spinning as there are cores the newcomer skips
//! the spinning; on an oversubscribed machine pure spinning would
//! steal the very time slices the other side needs.
//!
//! Then it yields its core a few times ([`YIELDS`]), checking after each,
//! and only then parks. On an oversubscribed machine the thread being
//! waited for is often runnable but not running, and a yield hands it the
//! core at once. Parking would do that too, but its cost lands on the other
//! side: whoever frees the capacity or sends the value must then wake the
//! parked thread with a system call, on its own critical path. With four
//! blocking senders and one receiver on two cores (the `threads`
//! `mpsc_4to1_bounded_1024` bench), parked senders made the receiver spend
//! its time in `futex` wakes; yielding first halved the time per message.
//! When nothing else is runnable a yield returns at once, so a thread that
//! waits long pays a few microseconds more before it parks.
//!
//! Senders of a channel with many receivers skip the yields
//! ([`Backoff::without_yields`]): there the receivers' waits are spread out
//! and no single thread pays for the wakes, and yielding senders give their
//! core to each other instead of to the receivers that would free room.
//!
//! Senders of a channel with many senders and one receiver skip the
//! spinning instead ([`Backoff::yields_only`]): the one thread that frees
//! their capacity is the receiver, and a sender spinning for it holds a core
//! the receiver may be waiting to run on, which the spinner count cannot
//! tell (it admits one spinner per core). Yielding hands the core over.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{
    AtomicBool as StdAtomicBool, AtomicUsize as StdAtomicUsize, Ordering as StdOrdering,
};
use std::sync::{Arc as StdArc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use crate::sync::{spin_hint, thread};

/// Checks in a spin phase; each is preceded by [`HINTS`] spin hints. The
/// phase lasts a little longer than a park/unpark round trip, and far
/// longer than a thread on another core takes to answer a spinning one.
const CHECKS: u32 = 128;
/// Spin hints between two checks: short, so a value is noticed soon after it
/// lands, and the check's own load keeps the line shared, not hammered.
const HINTS: u32 = 2;
/// Checks before a phase joins the shared spinner count: most waits on a
/// busy channel end within them, and they should cost nothing but the
/// spinning.
const FREE_CHECKS: u32 = 16;
/// `sched_yield` calls after the spin phase (or instead of it, when every
/// core already has a spinner), each followed by a check, before parking.
/// A few: many more and waiting receivers yield away the producers' time.
pub const YIELDS: u32 = 10;

/// Threads currently in a spin phase, across all channels. Not a protocol
/// word: it only steers how long a thread spins.
static SPINNING: StdAtomicUsize = StdAtomicUsize::new(0);

fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
}

/// The spin schedule a blocking operation runs through before it registers
/// and parks.
///
/// # Examples
///
/// ```
/// use asyncband_core::park::Backoff;
///
/// let mut backoff = Backoff::new();
/// let mut checks = 0;
/// while backoff.snooze() {
///     checks += 1;
/// }
/// assert!(checks <= 128 + asyncband_core::park::YIELDS);
/// ```
#[derive(Debug)]
pub struct Backoff {
    round: u32,
    /// How many yields follow the spinning.
    yields: u32,
    /// Whether this schedule has started (and looked at the spinner count).
    started: bool,
    /// Whether this schedule is counted in `SPINNING`.
    counted: bool,
}

impl Backoff {
    /// A fresh schedule. It costs nothing until a few checks have passed:
    /// a wait that ends quickly never touches the shared spinner count.
    #[must_use]
    pub const fn new() -> Self {
        Self::with_yields(YIELDS)
    }

    /// A fresh schedule with `yields` yields after its spins.
    const fn with_yields(yields: u32) -> Self {
        Self {
            round: 0,
            yields,
            started: false,
            counted: false,
        }
    }

    /// A schedule that spins and then lets the caller park, with no yields
    /// in between: for senders of a channel with many receivers (module
    /// docs).
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband_core::park::Backoff;
    ///
    /// let mut backoff = Backoff::without_yields();
    /// let mut checks = 0;
    /// while backoff.snooze() {
    ///     checks += 1;
    /// }
    /// assert!(checks <= 128);
    /// ```
    #[must_use]
    pub const fn without_yields() -> Self {
        Self::with_yields(0)
    }

    /// A schedule that skips the spin phase and only yields, then lets the
    /// caller park: for senders of a channel with many senders and one
    /// receiver (module docs).
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband_core::park::{Backoff, YIELDS};
    ///
    /// let mut backoff = Backoff::yields_only();
    /// let mut checks = 0;
    /// while backoff.snooze() {
    ///     checks += 1;
    /// }
    /// assert_eq!(checks, YIELDS);
    /// ```
    #[must_use]
    pub const fn yields_only() -> Self {
        Self {
            round: CHECKS,
            yields: YIELDS,
            started: true,
            counted: false,
        }
    }

    /// Joins the spinners; if every core already has one, the schedule ends
    /// and the caller parks at once.
    fn start(&mut self) {
        self.started = true;
        let spinning = SPINNING.fetch_add(1, StdOrdering::Relaxed);
        self.counted = true;
        if cfg!(asyncband_loom) || spinning >= cores() {
            self.round = CHECKS;
            self.release();
        }
    }

    fn release(&mut self) {
        if self.counted {
            self.counted = false;
            SPINNING.fetch_sub(1, StdOrdering::Relaxed);
        }
    }

    /// Waits a little before the caller checks again; returns false once the
    /// schedule is over and the caller should park instead. Spins first,
    /// then yields the core up to [`YIELDS`] times (module docs). Under
    /// loom the schedule is empty: every wait parks at once.
    pub fn snooze(&mut self) -> bool {
        if !self.started && (self.round >= FREE_CHECKS || cfg!(asyncband_loom)) {
            self.start();
        }
        if self.round >= CHECKS {
            self.release();
            if cfg!(asyncband_loom) || self.round >= CHECKS + self.yields {
                return false;
            }
            self.round += 1;
            thread::yield_now();
            return true;
        }
        for _ in 0..HINTS {
            spin_hint();
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

/// Unparks one thread when woken, and says so in a flag the thread can
/// spin on before it parks.
struct Unparker {
    thread: thread::Thread,
    woken: StdAtomicBool,
}

impl Wake for Unparker {
    fn wake(self: StdArc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &StdArc<Self>) {
        // ORDERING: Release pairs with the Acquire swap in `block_on`; the
        // unpark that follows covers a thread that is already parked.
        self.woken.store(true, StdOrdering::Release);
        self.thread.unpark();
    }
}

/// This thread's waker, made once per thread (outside loom).
fn thread_waker() -> (Waker, StdArc<Unparker>) {
    #[cfg(not(asyncband_loom))]
    {
        thread_local! {
            static UNPARKER: StdArc<Unparker> = StdArc::new(Unparker {
                thread: thread::current(),
                woken: StdAtomicBool::new(false),
            });
        }
        UNPARKER.with(|unparker| {
            (
                Waker::from(StdArc::clone(unparker)),
                StdArc::clone(unparker),
            )
        })
    }
    #[cfg(asyncband_loom)]
    {
        let unparker = StdArc::new(Unparker {
            thread: thread::current(),
            woken: StdAtomicBool::new(false),
        });
        (Waker::from(StdArc::clone(&unparker)), unparker)
    }
}

/// Drives `future` to completion on this thread, parking while it is
/// pending, after each `Pending` through a fresh `schedule()`. With a
/// `deadline`, gives up when it passes and returns `None`; the future is
/// then dropped by the caller, which cancels it cleanly.
///
/// # Examples
///
/// ```
/// use asyncband_core::park::{Backoff, block_on};
/// use std::pin::pin;
///
/// let answer = block_on(pin!(async { 42 }), None, Backoff::new);
/// assert_eq!(answer, Some(42));
/// ```
#[must_use = "`None` means the deadline passed and the future must be dropped or polled again"]
pub fn block_on<F: Future>(
    mut future: Pin<&mut F>,
    deadline: Option<Instant>,
    schedule: fn() -> Backoff,
) -> Option<F::Output> {
    let (waker, unparker) = thread_waker();
    let mut cx = Context::from_waker(&waker);
    loop {
        // A wake that came before this poll is for what this poll sees.
        // ORDERING: Relaxed; the poll re-reads the channel itself.
        unparker.woken.store(false, StdOrdering::Relaxed);
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return Some(output);
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return None;
        }
        // Spin a little for the wake before parking: a grant or a value that
        // arrives within microseconds then costs the waker an atomic swap
        // instead of a futex wake-up, and this thread no context switch.
        let mut backoff = schedule();
        // ORDERING: Acquire pairs with the Release store in `wake_by_ref`.
        while !unparker.woken.load(StdOrdering::Acquire) {
            if !backoff.snooze() {
                match deadline {
                    None => thread::park(),
                    Some(deadline) => {
                        let now = Instant::now();
                        if now >= deadline {
                            break;
                        }
                        thread::park_timeout(deadline - now);
                    }
                }
                break;
            }
        }
    }
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests {
    use super::*;

    /// How many times `backoff` says to check again before it is over.
    fn snoozes(mut backoff: Backoff) -> u32 {
        let mut snoozes = 0;
        while backoff.snooze() {
            snoozes += 1;
        }
        assert!(!backoff.snooze(), "a finished schedule stays finished");
        snoozes
    }

    // Threads of other tests may be spinning, which cuts the spin phase
    // short after its free checks, but never the yield phase.

    #[test]
    fn a_backoff_yields_before_it_lets_the_caller_park() {
        let snoozes = snoozes(Backoff::new());
        assert!(
            [FREE_CHECKS + YIELDS, CHECKS + YIELDS].contains(&snoozes),
            "{snoozes} snoozes: spins and then {YIELDS} yields expected"
        );
    }

    #[test]
    fn a_yields_only_backoff_never_spins() {
        let mut backoff = Backoff::yields_only();
        let mut snoozes = 0;
        while backoff.snooze() {
            snoozes += 1;
            assert!(!backoff.counted, "never joins the spinners");
        }
        assert_eq!(
            snoozes, YIELDS,
            "{snoozes} snoozes: {YIELDS} yields expected"
        );
    }

    #[test]
    fn a_backoff_without_yields_only_spins() {
        let snoozes = snoozes(Backoff::without_yields());
        assert!(
            [FREE_CHECKS, CHECKS].contains(&snoozes),
            "{snoozes} snoozes: spins only expected"
        );
    }
}
