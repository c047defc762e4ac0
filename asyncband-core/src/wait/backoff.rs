//! Every way a thread waits, and the constants that say how long: spin
//! hints, pauses, the spin latch, backoff schedules, and parking.
//!
//! A [`Park`](super::Park) channel's blocking operation tries, backs off
//! ([`Backoff`]: spins a few microseconds unless every core has a spinner,
//! then yields [`YIELDS`] times, handing an oversubscribed core to the
//! thread waited for), then drives the channel's cancel-safe future with a
//! waker that unparks the thread ([`block_on`]), so a timeout is the
//! future's drop. A [`Spin`](super::Spin) channel only spins; a
//! [`Yield`](super::Yield) channel spins, then yields, and never parks.
//!
//! A blocking receive yields only on an oversubscribed machine
//! ([`oversubscribed_now`]), spins longer after short waits, and parks at
//! once oversubscribed while values come one by one ([`ReceiveWaits`]).
//! Senders skip the yields when there are many receivers (a yield would
//! hand the core to another sender), and the spin when they share one
//! receiver (it would hold the receiver's core).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{
    AtomicBool as StdAtomicBool, AtomicU64 as StdAtomicU64, AtomicUsize as StdAtomicUsize,
    Ordering as StdOrdering,
};
use std::sync::{Arc as StdArc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use crate::sync::{AtomicBool, Ordering, thread};
use crate::wait::Wait;

/// One iteration of a busy wait: a `spin_loop` hint, or a loom yield so the
/// model checker can run the thread being waited for.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(not(asyncband_loom))]
    std::hint::spin_loop();
    #[cfg(asyncband_loom)]
    loom::thread::yield_now();
}

/// After a lost claim: 2, 4, … up to 64 spin hints, so the winner finishes
/// while the claim word's line is its own (none under loom).
#[cold]
#[inline(never)]
pub(crate) fn after_lost_claim(losses: &mut u32) {
    *losses += 1;
    #[cfg(not(asyncband_loom))]
    for _ in 0..1u32 << (*losses).min(6) {
        std::hint::spin_loop();
    }
}

/// Spins of a [`pause`] before it yields.
const PAUSE_SPINS: u32 = if cfg!(asyncband_loom) { 1 } else { 64 };

/// A receive future's spins on a value being written before it yields.
pub(crate) const BUSY_POLL_SPINS: u32 = if cfg!(asyncband_loom) { 2 } else { 64 };

/// Waits out another thread's few-instruction step: spins, then (policies
/// that yield) yields in case it was preempted. `spins` counts the rounds.
#[inline]
pub(crate) fn pause<W: Wait>(spins: &mut u32) {
    *spins += 1;
    if *spins < PAUSE_SPINS || !W::YIELDING {
        spin_hint();
    } else {
        thread::yield_now();
    }
}

/// A spin latch for pushes through a single producer's held capacity, whose
/// cursor several threads may take turns at.
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
        // ORDERING: Acquire pairs with the Release in `Held::drop`.
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

/// Checks in a spin phase, each after [`HINTS`] spin hints: a little longer
/// than a park/unpark round trip.
const CHECKS: u32 = 128;
/// Spin hints between two checks: few, so a value is noticed soon.
const HINTS: u32 = 2;
/// Checks before a phase joins the shared spinner count.
const FREE_CHECKS: u32 = 16;
/// `sched_yield` calls, each followed by a check, before parking.
pub const YIELDS: u32 = 10;

/// The yields of a schedule that never ends ([`Backoff::endless`]).
const ENDLESS: u32 = u32::MAX;

/// The yields of a schedule that yields for ever after its spin phase
/// ([`Backoff::yielding`]).
const YIELD_FOREVER: u32 = u32::MAX - 1;

/// The longest a blocking receive spins past its spin phase, and the longest
/// last wait that lets it ([`ReceiveWaits::spin_nanos`]).
pub(crate) const LONG_SPIN_NANOS: u64 = 50_000;

/// Threads in a spin phase, across all channels; not a protocol word.
static SPINNING: StdAtomicUsize = StdAtomicUsize::new(0);

/// The cores this process may run on, found once.
pub(super) fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
}

/// How long a look at the run queue stays good for.
const LOOK_NANOS: u64 = 5_000_000;
/// When the run queue was last looked at (`coarse_now_nanos`), and what was
/// seen (the low bit). Not a protocol word.
static LOOKED: StdAtomicU64 = StdAtomicU64::new(0);

/// Decides oversubscription for the process when `never` or `always` (any
/// ASCII case). Read once.
const OVERSUBSCRIBED_ENV: &str = "ASYNCBAND_OVERSUBSCRIBED";

/// Whether the machine has more runnable threads (the fourth field of
/// `/proc/loadavg`, read at most every [`LOOK_NANOS`]) than this process may
/// use cores, as a blocking receive judges it; false where that is
/// unavailable; [`OVERSUBSCRIBED_ENV`] overrides it. A wrong answer costs a
/// wake-up, never a value. Not public API: benchmarks and tests report it.
///
/// # Examples
///
/// ```
/// if cfg!(not(target_os = "linux")) && std::env::var_os("ASYNCBAND_OVERSUBSCRIBED").is_none() {
///     assert!(!asyncband_core::wait::oversubscribed_now());
/// }
/// ```
#[doc(hidden)]
#[must_use]
pub fn oversubscribed_now() -> bool {
    if let Some(fixed) = oversubscribed_by_env() {
        return fixed;
    }
    let Some(now) = coarse_now_nanos() else {
        return false;
    };
    // ORDERING: Relaxed; a hint.
    let looked = LOOKED.load(StdOrdering::Relaxed);
    if looked != 0 && now.saturating_sub(looked >> 1) < LOOK_NANOS {
        return looked & 1 == 1;
    }
    let busy = runnable_threads().is_some_and(|running| running > cores());
    // ORDERING: Relaxed; a hint. Concurrent lookers store alike answers.
    LOOKED.store((now.max(1) << 1) | u64::from(busy), StdOrdering::Relaxed);
    busy
}

/// What [`OVERSUBSCRIBED_ENV`] says, read once; nothing under loom and Miri.
fn oversubscribed_by_env() -> Option<bool> {
    static FIXED: OnceLock<Option<bool>> = OnceLock::new();
    *FIXED.get_or_init(|| {
        let value = if cfg!(any(asyncband_loom, miri)) {
            None
        } else {
            std::env::var_os(OVERSUBSCRIBED_ENV)
        };
        parse_oversubscribed(value.as_deref())
    })
}

fn parse_oversubscribed(value: Option<&std::ffi::OsStr>) -> Option<bool> {
    let value = value?;
    let always = value.eq_ignore_ascii_case("always");
    (always || value.eq_ignore_ascii_case("never")).then_some(always)
}

/// A cheap monotonic clock in nanoseconds, a few milliseconds coarse
/// (`CLOCK_MONOTONIC_COARSE`); `None` off Linux and under loom and Miri.
fn coarse_now_nanos() -> Option<u64> {
    #[cfg(not(all(target_os = "linux", not(asyncband_loom), not(miri))))]
    return None;
    #[cfg(all(target_os = "linux", not(asyncband_loom), not(miri)))]
    {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid, writable `timespec`, all the call writes.
        if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &raw mut now) } != 0 {
            return None;
        }
        let secs = u64::try_from(now.tv_sec).ok()?;
        let nanos = u64::try_from(now.tv_nsec).ok()?;
        Some(secs.saturating_mul(1_000_000_000).saturating_add(nanos))
    }
}

/// Threads runnable on the machine now, the caller included, read into a
/// stack buffer: from the held file on Unix, else from a fresh open.
fn runnable_threads() -> Option<usize> {
    use std::io::Read;

    #[cfg(unix)]
    if let Some(running) = held_runnable_threads() {
        return Some(running);
    }
    let mut buf = [0u8; LOADAVG_BYTES];
    let len = std::fs::File::open("/proc/loadavg")
        .ok()?
        .read(&mut buf)
        .ok()?;
    parse_running(buf.get(..len)?)
}

/// Room for a `/proc/loadavg` line, such as "0.52 0.58 0.59 3/467 12345\n".
const LOADAVG_BYTES: usize = 128;

/// [`runnable_threads`] by one `pread` of a `/proc/loadavg` kept open; `None`
/// if that fails (a program closed descriptors it did not open).
#[cfg(unix)]
fn held_runnable_threads() -> Option<usize> {
    use std::os::unix::fs::FileExt;

    static LOADAVG: OnceLock<Option<std::fs::File>> = OnceLock::new();
    let file = LOADAVG
        .get_or_init(|| std::fs::File::open("/proc/loadavg").ok())
        .as_ref()?;
    let mut buf = [0u8; LOADAVG_BYTES];
    let len = file.read_at(&mut buf, 0).ok()?;
    parse_running(buf.get(..len)?)
}

/// The number before the slash in a `/proc/loadavg` line's fourth field.
fn parse_running(loadavg: &[u8]) -> Option<usize> {
    let loadavg = std::str::from_utf8(loadavg).ok()?;
    let running = loadavg.split_whitespace().nth(3)?.split('/').next()?;
    running.parse().ok()
}

/// Nanoseconds since the first call in this process.
fn now_nanos() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = *EPOCH.get_or_init(Instant::now);
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Values further apart on average than this since the last wait make the
/// traffic sparse: about a park/unpark round trip.
const SPARSE_GAP_NANOS: u64 = 2_000;
/// Waits in a row, each after a run of values (two or more, closer than
/// [`SPARSE_GAP_NANOS`]), before an oversubscribed receiver spins and yields
/// again: one run may be a backlog behind a preempted producer.
const RUNS_TO_YIELD: u64 = 3;

/// What a channel remembers of its blocking receives' waits, to choose how
/// the next one waits. Not protocol words: every access is `Relaxed`.
#[derive(Debug, Default)]
pub struct ReceiveWaits {
    /// The consumers' head position when a receive last began to wait.
    head: StdAtomicU64,
    /// `now_nanos` then.
    at: StdAtomicU64,
    /// How many waits in a row followed a run of values.
    runs: StdAtomicU64,
    /// The last timed wait of a blocking receive, in nanoseconds (0: none).
    last_wait: StdAtomicU64,
}

impl ReceiveWaits {
    /// The schedule for a blocking receive about to wait, `head` reading the
    /// consumers' head, and how long its spin phase may last.
    pub(crate) fn schedule(&self, head: impl FnOnce() -> u64) -> (fn() -> Backoff, u64) {
        let oversubscribed = oversubscribed_now();
        let spin_nanos = if oversubscribed { 0 } else { self.spin_nanos() };
        let park_at_once = || self.park_at_once(head(), now_nanos());
        (receive_backoff(oversubscribed, park_at_once), spin_nanos)
    }

    /// How long a spinning receive may spin: twice the last timed wait,
    /// capped at [`LONG_SPIN_NANOS`], or 0 if that wait was longer.
    fn spin_nanos(&self) -> u64 {
        // ORDERING: Relaxed; a hint.
        let last = self.last_wait.load(StdOrdering::Relaxed);
        if last <= LONG_SPIN_NANOS {
            last.saturating_mul(2).min(LONG_SPIN_NANOS)
        } else {
            0
        }
    }

    /// Records a receive's wait since its schedule `began`, if it was timed.
    pub(crate) fn record(&self, began: Option<u64>) {
        if let Some(began) = began {
            self.waited(now_nanos().saturating_sub(began));
        }
    }

    /// Notes a timed wait of `nanos`.
    fn waited(&self, nanos: u64) {
        // ORDERING: Relaxed; a hint.
        self.last_wait.store(nanos.max(1), StdOrdering::Relaxed);
    }

    /// Records this wait (the head and the time now) and says whether values
    /// have not come in runs lately.
    fn park_at_once(&self, head: u64, now: u64) -> bool {
        // ORDERING: Relaxed; hints.
        let taken = head.wrapping_sub(self.head.swap(head, StdOrdering::Relaxed));
        let elapsed = now.saturating_sub(self.at.swap(now, StdOrdering::Relaxed));
        let run = taken >= 2 && elapsed <= taken.saturating_mul(SPARSE_GAP_NANOS);
        let runs = if run {
            self.runs.fetch_add(1, StdOrdering::Relaxed) + 1
        } else {
            self.runs.store(0, StdOrdering::Relaxed);
            0
        };
        runs < RUNS_TO_YIELD
    }
}

/// How a blocking receive waits before it parks: spins (a core for every
/// runnable thread), else spins and yields (letting producers fill the
/// channel), or parks at once if `park_at_once` says values stopped coming
/// in runs (by rate), when a yield or a spin would only waste time.
fn receive_backoff(oversubscribed: bool, park_at_once: impl FnOnce() -> bool) -> fn() -> Backoff {
    if !oversubscribed {
        Backoff::without_yields
    } else if park_at_once() {
        Backoff::none
    } else {
        Backoff::new
    }
}

/// The spin schedule a blocking operation runs through before it registers
/// and parks.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::Backoff;
///
/// let mut backoff = Backoff::new();
/// let mut checks = 0;
/// while backoff.snooze() {
///     checks += 1;
/// }
/// assert!(checks <= 128 + asyncband_core::wait::YIELDS);
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
    /// How long past `began` the spin phase may go on after its checks.
    spin_nanos: u64,
    /// Whether the schedule reads the clock when it starts.
    timed: bool,
    /// `now_nanos` when a timed schedule started (after its free checks), or 0.
    began: u64,
}

impl Backoff {
    /// A fresh schedule.
    #[must_use]
    pub const fn new() -> Self {
        Self::with_yields(YIELDS)
    }

    const fn with_yields(yields: u32) -> Self {
        Self {
            round: 0,
            yields,
            started: false,
            counted: false,
            spin_nanos: 0,
            timed: false,
            began: 0,
        }
    }

    /// A schedule that spins forever: how a [`Spin`](super::Spin) channel
    /// blocks.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband_core::wait::Backoff;
    ///
    /// let mut backoff = Backoff::endless();
    /// assert!((0..10_000).all(|_| backoff.snooze()));
    /// ```
    #[must_use]
    pub const fn endless() -> Self {
        Self::with_yields(ENDLESS)
    }

    /// A schedule that spins (not at all if every core has a spinner), then
    /// yields before every check for ever: how a [`Yield`](super::Yield)
    /// channel blocks.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband_core::wait::Backoff;
    ///
    /// let mut backoff = Backoff::yielding();
    /// assert!((0..1_000).all(|_| backoff.snooze()));
    /// ```
    #[must_use]
    pub const fn yielding() -> Self {
        Self::with_yields(YIELD_FOREVER)
    }

    /// [`Backoff::yielding`] without its spin phase: for senders of a
    /// [`Yield`](super::Yield) channel with many senders and one receiver,
    /// whose spin would hold the receiver's core.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband_core::wait::Backoff;
    ///
    /// let mut backoff = Backoff::yielding_only();
    /// assert!((0..1_000).all(|_| backoff.snooze()));
    /// ```
    #[must_use]
    pub const fn yielding_only() -> Self {
        Self::past_spin(YIELD_FOREVER)
    }

    /// This schedule, timed from its start (after the free checks), its spin
    /// phase going on until `spin_nanos` have passed since then.
    pub(crate) fn lengthened(mut self, spin_nanos: u64) -> Self {
        self.spin_nanos = spin_nanos;
        self.timed = true;
        self
    }

    /// When a timed schedule started (`now_nanos`), if it has.
    pub(crate) fn began(&self) -> Option<u64> {
        (self.began != 0).then_some(self.began)
    }

    /// Whether a lengthened spin phase goes on: its time is not up yet.
    fn spins_on(&mut self) -> bool {
        if self.spin_nanos == 0 || cfg!(asyncband_loom) {
            return false;
        }
        if now_nanos().saturating_sub(self.began) < self.spin_nanos {
            return true;
        }
        self.spin_nanos = 0;
        false
    }

    /// A schedule that spins, then parks, with no yields: for senders of a
    /// channel with many receivers.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband_core::wait::Backoff;
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

    /// Whether the schedule has nothing left, as [`Backoff::none`].
    fn is_spent(&self) -> bool {
        self.round >= CHECKS && self.yields == 0 && self.spin_nanos == 0
    }

    /// An empty schedule, parking at once: for a receiver of sparse values.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband_core::wait::Backoff;
    ///
    /// assert!(!Backoff::none().snooze());
    /// ```
    #[must_use]
    pub const fn none() -> Self {
        Self::past_spin(0)
    }

    /// A schedule that only yields, then parks: for senders of a channel
    /// with many senders and one receiver.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband_core::wait::{Backoff, YIELDS};
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
        Self::past_spin(YIELDS)
    }

    /// A schedule past its spin phase (never joining the spinners), with
    /// `yields` yields left.
    const fn past_spin(yields: u32) -> Self {
        let mut backoff = Self::with_yields(yields);
        backoff.round = CHECKS;
        backoff.started = true;
        backoff
    }

    /// Joins the spinners; if every core already has one, the schedule ends
    /// and the caller parks at once.
    fn start(&mut self) {
        self.started = true;
        if self.timed && !cfg!(asyncband_loom) {
            self.began = now_nanos().max(1);
        }
        let spinning = SPINNING.fetch_add(1, StdOrdering::Relaxed);
        self.counted = true;
        if cfg!(asyncband_loom) || spinning >= cores() {
            self.round = CHECKS;
            self.spin_nanos = 0;
            self.release();
        }
    }

    fn release(&mut self) {
        if self.counted {
            self.counted = false;
            SPINNING.fetch_sub(1, StdOrdering::Relaxed);
        }
    }

    /// Waits a little before the caller checks again; false once the caller
    /// should park instead (at once under loom).
    pub fn snooze(&mut self) -> bool {
        if self.yields != ENDLESS {
            if !self.started && (self.round >= FREE_CHECKS || cfg!(asyncband_loom)) {
                self.start();
            }
            if self.round < CHECKS {
                self.round += 1;
            } else if !self.spins_on() {
                self.release();
                if self.yields != YIELD_FOREVER {
                    if cfg!(asyncband_loom) || self.round >= CHECKS + self.yields {
                        return false;
                    }
                    self.round += 1;
                }
                thread::yield_now();
                return true;
            }
        }
        for _ in 0..HINTS {
            spin_hint();
        }
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

/// Unparks one thread when woken, and raises a flag it can spin on.
struct Unparker {
    thread: thread::Thread,
    woken: StdAtomicBool,
}

impl Wake for Unparker {
    fn wake(self: StdArc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &StdArc<Self>) {
        // An unpark only for the wake that raised the flag: the thread
        // clears it before each poll and sets it when its `block_on`
        // returns, so a waker left registered with a completed wait (a
        // cell keeps the last one) does not unpark a thread gone elsewhere.
        // ORDERING: Release pairs with the Acquire loads in `block_on`.
        if !self.woken.swap(true, StdOrdering::Release) {
            self.thread.unpark();
        }
    }
}

impl Unparker {
    fn for_this_thread() -> StdArc<Self> {
        StdArc::new(Self {
            thread: thread::current(),
            woken: StdAtomicBool::new(false),
        })
    }
}

/// This thread's waker, made once per thread (outside loom), or afresh in a
/// thread-local destructor.
fn thread_waker() -> (Waker, StdArc<Unparker>) {
    #[cfg(not(asyncband_loom))]
    let unparker = {
        thread_local! {
            static UNPARKER: StdArc<Unparker> = Unparker::for_this_thread();
        }
        UNPARKER
            .try_with(StdArc::clone)
            .unwrap_or_else(|_| Unparker::for_this_thread())
    };
    #[cfg(asyncband_loom)]
    let unparker = Unparker::for_this_thread();
    (Waker::from(StdArc::clone(&unparker)), unparker)
}

/// Marks the thread's waker woken when a [`block_on`] returns or unwinds: a
/// nested `block_on` (user code in the outer poll) shares the waker and may
/// use up its flag and unpark, so the outer one polls again, not parks.
struct WokenOnExit<'a>(&'a Unparker);

impl Drop for WokenOnExit<'_> {
    fn drop(&mut self) {
        // ORDERING: Relaxed; read by this thread's enclosing `block_on`,
        // whose poll then re-reads the channel itself.
        self.0.woken.store(true, StdOrdering::Relaxed);
    }
}

/// Sleeps about the shortest time the kernel allows (not cut by an unpark);
/// nothing under loom, which never chooses a park-at-once schedule.
fn nap() {
    #[cfg(not(asyncband_loom))]
    std::thread::sleep(std::time::Duration::from_micros(20));
}

/// How a thread that polls the futures of several channels in rounds (a
/// select) waits between rounds: as the most patient of their policies.
/// The futures of a [`Spin`](super::Spin) or [`Yield`](super::Yield)
/// channel keep no waiters and wake the thread at once, so a round that
/// finds nothing is followed by another; this paces them.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::{Park, Rounds, Spin, Yield};
///
/// assert!(Rounds::of::<Park>().pace().is_none());
/// assert_eq!(Rounds::of::<Spin>().max(Rounds::of::<Park>()), Rounds::Spin);
/// assert_eq!(Rounds::of::<Spin>().max(Rounds::of::<Yield>()), Rounds::Yield);
/// ```
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rounds {
    /// Every channel parks: its futures wake the thread when they can go on.
    Park,
    /// Some channel spins: a spin hint between rounds, never a system call.
    Spin,
    /// Some channel yields: spin hints for a while, then `sched_yield`
    /// between rounds.
    Yield,
}

impl Rounds {
    /// The rounds of a channel with policy `W`.
    #[must_use]
    pub const fn of<W: Wait>() -> Self {
        if W::PARKS {
            Self::Park
        } else if W::YIELDING {
            Self::Yield
        } else {
            Self::Spin
        }
    }

    /// The schedule to snooze on between rounds, kept across them; `None`
    /// where the futures' wakes pace the rounds.
    #[must_use]
    pub const fn pace(self) -> Option<Backoff> {
        match self {
            Self::Park => None,
            Self::Spin => Some(Backoff::endless()),
            Self::Yield => Some(Backoff::yielding()),
        }
    }
}

/// Drives `future` to completion on this thread, after each `Pending`
/// backing off through a fresh `schedule()`, then parking. Returns `None`
/// once `deadline` passes; the caller's drop of the future cancels it.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::{Backoff, block_on};
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
    let _woken_on_exit = WokenOnExit(&unparker);
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
        let mut backoff = schedule();
        // ORDERING: Acquire pairs with the Release store in `wake_by_ref`.
        if backoff.is_spent() && unparker.woken.load(StdOrdering::Acquire) {
            // Woken during the poll, parking at once: a nap, not a busy
            // re-poll, lets the writer of the awaited value run.
            nap();
        }
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
    fn only_a_park_at_once_schedule_naps_after_a_wake_during_the_poll() {
        assert!(Backoff::none().is_spent());
        assert!(!Backoff::new().is_spent());
        assert!(!Backoff::without_yields().is_spent());
        assert!(!Backoff::yields_only().is_spent());
    }

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

    /// Feeds `waits` of (values taken, nanoseconds since the last wait) to
    /// fresh `ReceiveWaits`; returns what each wait was told.
    fn park_at_once(waits: &[(u64, u64)]) -> Vec<bool> {
        let receive = ReceiveWaits::default();
        let (mut head, mut now) = (0, 0);
        waits
            .iter()
            .map(|&(taken, elapsed)| {
                head += taken;
                now += elapsed;
                receive.park_at_once(head, now)
            })
            .collect()
    }

    #[test]
    #[cfg_attr(miri, ignore = "reads /proc, which Miri's isolation refuses")]
    fn the_run_queue_is_read_where_the_kernel_offers_it() {
        if cfg!(target_os = "linux") && std::path::Path::new("/proc/loadavg").exists() {
            // This thread is running, so it is counted.
            assert!(runnable_threads().is_some_and(|running| running >= 1));
        }
    }

    #[test]
    #[cfg(unix)]
    #[cfg_attr(miri, ignore = "reads /proc, which Miri's isolation refuses")]
    fn the_run_queue_file_kept_open_reads_afresh_at_every_look() {
        if cfg!(target_os = "linux") && std::path::Path::new("/proc/loadavg").exists() {
            for look in 0..3 {
                assert!(
                    held_runnable_threads().is_some_and(|running| running >= 1),
                    "look {look} read no count"
                );
            }
        }
    }

    #[test]
    fn the_environment_decides_oversubscription_only_when_it_says_never_or_always() {
        use std::ffi::OsStr;

        assert_eq!(parse_oversubscribed(Some(OsStr::new("never"))), Some(false));
        assert_eq!(parse_oversubscribed(Some(OsStr::new("NEVER"))), Some(false));
        assert_eq!(parse_oversubscribed(Some(OsStr::new("always"))), Some(true));
        assert_eq!(parse_oversubscribed(Some(OsStr::new("Always"))), Some(true));
        assert_eq!(parse_oversubscribed(Some(OsStr::new(""))), None);
        assert_eq!(parse_oversubscribed(Some(OsStr::new("off"))), None);
        assert_eq!(parse_oversubscribed(None), None);
    }

    #[test]
    fn the_runnable_count_is_the_number_before_the_slash() {
        assert_eq!(parse_running(b"0.52 0.58 0.59 3/467 12345\n"), Some(3));
        assert_eq!(parse_running(b"0.00 0.01 0.05 12/89 7"), Some(12));
        assert_eq!(parse_running(b""), None);
        assert_eq!(parse_running(b"0.52 0.58 0.59"), None);
        assert_eq!(parse_running(b"not a loadavg line at all"), None);
    }

    #[test]
    fn a_receiver_yields_only_on_an_oversubscribed_machine() {
        let not_asked = || -> bool { panic!("the rate is only looked at when oversubscribed") };
        let spins = snoozes(receive_backoff(false, not_asked)());
        assert!(
            [FREE_CHECKS, CHECKS].contains(&spins),
            "{spins} snoozes: spins only expected"
        );
        let snoozed = snoozes(receive_backoff(true, || false)());
        assert!(
            [FREE_CHECKS + YIELDS, CHECKS + YIELDS].contains(&snoozed),
            "{snoozed} snoozes: spins and {YIELDS} yields expected"
        );
        assert_eq!(snoozes(receive_backoff(true, || true)()), 0);
    }

    #[test]
    fn a_receiver_whose_values_come_one_by_one_parks_at_once() {
        assert_eq!(park_at_once(&[(1, 20_000); 4]), [true; 4]);
    }

    #[test]
    fn a_receiver_whose_values_come_in_runs_spins_and_yields_after_three_runs() {
        assert_eq!(
            park_at_once(&[(500, 20_000); 4]),
            [true, true, false, false]
        );
    }

    #[test]
    fn a_lone_run_among_sparse_values_does_not_make_a_receiver_yield() {
        // A backlog drained after a stall, between values that come apart.
        let waits = [
            (1, 20_000),
            (100, 30_000),
            (1, 20_000),
            (100, 30_000),
            (1, 20_000),
        ];
        assert_eq!(park_at_once(&waits), [true; 5]);
    }

    #[test]
    fn a_run_that_came_slowly_is_no_run() {
        // A receiver kept off its core for 4 ms finds 200 values.
        assert_eq!(park_at_once(&[(200, 4_000_000); 4]), [true; 4]);
    }

    #[test]
    fn a_receiver_spins_on_only_after_short_waits() {
        let waits = ReceiveWaits::default();
        assert_eq!(waits.spin_nanos(), 0, "no wait yet: the usual spin");
        waits.waited(20_000);
        assert_eq!(waits.spin_nanos(), 40_000, "twice the last wait");
        waits.waited(35_000);
        assert_eq!(waits.spin_nanos(), LONG_SPIN_NANOS, "at most the cap");
        waits.waited(LONG_SPIN_NANOS + 1);
        assert_eq!(waits.spin_nanos(), 0, "a long wait ends the spinning");
        waits.waited(0);
        assert_eq!(waits.spin_nanos(), 2, "a wait is never recorded as none");
    }

    #[test]
    fn a_lengthened_backoff_times_its_wait_from_its_free_checks() {
        let mut backoff = Backoff::without_yields().lengthened(0);
        for _ in 0..FREE_CHECKS {
            assert!(backoff.snooze());
            assert_eq!(backoff.began(), None, "a short wait reads no clock");
        }
        assert!(backoff.snooze());
        assert!(backoff.began().is_some(), "timed once past its free checks");
        assert!(Backoff::without_yields().began().is_none());
        let mut untimed = Backoff::without_yields();
        while untimed.snooze() {}
        assert_eq!(untimed.began(), None, "only a lengthened schedule is timed");
    }

    #[test]
    fn a_lengthened_backoff_spins_until_its_time_is_up() {
        const NANOS: u64 = 2_000_000;
        // Past its checks and started, as if it had joined the spinners, so
        // that other tests' spinners cannot cut it short.
        let began = Instant::now();
        let mut backoff = Backoff {
            round: CHECKS,
            started: true,
            began: now_nanos().max(1),
            ..Backoff::without_yields().lengthened(NANOS)
        };
        assert!(!backoff.is_spent());
        while backoff.snooze() {}
        let spun = began.elapsed();
        assert!(
            spun >= std::time::Duration::from_nanos(NANOS),
            "spun {spun:?}, {NANOS} ns expected"
        );
        assert!(backoff.is_spent());
        assert!(!backoff.snooze(), "a finished schedule stays finished");
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
