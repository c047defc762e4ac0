//! How a single endpoint publishes its progress: plain stores while nobody
//! waits on it, `SeqCst` stores while somebody does.
//!
//! # The problem
//!
//! A single producer (or a single consumer, freeing slots) publishes with a
//! store of its index, then loads the waiters' flag. A waiter stores its flag,
//! then re-reads the index. That is the store-buffer pattern (see
//! [`crate::wait`]): unless both sides put a full barrier between their store
//! and their load, both loads can miss. On x86 the publisher's barrier is an
//! `xchg` whose cost is not the instruction but the wait for its earlier
//! stores to reach the cache, a cross-core round trip whenever the other side
//! touched those lines. Paying it per message makes a single-producer channel
//! several times slower than it need be.
//!
//! # The asymmetric fence
//!
//! Linux's `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` makes every
//! running thread of the process execute a full barrier before it returns.
//! So a waiter that stores its flag and then calls it knows that any publish
//! which the publisher ordered (in program order, pinned by a compiler fence)
//! before its flag load is visible to the waiter's re-check, or that the
//! flag load comes after the barrier and sees the flag. The publisher pays
//! nothing. The waiter pays a system call, microseconds, so a [`Fence`] only
//! asks for it once per stretch of waiting:
//!
//! | mode | publisher stores | a waiter, before re-checking |
//! | --- | --- | --- |
//! | `PLAIN` | release store, compiler fence | moves it to `REQUESTED`, calls `membarrier` |
//! | `REQUESTED` | (acknowledges on its next publish) | calls `membarrier` |
//! | `FENCED` | `SeqCst` store | nothing: the store-buffer argument holds |
//!
//! - A new fence starts `FENCED`, for its first [`FENCED_AT_FIRST`]
//!   publishes: a reply channel, whose receiver waits before the only send,
//!   or any short exchange never makes the system call, which costs
//!   microseconds whenever another thread of the process is running (an
//!   inter-processor interrupt per CPU that runs one). A channel that
//!   streams hardly notices so few fenced publishes; a whole [`PLAIN_AFTER`]
//!   of them at the start made the `threads` bench's SPSC capacity-1024
//!   runs settle into their slow mode twice as often.
//! - The publisher reads the mode at the start of each publish. On
//!   `REQUESTED` it stores `FENCED` (a `SeqCst` store, which also makes every
//!   earlier publish visible to whoever reads `FENCED`) and publishes fenced
//!   from then on. A waiter may only skip the system call on `FENCED`, once
//!   the publisher itself has acknowledged it; a publish that started before
//!   the acknowledgement was covered by the system call of the waiter that
//!   requested it.
//! - After a stretch of fenced publishes that found nobody waiting (at
//!   first [`PLAIN_AFTER`]; doubled each time the next waiter came before
//!   the plain stretch paid for its system call, see `Fence::acknowledge`), the
//!   publisher stores `PLAIN` and then loads the waiters' flag; if a waiter is
//!   there it stores `FENCED` again before its next publish. With the waiter
//!   storing its flag and then loading the mode, one of the two sees the
//!   other (both `SeqCst`): a waiter that saw `FENCED` is seen by the publisher
//!   before it publishes plainly.
//! - "Found nobody waiting" is asked after the publish has woken whoever
//!   waited for it, so a waiter the publish itself served does not count:
//!   a stretch runs out even while waiters come often. The next waiter then
//!   comes right after the switch to `PLAIN`, the bet counts as lost and
//!   the stretch doubles, so such a channel is soon fenced for all but a
//!   few publishes in 2^20. Counting served waiters instead was measured:
//!   it kept streaming SPSC channels fenced for good, where each `SeqCst`
//!   store waits for the other core, and the `threads` bench at capacity
//!   1024 ran about twice as slow.
//!
//! Where `membarrier` is not available (another OS, a seccomp filter,
//! Miri, loom) the mode is `FENCED` forever and this module costs one
//! relaxed load per publish.

use crate::sync::{AtomicUsize, Ordering, SeqCst, UnsafeCell};

const PLAIN: usize = 0;
const REQUESTED: usize = 1;
const FENCED: usize = 2;

/// Fenced publishes in a row that found nobody waiting before the publisher
/// goes back to plain stores, to begin with. One `membarrier` costs about as
/// much as this many fenced publishes.
pub const PLAIN_AFTER: u32 = 1024;

/// Fenced publishes a new fence makes, with nobody waiting, before it
/// first goes plain (module docs).
const FENCED_AT_FIRST: u32 = 64;

/// The longest stretch of fenced publishes [`Fence`] doubles up to.
const MAX_FENCED_STRETCH: u32 = 1 << 20;

/// The publication mode of one single endpoint.
#[derive(Debug)]
pub(crate) struct Fence {
    /// `PLAIN`, `REQUESTED` or `FENCED` (module docs).
    mode: AtomicUsize,
    /// Fenced publishes still to go, with nobody waiting, before the
    /// publisher goes back to plain stores; reset to `stretch` whenever it
    /// sees a waiter.
    ///
    /// # Safety
    ///
    /// Touched only by the single publisher.
    left: UnsafeCell<u32>,
    /// Publisher-owned (as `left`): how many fenced publishes with nobody
    /// waiting it takes to go plain; starts at [`PLAIN_AFTER`].
    stretch: UnsafeCell<u32>,
    /// Publisher-owned (as `left`): the position it last went plain at.
    plain_at: UnsafeCell<u64>,
}

impl Fence {
    pub(crate) fn new() -> Self {
        Self {
            mode: AtomicUsize::new(FENCED),
            left: UnsafeCell::new(FENCED_AT_FIRST),
            stretch: UnsafeCell::new(PLAIN_AFTER),
            plain_at: UnsafeCell::new(0),
        }
    }

    /// The publisher, before publishing `position` (its index after this
    /// publish): whether this publish must be a `SeqCst` store.
    /// Acknowledges a waiter's request.
    ///
    /// `FENCED` costs a compare here and no call; only the acknowledgement
    /// is out of line.
    ///
    /// # Safety
    ///
    /// Single publisher.
    #[inline]
    pub(crate) unsafe fn fenced(&self, position: u64) -> bool {
        // ORDERING: Relaxed; the publisher reads a word only waiters write
        // (to `REQUESTED`), and a stale `PLAIN` is covered by the system call
        // of the waiter that wrote it.
        match self.mode.load(Ordering::Relaxed) {
            PLAIN => false,
            FENCED => true,
            // SAFETY: forwarded from the caller.
            _ => unsafe { self.acknowledge(position) },
        }
    }

    /// The publisher was asked to fence: sizes the next fenced stretch and
    /// acknowledges.
    ///
    /// Going plain is a bet (ski rental): each plain publish saves what a
    /// fenced one costs, and the next waiter pays a `membarrier`, worth
    /// about [`PLAIN_AFTER`] of them. When a request comes after fewer plain
    /// publishes than the stretch of fenced ones that preceded it, the bet
    /// lost, so the next stretch is twice as long (up to
    /// [`MAX_FENCED_STRETCH`]); when it comes later, the stretch goes back to
    /// [`PLAIN_AFTER`].
    ///
    /// # Safety
    ///
    /// Single publisher.
    #[cold]
    unsafe fn acknowledge(&self, position: u64) -> bool {
        // SAFETY: only the single publisher touches `plain_at`, `stretch`
        // and `left`.
        unsafe {
            let plain = self.plain_at.with(|at| position.wrapping_sub(*at));
            let stretch = self.stretch.with_mut(|stretch| {
                *stretch = if plain < u64::from(*stretch) {
                    (*stretch * 2).min(MAX_FENCED_STRETCH)
                } else {
                    PLAIN_AFTER
                };
                *stretch
            });
            self.left.with_mut(|left| *left = stretch);
        }
        // SeqCst: the acknowledgement; waiters that read it see every
        // earlier publish (module docs).
        self.mode.store_sc(FENCED);
        true
    }

    /// The publisher, after a fenced publish: counts it, and after the
    /// current stretch (at first [`PLAIN_AFTER`]) in a row with `waiting()`
    /// false, goes back to plain stores (unless a waiter turns up
    /// meanwhile). `position()` reads the publisher's index, only then.
    ///
    /// # Safety
    ///
    /// Single publisher.
    #[inline]
    pub(crate) unsafe fn fenced_publish(
        &self,
        waiting: impl Fn() -> bool,
        position: impl FnOnce() -> u64,
    ) {
        // ORDERING: Relaxed; only the publisher itself moves the mode away
        // from `FENCED`, so its own view of that is current.
        if self.mode.load(Ordering::Relaxed) != FENCED {
            return;
        }
        // SAFETY: only the single publisher (the caller) touches `left` and
        // `stretch`.
        let expired = unsafe {
            if waiting() {
                let stretch = self.stretch.with(|stretch| *stretch);
                self.left.with_mut(|left| *left = stretch);
                false
            } else {
                self.left.with_mut(|left| {
                    *left -= 1;
                    *left == 0
                })
            }
        };
        if expired {
            // SAFETY: forwarded from the caller.
            unsafe { self.go_plain(waiting, position()) };
        }
    }

    /// A fenced stretch ran out with nobody waiting: back to plain stores.
    ///
    /// # Safety
    ///
    /// Single publisher.
    #[cold]
    unsafe fn go_plain(&self, waiting: impl Fn() -> bool, position: u64) {
        // SAFETY: only the single publisher touches `left`, `stretch` and
        // `plain_at`.
        unsafe {
            let stretch = self.stretch.with(|stretch| *stretch);
            self.left.with_mut(|left| *left = stretch);
            self.plain_at.with_mut(|at| *at = position);
        }
        if !membarrier::available() {
            return;
        }
        // SeqCst, then the flag: the publisher's half of the pattern with a
        // waiter that stores its flag, then loads the mode.
        self.mode.store_sc(PLAIN);
        if waiting() {
            self.mode.store_sc(FENCED);
        }
    }

    /// A waiter, after raising its flag and before re-checking the condition:
    /// makes sure the publisher sees the flag or the waiter sees the publish.
    pub(crate) fn before_wait(&self) {
        match self.mode.load_sc() {
            FENCED => {}
            mode => {
                if mode == PLAIN {
                    // ORDERING: Relaxed; the system call below orders it.
                    let _ = self.mode.compare_exchange(
                        PLAIN,
                        REQUESTED,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                }
                membarrier::barrier();
            }
        }
    }
}

#[cfg(all(test, not(asyncband_loom)))]
impl Fence {
    /// A fence that publishes plainly (where `membarrier` is available), as
    /// one whose channel has streamed for a while with nobody waiting.
    pub(crate) fn plain_for_tests() -> Self {
        let fence = Self::new();
        for position in 1..=u64::from(FENCED_AT_FIRST) {
            // SAFETY: the caller of this helper is the fence's only user.
            unsafe {
                if fence.fenced(position) {
                    fence.fenced_publish(|| false, || position);
                }
            }
        }
        assert_eq!(fence.is_plain(), membarrier::available());
        fence
    }

    /// Whether the fence is `PLAIN`: no waiter has asked it to fence since.
    pub(crate) fn is_plain(&self) -> bool {
        self.mode.load_sc() == PLAIN
    }
}

/// `membarrier(2)`, where the kernel offers it.
mod membarrier {
    /// Whether the private expedited command is registered and usable.
    #[cfg(all(target_os = "linux", not(asyncband_loom), not(miri)))]
    pub(super) fn available() -> bool {
        use std::sync::OnceLock;

        static AVAILABLE: OnceLock<bool> = OnceLock::new();
        *AVAILABLE.get_or_init(|| {
            // SAFETY: a system call with integer arguments; it reads and
            // writes no memory of ours.
            let query = unsafe { libc::syscall(libc::SYS_membarrier, QUERY, 0, 0) };
            if query < 0 || query & i64::from(PRIVATE_EXPEDITED) == 0 {
                return false;
            }
            // SAFETY: as above.
            unsafe { libc::syscall(libc::SYS_membarrier, REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 }
        })
    }

    #[cfg(not(all(target_os = "linux", not(asyncband_loom), not(miri))))]
    pub(super) fn available() -> bool {
        false
    }

    /// A full barrier on every running thread of the process.
    #[cfg(all(target_os = "linux", not(asyncband_loom), not(miri)))]
    pub(super) fn barrier() {
        // SAFETY: a system call with integer arguments.
        let done = unsafe { libc::syscall(libc::SYS_membarrier, PRIVATE_EXPEDITED, 0, 0) };
        // Registration succeeded, so the command cannot fail (the kernel
        // documents no other error for it).
        assert_eq!(done, 0, "membarrier failed after registration");
    }

    #[cfg(not(all(target_os = "linux", not(asyncband_loom), not(miri))))]
    pub(super) fn barrier() {
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

    /// Publishes at `positions` as a storage does (asks `fenced`, then
    /// counts a fenced publish); whether each one was fenced.
    fn publish(fence: &Fence, positions: std::ops::Range<u64>, waiting: bool) -> Vec<bool> {
        positions
            .map(|position| {
                // SAFETY: this test is the only publisher.
                unsafe {
                    let fenced = fence.fenced(position);
                    if fenced {
                        fence.fenced_publish(|| waiting, || position);
                    }
                    fenced
                }
            })
            .collect()
    }

    /// A fence that has published plainly for longer than any stretch, as
    /// a channel nobody has waited on; the position to publish next.
    fn plain_for_a_while() -> (Fence, u64) {
        let fence = Fence::new();
        let start = 4 * u64::from(PLAIN_AFTER);
        let published = publish(&fence, 0..start, false);
        assert!(
            published[FENCED_AT_FIRST as usize..]
                .iter()
                .all(|&f| f != membarrier::available())
        );
        (fence, start)
    }

    #[test]
    fn a_new_fence_publishes_fenced_at_first_and_then_plain_with_nobody_waiting() {
        let fence = Fence::new();
        // A waiter on a new channel needs no system call: the fence is
        // already fenced.
        assert_eq!(fence.mode.load_sc(), FENCED);
        fence.before_wait();
        assert_eq!(fence.mode.load_sc(), FENCED);
        let first = u64::from(FENCED_AT_FIRST);
        let published = publish(&fence, 0..first + 1, false);
        assert!(published[..FENCED_AT_FIRST as usize].iter().all(|&f| f));
        assert_eq!(
            published[FENCED_AT_FIRST as usize],
            !membarrier::available()
        );
    }

    #[test]
    fn a_fenced_stretch_with_nobody_waiting_goes_plain_after_plain_after_publishes() {
        let (fence, at) = plain_for_a_while();
        let stretch = u64::from(PLAIN_AFTER);
        fence.before_wait();
        let after = publish(&fence, at..at + stretch + 5, false);
        assert!(after[..PLAIN_AFTER as usize].iter().all(|&f| f));
        assert!(
            after[PLAIN_AFTER as usize..]
                .iter()
                .all(|&f| f != membarrier::available())
        );
    }

    #[test]
    fn a_waiter_seen_while_fenced_restarts_the_stretch() {
        let (fence, mut at) = plain_for_a_while();
        let stretch = u64::from(PLAIN_AFTER);
        fence.before_wait();
        assert!(
            publish(&fence, at..at + stretch / 2, false)
                .iter()
                .all(|&f| f)
        );
        at += stretch / 2;
        // One publish sees a waiter: the count starts over.
        assert_eq!(publish(&fence, at..at + 1, true), [true]);
        at += 1;
        let rest = publish(&fence, at..at + stretch, false);
        assert!(
            rest.iter().all(|&f| f),
            "{PLAIN_AFTER} clean publishes since the waiter"
        );
        at += stretch;
        assert_eq!(
            publish(&fence, at..at + 1, false),
            [!membarrier::available()]
        );
    }

    #[test]
    fn a_waiter_soon_after_going_plain_doubles_the_next_stretch_and_a_late_one_resets_it() {
        let (fence, mut at) = plain_for_a_while();
        if !membarrier::available() {
            return;
        }
        let stretch = u64::from(PLAIN_AFTER);
        fence.before_wait();
        // PLAIN_AFTER fenced publishes, then plain.
        assert_eq!(
            publish(&fence, at..at + stretch + 1, false).last(),
            Some(&false)
        );
        at += stretch + 1;
        // A waiter after one plain publish: the bet lost, twice as long.
        fence.before_wait();
        let doubled = publish(&fence, at..at + 2 * stretch + 1, false);
        assert!(doubled[..2 * PLAIN_AFTER as usize].iter().all(|&f| f));
        assert!(!doubled[2 * PLAIN_AFTER as usize]);
        at += 2 * stretch + 1;
        // Plain for longer than that stretch before the next waiter: back to
        // PLAIN_AFTER.
        assert!(
            publish(&fence, at..at + 3 * stretch, false)
                .iter()
                .all(|&f| !f)
        );
        at += 3 * stretch;
        fence.before_wait();
        let reset = publish(&fence, at..at + stretch + 1, false);
        assert!(reset[..PLAIN_AFTER as usize].iter().all(|&f| f));
        assert!(!reset[PLAIN_AFTER as usize]);
    }
}
