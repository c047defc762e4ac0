//! How a single endpoint publishes its progress: plain stores while nobody
//! waits on it, `SeqCst` stores while somebody does.
//!
//! A single producer (or consumer, freeing slots) stores its index, then
//! loads the waiters' flag; a waiter stores its flag, then re-reads the
//! index: the store-buffer race of [`crate::wait`]. A full barrier on the
//! publisher's side would cost a cross-core round trip per message.
//!
//! # The asymmetric fence
//!
//! Linux's `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` runs a full
//! barrier on every running thread of the process: after a waiter stores its
//! flag and calls it, either the re-check sees a publish the publisher
//! ordered (by a compiler fence) before its flag load, or that load sees the
//! flag. The waiter pays a system call, so a [`Mode`] asks for it once per
//! stretch of waiting:
//!
//! | mode | publisher stores | a waiter, before re-checking |
//! | --- | --- | --- |
//! | `PLAIN` | release store, compiler fence | moves it to `REQUESTED`, calls `membarrier` |
//! | `REQUESTED` | (acknowledges on its next publish) | calls `membarrier` |
//! | `FENCED` | `SeqCst` store | nothing: the store-buffer argument holds |
//!
//! - A new fence starts `FENCED` for [`FENCED_AT_FIRST`] publishes, so a
//!   short exchange (a reply channel) never makes the system call.
//! - On `REQUESTED` the publisher stores `FENCED` (`SeqCst`, so whoever reads
//!   `FENCED` sees every earlier publish); a publish begun before that is
//!   covered by the requesting waiter's system call.
//! - After a stretch of fenced publishes that found nobody waiting
//!   (`Mode::acknowledge` sizes it), the publisher stores `PLAIN`, then loads
//!   the flag and stores `FENCED` again if a waiter is there; the waiter
//!   stores its flag, then loads the mode (all `SeqCst`): one sees the other.
//!   The flag is asked after the publish woke its waiters, so a stretch runs
//!   out even while waiters come often (counting them would keep a streaming
//!   channel fenced for good).
//!
//! Without `membarrier` (another OS, a seccomp filter, Miri, loom) the mode
//! stays `FENCED`, at one relaxed load per publish.
//!
//! # Turning the barrier off
//!
//! The system call interrupts every CPU running a thread of the process,
//! isolated cores included. The `no-membarrier` cargo feature (of
//! `asyncband`, forwarded here, so any crate in the build can enable it) or
//! `ASYNCBAND_MEMBARRIER=off` (any ASCII case) turns it off, as if the kernel
//! lacked it. The variable is read once, when the first single-endpoint
//! channel is made (or at [`membarrier_in_use`]), which also registers the
//! process for the barrier (milliseconds, never in a send or a receive).
//! [`membarrier_calls`] counts the system calls.

use self::membarrier::Membarrier;
use crate::sync::{AtomicUsize, Ordering, SeqCst, UnsafeCell};

const PLAIN: usize = 0;
const REQUESTED: usize = 1;
const FENCED: usize = 2;

/// Fenced publishes in a row with nobody waiting before the publisher goes
/// back to plain stores: about what one `membarrier` costs.
pub const PLAIN_AFTER: u32 = 1024;

/// Fenced publishes of a new fence, with nobody waiting, before it goes plain.
const FENCED_AT_FIRST: u32 = 64;

/// The longest stretch of fenced publishes [`Mode`] doubles up to.
const MAX_FENCED_STRETCH: u32 = 1 << 20;

/// One single endpoint's mode, `PLAIN`, `REQUESTED` or `FENCED` (module
/// docs), shared by its waiters and its publisher.
#[derive(Debug)]
pub(crate) struct Mode {
    mode: AtomicUsize,
}

/// The publisher's own count of its fenced stretches.
#[derive(Debug)]
struct Stretch {
    /// Fenced publishes with nobody waiting left before plain stores.
    left: u32,
    /// The length of a stretch; starts at [`PLAIN_AFTER`].
    length: u32,
    /// The position it last went plain at.
    plain_at: u64,
}

impl Stretch {
    /// A new publisher's count, its fence `FENCED`.
    fn new() -> Self {
        Self {
            left: FENCED_AT_FIRST,
            length: PLAIN_AFTER,
            plain_at: 0,
        }
    }
}

impl Mode {
    /// A fence that starts `FENCED`; decides about the barrier ([`Fence::new`]).
    fn new() -> Self {
        membarrier::process();
        Self {
            mode: AtomicUsize::new(FENCED),
        }
    }

    /// [`Fence::fenced`]; acknowledges a waiter's request, out of line.
    #[inline]
    fn fenced(&self, own: &mut Stretch, position: u64) -> bool {
        // ORDERING: Relaxed; the publisher reads a word only waiters write
        // (to `REQUESTED`), and a stale `PLAIN` is covered by the system call
        // of the waiter that wrote it.
        let mode = self.mode.load(Ordering::Relaxed);
        // Plain first: the state while nobody waits.
        if mode == PLAIN {
            return false;
        }
        mode == FENCED || self.acknowledge(own, position)
    }

    /// Sizes the next fenced stretch and acknowledges. Going plain is a
    /// ski-rental bet: a `membarrier` costs about [`PLAIN_AFTER`] fenced
    /// publishes, so a request after fewer plain publishes than the last
    /// stretch lost it and doubles the next stretch (up to
    /// [`MAX_FENCED_STRETCH`]); a later one resets it.
    #[cold]
    fn acknowledge(&self, own: &mut Stretch, position: u64) -> bool {
        let plain = position.wrapping_sub(own.plain_at);
        own.length = if plain < u64::from(own.length) {
            (own.length * 2).min(MAX_FENCED_STRETCH)
        } else {
            PLAIN_AFTER
        };
        own.left = own.length;
        // SeqCst: whoever reads it sees every earlier publish.
        self.mode.store_sc(FENCED);
        true
    }

    /// [`Fence::fenced_publish`], asking `barrier()` only when a stretch
    /// runs out.
    #[inline]
    fn fenced_publish_through<'b>(
        &self,
        own: &mut Stretch,
        barrier: impl FnOnce() -> &'b Membarrier,
        waiting: impl Fn() -> bool,
        position: impl FnOnce() -> u64,
    ) {
        // ORDERING: Relaxed; only the publisher itself moves the mode away
        // from `FENCED`, so its own view of that is current.
        if self.mode.load(Ordering::Relaxed) != FENCED {
            return;
        }
        if waiting() {
            own.left = own.length;
        } else {
            own.left -= 1;
            if own.left == 0 {
                self.go_plain(own, barrier(), waiting, position());
            }
        }
    }

    /// Back to plain stores, if `barrier` is usable: a stretch ran out.
    #[cold]
    #[inline(never)]
    fn go_plain(
        &self,
        own: &mut Stretch,
        barrier: &Membarrier,
        waiting: impl Fn() -> bool,
        position: u64,
    ) {
        own.left = own.length;
        own.plain_at = position;
        if !barrier.usable {
            return;
        }
        // SeqCst, then the flag: the publisher's half of the race with a
        // waiter's flag store and mode load.
        self.mode.store_sc(PLAIN);
        if waiting() {
            self.mode.store_sc(FENCED);
        }
    }

    /// [`Fence::before_wait`], through `barrier()`, the one that let this
    /// fence go plain.
    fn before_wait_through<'b>(&self, barrier: impl FnOnce() -> &'b Membarrier) {
        let mode = self.mode.load_sc();
        if mode == PLAIN {
            // ORDERING: Relaxed; the system call below orders it.
            let _ =
                self.mode
                    .compare_exchange(PLAIN, REQUESTED, Ordering::Relaxed, Ordering::Relaxed);
        }
        if mode != FENCED {
            barrier().call();
        }
    }
}

/// How a single endpoint (a single producer's tail, a single consumer's
/// head) publishes its index, and how one waits on it.
pub trait Fence: std::fmt::Debug + Send + Sync + 'static {
    /// A new endpoint's fence; makes the process's barrier decision (module docs).
    #[doc(hidden)]
    fn new() -> Self;

    /// Whether the publish of `position` (the index after it) must be a
    /// `SeqCst` store.
    ///
    /// # Safety
    ///
    /// The caller is the publisher: the single producer (or the holder of
    /// its latch) or the single consumer with its cursor.
    #[doc(hidden)]
    unsafe fn fenced(&self, position: u64) -> bool;

    /// After a publish: counts it, and goes back to plain stores once a
    /// stretch of fenced publishes saw `waiting()` (the other side's flag)
    /// false; `position()` reads the publisher's index, only then.
    ///
    /// # Safety
    ///
    /// As for [`Fence::fenced`].
    #[doc(hidden)]
    unsafe fn fenced_publish(&self, waiting: impl Fn() -> bool, position: impl FnOnce() -> u64);

    /// A waiter, between raising its flag and re-reading the index: the
    /// publisher sees the flag or the waiter sees the publish.
    #[doc(hidden)]
    fn before_wait(&self);

    /// A closer of the other side, between raising the close flag and
    /// reading the index: as [`Fence::before_wait`], for the close flag.
    #[doc(hidden)]
    fn before_close(&self) {
        self.before_wait();
    }
}

/// A park channel's fence: the shared [`Mode`] and the publisher's
/// [`Stretch`].
#[derive(Debug)]
pub struct SingleFence {
    mode: Mode,
    /// # Safety
    ///
    /// Touched only by the publisher ([`Fence::fenced`]).
    own: UnsafeCell<Stretch>,
}

// SAFETY: the mode is atomic, and `own` is touched only by the publisher,
// one thread at a time (the `Fence` contract).
unsafe impl Sync for SingleFence {}

impl Fence for SingleFence {
    fn new() -> Self {
        Self {
            mode: Mode::new(),
            own: UnsafeCell::new(Stretch::new()),
        }
    }

    #[inline]
    unsafe fn fenced(&self, position: u64) -> bool {
        // SAFETY: only the publisher (the caller) touches `own`.
        self.own
            .with_mut(|own| self.mode.fenced(unsafe { &mut *own }, position))
    }

    #[inline]
    unsafe fn fenced_publish(&self, waiting: impl Fn() -> bool, position: impl FnOnce() -> u64) {
        self.own.with_mut(|own| {
            // SAFETY: as in `fenced`.
            let own = unsafe { &mut *own };
            self.mode
                .fenced_publish_through(own, membarrier::process, waiting, position);
        });
    }

    fn before_wait(&self) {
        self.mode.before_wait_through(membarrier::process);
    }
}

/// A spin channel's fence: nobody waits, so publishes are plain, except
/// where the barrier is unusable: a close from the other side then needs
/// `SeqCst` publishes (the `Boundary` argument).
#[derive(Debug)]
pub struct SpinFence {
    /// Whether every publish is `SeqCst` (no usable barrier).
    fenced: bool,
}

impl Fence for SpinFence {
    fn new() -> Self {
        Self {
            fenced: !membarrier::process().usable,
        }
    }

    #[inline]
    unsafe fn fenced(&self, _position: u64) -> bool {
        self.fenced
    }

    #[inline]
    unsafe fn fenced_publish(&self, _waiting: impl Fn() -> bool, _position: impl FnOnce() -> u64) {}

    fn before_wait(&self) {
        // Nobody waits for a spin channel's publishes: a spin select's
        // polls register with no one and look again at once.
    }

    fn before_close(&self) {
        // A spin channel's one system call.
        if !self.fenced {
            membarrier::process().call();
        }
    }
}

/// Whether the process has decided about `membarrier`. Not public API: a
/// test checks that making a channel decides.
///
/// # Examples
///
/// ```
/// let _ = asyncband_core::wait::membarrier_in_use();
/// assert!(asyncband_core::wait::membarrier_decided());
/// ```
#[doc(hidden)]
#[must_use]
pub fn membarrier_decided() -> bool {
    membarrier::PROCESS.get().is_some()
}

/// How many `membarrier` system calls this process has made for
/// asyncband's fences. Not public API: benchmarks report it per message.
///
/// # Examples
///
/// ```
/// let before = asyncband_core::wait::membarrier_calls();
/// assert!(asyncband_core::wait::membarrier_calls() >= before);
/// ```
#[doc(hidden)]
#[must_use]
pub fn membarrier_calls() -> u64 {
    membarrier::PROCESS
        .get()
        .map_or(0, membarrier::Membarrier::calls)
}

/// Whether this process's fences use `membarrier` (module docs); decides
/// now if nothing has yet. Not public API: benchmarks report it.
///
/// # Examples
///
/// ```
/// if cfg!(not(target_os = "linux")) {
///     assert!(!asyncband_core::wait::membarrier_in_use());
/// }
/// ```
#[doc(hidden)]
#[must_use]
pub fn membarrier_in_use() -> bool {
    membarrier::process().usable
}

/// `membarrier(2)`, where the kernel offers it and it is not turned off.
mod membarrier {
    use std::ffi::OsStr;
    use std::sync::OnceLock;
    // Not `crate::sync`: a statistic outside every protocol, never touched
    // under loom (no fence goes plain there, so none calls the barrier).
    use std::sync::atomic::{AtomicU64, Ordering};

    /// The environment variable that turns the barrier off (module docs).
    const ENV: &str = "ASYNCBAND_MEMBARRIER";

    /// Whether the `no-membarrier` `feature` or [`ENV`]'s value `env` turns
    /// the barrier off.
    pub(super) fn turned_off(feature: bool, env: Option<&OsStr>) -> bool {
        feature || env.is_some_and(|value| value.eq_ignore_ascii_case("off"))
    }

    /// One decision whether fences may use the barrier, and the calls made
    /// through it: the [`process`]'s, or a test's.
    #[derive(Debug)]
    pub(super) struct Membarrier {
        /// Registered and not turned off; fences go plain, and so call,
        /// only through a usable one.
        pub(super) usable: bool,
        /// System calls made through [`Membarrier::call`].
        calls: AtomicU64,
    }

    impl Membarrier {
        /// Usable unless `turned_off` (the kernel not asked) or unregistered.
        pub(super) fn probe(turned_off: bool) -> Self {
            Self {
                usable: !turned_off && register(),
                calls: AtomicU64::new(0),
            }
        }

        /// The system calls made through this one so far.
        pub(super) fn calls(&self) -> u64 {
            // ORDERING: Relaxed; a count for a report, ordered with nothing.
            self.calls.load(Ordering::Relaxed)
        }

        /// A full barrier on every running thread of the process.
        pub(super) fn call(&self) {
            // ORDERING: Relaxed; a count, ordered with nothing.
            self.calls.fetch_add(1, Ordering::Relaxed);
            barrier();
        }
    }

    /// The process's decision, made once.
    pub(super) static PROCESS: OnceLock<Membarrier> = OnceLock::new();

    /// The process's decision; makes it, reading [`ENV`], if nobody has.
    pub(super) fn process() -> &'static Membarrier {
        PROCESS.get_or_init(|| {
            let env = std::env::var_os(ENV);
            Membarrier::probe(turned_off(cfg!(feature = "no-membarrier"), env.as_deref()))
        })
    }

    /// Whether the private expedited command is offered; registers the
    /// process for it if so.
    #[cfg(all(target_os = "linux", not(asyncband_loom), not(miri)))]
    fn register() -> bool {
        // SAFETY: a system call with integer arguments, touching no memory.
        let query = unsafe { libc::syscall(libc::SYS_membarrier, QUERY, 0, 0) };
        if query < 0 || query & i64::from(PRIVATE_EXPEDITED) == 0 {
            return false;
        }
        // SAFETY: as above.
        unsafe { libc::syscall(libc::SYS_membarrier, REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 }
    }

    #[cfg(not(all(target_os = "linux", not(asyncband_loom), not(miri))))]
    fn register() -> bool {
        false
    }

    /// A full barrier on every running thread of the process.
    #[cfg(all(target_os = "linux", not(asyncband_loom), not(miri)))]
    fn barrier() {
        // SAFETY: a system call with integer arguments.
        let done = unsafe { libc::syscall(libc::SYS_membarrier, PRIVATE_EXPEDITED, 0, 0) };
        // Only a usable (registered) one calls: no documented error is left.
        assert_eq!(done, 0, "membarrier failed after registration");
    }

    #[cfg(not(all(target_os = "linux", not(asyncband_loom), not(miri))))]
    fn barrier() {
        unreachable!("the mode never leaves FENCED without membarrier")
    }

    #[cfg(all(target_os = "linux", not(asyncband_loom), not(miri)))]
    const QUERY: libc::c_int = 0;
    #[cfg(all(target_os = "linux", not(asyncband_loom), not(miri)))]
    const PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    #[cfg(all(target_os = "linux", not(asyncband_loom), not(miri)))]
    const REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests {
    use super::*;

    /// A fence and its publisher's count.
    struct Publisher {
        fence: Mode,
        own: Stretch,
    }

    impl Publisher {
        fn new() -> Self {
            Self {
                fence: Mode::new(),
                own: Stretch::new(),
            }
        }
    }

    /// Publishes at `positions` as a storage does (asks `fenced`, then
    /// counts a fenced publish); whether each one was fenced.
    fn publish(
        publisher: &mut Publisher,
        positions: std::ops::Range<u64>,
        waiting: bool,
    ) -> Vec<bool> {
        publish_through(publisher, membarrier::process(), positions, waiting)
    }

    /// [`publish`], deciding whether the fence may go plain with `barrier`.
    fn publish_through(
        publisher: &mut Publisher,
        barrier: &Membarrier,
        positions: std::ops::Range<u64>,
        waiting: bool,
    ) -> Vec<bool> {
        let Publisher { fence, own } = publisher;
        positions
            .map(|position| {
                let fenced = fence.fenced(own, position);
                if fenced {
                    fence.fenced_publish_through(own, || barrier, || waiting, || position);
                }
                fenced
            })
            .collect()
    }

    /// A fence that has published plainly for longer than any stretch, as
    /// a channel nobody has waited on; the position to publish next.
    fn plain_for_a_while() -> (Publisher, u64) {
        let mut fence = Publisher::new();
        let start = 4 * u64::from(PLAIN_AFTER);
        let published = publish(&mut fence, 0..start, false);
        assert!(
            published[FENCED_AT_FIRST as usize..]
                .iter()
                .all(|&f| f != membarrier::process().usable)
        );
        (fence, start)
    }

    #[test]
    fn a_new_fence_publishes_fenced_at_first_and_then_plain_with_nobody_waiting() {
        let mut fence = Publisher::new();
        // A waiter on a new channel needs no system call: the fence is
        // already fenced.
        assert_eq!(fence.fence.mode.load_sc(), FENCED);
        fence.fence.before_wait_through(membarrier::process);
        assert_eq!(fence.fence.mode.load_sc(), FENCED);
        let first = u64::from(FENCED_AT_FIRST);
        let published = publish(&mut fence, 0..first + 1, false);
        assert!(published[..FENCED_AT_FIRST as usize].iter().all(|&f| f));
        assert_eq!(
            published[FENCED_AT_FIRST as usize],
            !membarrier::process().usable
        );
    }

    #[test]
    fn a_fenced_stretch_with_nobody_waiting_goes_plain_after_plain_after_publishes() {
        let (mut fence, at) = plain_for_a_while();
        let stretch = u64::from(PLAIN_AFTER);
        fence.fence.before_wait_through(membarrier::process);
        let after = publish(&mut fence, at..at + stretch + 5, false);
        assert!(after[..PLAIN_AFTER as usize].iter().all(|&f| f));
        assert!(
            after[PLAIN_AFTER as usize..]
                .iter()
                .all(|&f| f != membarrier::process().usable)
        );
    }

    #[test]
    fn a_waiter_seen_while_fenced_restarts_the_stretch() {
        let (mut fence, mut at) = plain_for_a_while();
        let stretch = u64::from(PLAIN_AFTER);
        fence.fence.before_wait_through(membarrier::process);
        assert!(
            publish(&mut fence, at..at + stretch / 2, false)
                .iter()
                .all(|&f| f)
        );
        at += stretch / 2;
        // One publish sees a waiter: the count starts over.
        assert_eq!(publish(&mut fence, at..at + 1, true), [true]);
        at += 1;
        let rest = publish(&mut fence, at..at + stretch, false);
        assert!(
            rest.iter().all(|&f| f),
            "{PLAIN_AFTER} clean publishes since the waiter"
        );
        at += stretch;
        assert_eq!(
            publish(&mut fence, at..at + 1, false),
            [!membarrier::process().usable]
        );
    }

    #[test]
    fn a_waiter_soon_after_going_plain_doubles_the_next_stretch_and_a_late_one_resets_it() {
        let (mut fence, mut at) = plain_for_a_while();
        if !membarrier::process().usable {
            return;
        }
        let stretch = u64::from(PLAIN_AFTER);
        fence.fence.before_wait_through(membarrier::process);
        // PLAIN_AFTER fenced publishes, then plain.
        assert_eq!(
            publish(&mut fence, at..at + stretch + 1, false).last(),
            Some(&false)
        );
        at += stretch + 1;
        // A waiter after one plain publish: the bet lost, twice as long.
        fence.fence.before_wait_through(membarrier::process);
        let doubled = publish(&mut fence, at..at + 2 * stretch + 1, false);
        assert!(doubled[..2 * PLAIN_AFTER as usize].iter().all(|&f| f));
        assert!(!doubled[2 * PLAIN_AFTER as usize]);
        at += 2 * stretch + 1;
        // Plain for longer than that stretch before the next waiter: back to
        // PLAIN_AFTER.
        assert!(
            publish(&mut fence, at..at + 3 * stretch, false)
                .iter()
                .all(|&f| !f)
        );
        at += 3 * stretch;
        fence.fence.before_wait_through(membarrier::process);
        let reset = publish(&mut fence, at..at + stretch + 1, false);
        assert!(reset[..PLAIN_AFTER as usize].iter().all(|&f| f));
        assert!(!reset[PLAIN_AFTER as usize]);
    }

    #[test]
    fn the_barrier_is_turned_off_by_the_feature_or_by_off_in_any_case() {
        use std::ffi::OsStr;

        let off = |feature, env: Option<&str>| membarrier::turned_off(feature, env.map(OsStr::new));
        assert!(off(true, None));
        assert!(off(true, Some("on")));
        assert!(off(false, Some("off")));
        assert!(off(false, Some("OFF")));
        assert!(!off(false, None));
        assert!(!off(false, Some("")));
        assert!(!off(false, Some("on")));
        assert!(!off(false, Some("0")));
    }

    #[test]
    fn with_the_barrier_turned_off_a_fence_never_goes_plain_and_never_calls_it() {
        let off = Membarrier::probe(true);
        assert!(!off.usable);
        let mut fence = Publisher::new();
        let stretch = 4 * u64::from(PLAIN_AFTER);
        let mut at = 0;
        for _ in 0..4 {
            // A long quiet stretch, a waiter, a publish that sees it.
            assert!(
                publish_through(&mut fence, &off, at..at + stretch, false)
                    .iter()
                    .all(|&f| f)
            );
            at += stretch;
            fence.fence.before_wait_through(|| &off);
            assert_eq!(fence.fence.mode.load_sc(), FENCED);
            assert_eq!(publish_through(&mut fence, &off, at..at + 1, true), [true]);
            at += 1;
        }
        assert!(!fence.fence.is_plain());
        assert_eq!(off.calls(), 0);
    }

    #[test]
    fn a_waiter_on_a_plain_fence_calls_the_barrier_once_until_it_is_acknowledged() {
        let on = Membarrier::probe(false);
        if !on.usable {
            return;
        }
        let mut fence = Publisher::new();
        let first = u64::from(FENCED_AT_FIRST);
        publish_through(&mut fence, &on, 0..first, false);
        assert!(fence.fence.is_plain());
        fence.fence.before_wait_through(|| &on);
        assert_eq!(on.calls(), 1);
        // Not yet acknowledged: a second waiter calls too.
        fence.fence.before_wait_through(|| &on);
        assert_eq!(on.calls(), 2);
        assert_eq!(
            publish_through(&mut fence, &on, first..first + 1, true),
            [true]
        );
        fence.fence.before_wait_through(|| &on);
        assert_eq!(on.calls(), 2, "acknowledged: no call");
    }

    #[cfg(feature = "no-membarrier")]
    #[test]
    fn the_feature_turns_the_process_barrier_off() {
        assert!(!membarrier_in_use());
        let fence = Mode::plain_for_tests();
        assert!(!fence.is_plain());
        fence.before_wait_through(membarrier::process);
        assert_eq!(membarrier_calls(), 0);
    }
}

#[cfg(all(test, not(asyncband_loom)))]
impl Mode {
    /// A fence that publishes plainly (where `membarrier` is available), as
    /// one whose channel has streamed for a while with nobody waiting.
    pub(crate) fn plain_for_tests() -> Self {
        let fence = Self::new();
        let mut own = Stretch::new();
        for position in 1..=u64::from(FENCED_AT_FIRST) {
            if fence.fenced(&mut own, position) {
                fence.fenced_publish_through(&mut own, membarrier::process, || false, || position);
            }
        }
        assert_eq!(fence.is_plain(), membarrier::process().usable);
        fence
    }

    /// Whether the fence is `PLAIN`: no waiter has asked it to fence since.
    pub(crate) fn is_plain(&self) -> bool {
        self.mode.load_sc() == PLAIN
    }
}

#[cfg(all(test, not(asyncband_loom)))]
impl SingleFence {
    /// A park fence that publishes plainly (where `membarrier` is
    /// available), as one whose channel has streamed a while unwatched.
    pub(crate) fn plain_for_tests() -> Self {
        Self {
            mode: Mode::plain_for_tests(),
            own: UnsafeCell::new(Stretch::new()),
        }
    }

    /// Whether no waiter has asked it to fence since it went plain.
    pub(crate) fn is_plain(&self) -> bool {
        self.mode.is_plain()
    }
}
