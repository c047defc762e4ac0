//! A cancel-safe FIFO of waiters for a side with many endpoints: nodes live
//! in the pinned waiting futures (waiting allocates nothing) and form a
//! doubly linked list behind a lock taken only when somebody waits. Wakers
//! run in batches after the lock is released.
//!
//! # Node states
//!
//! | state | `linked` | `got` (units granted of `need`) |
//! | --- | --- | --- |
//! | idle | false | 0 |
//! | waiting | true | `< need` |
//! | granted | false | `> 0` (all of `need`, or part of it after [`Queue::wake_all`]) |
//!
//! Transitions, all under the lock but one:
//!
//! - `register`: idle → waiting (pushed at the back); granted → idle, the
//!   units moving to the caller (without the lock when `handed` is up);
//!   waiting → waiting (waker refreshed).
//! - `grant`: the front node's `got` grows; at `need` it is unlinked
//!   (granted) and woken.
//! - `notify`: as `grant`, and once a node that may not come back (not a
//!   parked thread) is granted, the waiting nodes behind it, up to a parked
//!   one not yet woken so, are woken without units and marked `checked`
//!   until their next `register`, staying queued.
//! - `wake_all`: every waiting node is unlinked (keeping its `got`) and woken.
//! - `cancel`: any state → idle; its units go back to the caller to pass
//!   on, and a parked node still marked `checked` is reported, so that its
//!   notification is passed on too.
//!
//! Whoever unlinks a node with units raises its `handed` flag (release,
//! under the lock) as its last touch; an owner that loads it raised
//! (acquire) takes the units without the lock and lowers it (or the lock
//! holder does, when it takes them).
//!
//! The `waiting` flag mirrors "the list is not empty", stored `SeqCst` under
//! the lock on every change (the store-buffer race of [`crate::wait`]).

use std::fmt;
use std::marker::PhantomPinned;
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::Waker;

use super::{WaitSet, Withdrawn, up_to};
use crate::sync::{AtomicBool, Mutex, MutexGuard, Ordering, SeqCst, UnsafeCell};
use crate::unwind::{Panic, resume};

/// How many wakers are collected before the lock is dropped to run them.
const WAKE_BATCH: usize = 16;

/// The wait queue of a side with many endpoints.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::{Queue, QueueNode, WaitSet};
/// use std::pin::pin;
/// use std::task::Waker;
///
/// let queue = Queue::default();
/// let first = pin!(QueueNode::default());
/// let second = pin!(QueueNode::default());
/// // SAFETY: both nodes are pinned, used only with this queue and cancelled
/// // before they go out of scope.
/// unsafe {
///     assert_eq!(queue.register(first.as_ref(), Waker::noop(), 1, |_| ()), 0);
///     assert_eq!(queue.register(second.as_ref(), Waker::noop(), 1, |_| ()), 0);
/// }
/// // Grant one unit: it goes to the first waiter.
/// let mut units = 1;
/// queue.grant(|want| { let k = want.min(units); units -= k; k }, |_| ());
/// // SAFETY: as above.
/// unsafe {
///     assert_eq!(queue.register(first.as_ref(), Waker::noop(), 1, |_| ()), 1);
///     assert_eq!(queue.cancel(second.as_ref(), |_| ()).units(), 0);
/// }
/// assert!(!queue.is_waiting());
/// ```
#[derive(Default)]
pub struct Queue {
    /// True while the list is not empty; written under the lock with `SeqCst`.
    waiting: AtomicBool,
    list: Mutex<List>,
}

/// The linked list; only touched with the queue's lock held.
#[derive(Default)]
struct List {
    head: Option<NonNull<QueueNode>>,
    tail: Option<NonNull<QueueNode>>,
}

// SAFETY: the raw pointers refer to nodes that are only accessed with the
// lock held; the list itself moves between threads only inside the mutex.
unsafe impl Send for List {}

/// A waiter's place in a [`Queue`], embedded in the waiting future.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::QueueNode;
///
/// let node = QueueNode::default();
/// assert!(format!("{node:?}").contains("QueueNode"));
/// ```
#[derive(Default)]
pub struct QueueNode {
    /// # Safety
    ///
    /// Read and written only with the lock of the queue the node is
    /// registered with (or has been registered with) held.
    inner: UnsafeCell<NodeInner>,
    /// Raised by the party that unlinked the node with units (module docs).
    handed: AtomicBool,
    /// Whether the owner is a parked thread, which always comes back for
    /// what it was handed.
    parked: bool,
    /// Woken without units to look, not registered since (module docs).
    ///
    /// # Safety
    ///
    /// As `inner`.
    checked: UnsafeCell<bool>,
    _pinned: PhantomPinned,
}

#[derive(Default)]
struct NodeInner {
    prev: Option<NonNull<QueueNode>>,
    next: Option<NonNull<QueueNode>>,
    linked: bool,
    need: usize,
    got: usize,
    waker: Option<Waker>,
}

impl QueueNode {
    /// The node of a parked thread (a blocking operation), which unlike a
    /// future always collects what it is handed.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband_core::wait::QueueNode;
    ///
    /// let node = QueueNode::parked();
    /// assert!(format!("{node:?}").contains("parked: true"));
    /// ```
    #[must_use]
    pub fn parked() -> Self {
        Self {
            parked: true,
            ..Self::default()
        }
    }
}

impl fmt::Debug for QueueNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueNode")
            .field("parked", &self.parked)
            .finish_non_exhaustive()
    }
}

// SAFETY: the interior is guarded by the queue's lock; a node holds a
// `Waker` (Send + Sync) and links followed only under that lock.
unsafe impl Send for QueueNode {}
// SAFETY: as for `Send`.
unsafe impl Sync for QueueNode {}

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("waiting", &self.is_waiting())
            .finish()
    }
}

/// Wakers collected under the lock, run after it is released; an empty
/// batch initialises no slot.
struct WakeBatch {
    /// Slots `woken..len` hold wakers not yet woken; the others are empty.
    wakers: [MaybeUninit<Waker>; WAKE_BATCH],
    len: usize,
    woken: usize,
}

impl WakeBatch {
    fn new() -> Self {
        Self {
            wakers: [const { MaybeUninit::uninit() }; WAKE_BATCH],
            len: 0,
            woken: 0,
        }
    }

    fn is_full(&self) -> bool {
        self.len == WAKE_BATCH
    }

    fn push(&mut self, waker: Option<Waker>) {
        if let Some(waker) = waker {
            // Callers wake a full batch first; else the index check panics.
            self.wakers[self.len].write(waker);
            self.len += 1;
        }
    }

    /// Wakes the wakers in push order; a panic stops none of the others
    /// (each was handed something), and the first is returned to resume.
    #[inline]
    fn wake(&mut self) -> Option<Panic> {
        if self.woken == self.len {
            return None;
        }
        self.wake_pending()
    }

    /// [`WakeBatch::wake`] with wakers to run, out of line.
    #[inline(never)]
    fn wake_pending(&mut self) -> Option<Panic> {
        let mut panic = None;
        while self.woken < self.len {
            // SAFETY: slots `woken..len` hold wakers not yet read; `woken`
            // moves past this one first, so it is read once even on unwind.
            let waker = unsafe { self.wakers[self.woken].assume_init_read() };
            self.woken += 1;
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| waker.wake())) {
                panic.get_or_insert(payload);
            }
        }
        self.len = 0;
        self.woken = 0;
        panic
    }
}

impl Drop for WakeBatch {
    /// Wakes what a panic under the lock (a waker's `clone`) left, dropping
    /// their panics while the first unwinds.
    fn drop(&mut self) {
        drop(self.wake());
    }
}

/// The interior of `node`, as a raw pointer, so references never overlap.
fn inner(node: NonNull<QueueNode>) -> *mut NodeInner {
    // SAFETY: `node` points to a live node (callers hold the queue lock and
    // only pass nodes that are pinned and either linked or their own).
    unsafe { node.as_ref() }.inner.with_mut(|p| p)
}

/// The node's `checked` mark, under the same conditions as [`inner`].
fn checked(node: NonNull<QueueNode>) -> *mut bool {
    // SAFETY: as in `inner`.
    unsafe { node.as_ref() }.checked.with_mut(|p| p)
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, List> {
        // Only a waker's `clone` panics under the lock, with the list
        // consistent: poisoning is ignored.
        self.list
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stores the waiting flag after the list may have changed emptiness.
    fn set_waiting(&self, list: &List, on_change: &mut impl FnMut(bool)) {
        let waiting = list.head.is_some();
        // ORDERING: Relaxed; only written under the lock, read here under it.
        if self.waiting.load(Ordering::Relaxed) != waiting {
            on_change(waiting);
            // SeqCst: the waiter's flag write of the store-buffer race. An
            // unchanged flag's last store, made under this lock, precedes the
            // caller's re-check; a notifier's load that misses it comes before.
            self.waiting.store_sc(waiting);
        }
    }

    /// Appends `node` at the back.
    ///
    /// # Safety
    ///
    /// The lock is held (`list` is its guard) and `node` is pinned and idle.
    unsafe fn push_back(list: &mut List, node: NonNull<QueueNode>) {
        let this = inner(node);
        // SAFETY: the node is pinned by the caller; lock held.
        unsafe {
            (*this).prev = list.tail;
            (*this).next = None;
            (*this).linked = true;
        }
        match list.tail {
            // SAFETY: `tail` is linked, hence valid; lock held.
            Some(tail) => unsafe { (*inner(tail)).next = Some(node) },
            None => list.head = Some(node),
        }
        list.tail = Some(node);
    }

    /// Removes a linked `node`.
    ///
    /// # Safety
    ///
    /// The lock is held and `node` is linked in this list.
    unsafe fn unlink(list: &mut List, node: NonNull<QueueNode>) {
        let this = inner(node);
        // SAFETY: linked, so valid (unlinked before it drops); lock held.
        let (prev, next) = unsafe { ((*this).prev, (*this).next) };
        match prev {
            // SAFETY: neighbours of a linked node are linked; lock held.
            Some(prev) => unsafe { (*inner(prev)).next = next },
            None => list.head = next,
        }
        match next {
            // SAFETY: as above.
            Some(next) => unsafe { (*inner(next)).prev = prev },
            None => list.tail = prev,
        }
        // SAFETY: as above.
        unsafe {
            (*this).prev = None;
            (*this).next = None;
            (*this).linked = false;
        }
    }

    /// Hands an unlinked `node` with units to its owner (module docs).
    ///
    /// # Safety
    ///
    /// The lock is held, `node` was unlinked under it with `got > 0`, and
    /// the caller does not touch it afterwards.
    unsafe fn hand(node: NonNull<QueueNode>) {
        // ORDERING: Release pairs with the owner's Acquire in `register`.
        // SAFETY: unlinked just now under the lock, so not yet dropped.
        unsafe { node.as_ref() }
            .handed
            .store_at(true, Ordering::Release);
    }

    /// Grants units front to back ([`WaitSet::grant`]); with `check`, as
    /// `notify` (module docs): a parked thread woken to look comes back or
    /// passes a notification on ([`Withdrawn::woken_to_look`]), and takes at
    /// most one value, so each such grant wakes a parked thread of its own.
    /// The first panic of a waker is resumed at the end.
    fn grant_from_front(
        &self,
        mut acquire: impl FnMut(usize) -> usize,
        on_change: impl FnOnce(bool),
        check: bool,
    ) {
        let mut on_change = once(on_change);
        let mut batch = WakeBatch::new();
        let mut panic = None;
        let mut granting = true;
        // Grants to waiters that may not come back, each still to be
        // answered by a parked thread woken without units.
        let mut unanswered = 0usize;
        loop {
            let mut list = self.lock();
            while granting && !batch.is_full() {
                let Some(front) = list.head else {
                    granting = false;
                    break;
                };
                let complete = {
                    // SAFETY: linked, so valid; lock held; the only reference.
                    let inner = unsafe { &mut *inner(front) };
                    let want = inner.need - inner.got;
                    let taken = acquire(want);
                    inner.got += taken;
                    taken == want
                };
                if !complete {
                    granting = false;
                    break;
                }
                // SAFETY: lock held; `front` is linked, hence valid.
                if check && !unsafe { front.as_ref() }.parked {
                    unanswered += 1;
                }
                // SAFETY: lock held; `front` is linked.
                unsafe { Self::unlink(&mut list, front) };
                // SAFETY: lock held; valid until `hand` lets its owner take it.
                batch.push(unsafe { (*inner(front)).waker.take() });
                // SAFETY: lock held; just unlinked, `got == need > 0`, not touched again.
                unsafe { Self::hand(front) };
            }
            // Wake and mark the waiters behind one that may not come back;
            // after a full batch the next round restarts from the front.
            let mut behind = if unanswered > 0 { list.head } else { None };
            while let Some(node) = behind {
                if batch.is_full() {
                    break;
                }
                // SAFETY: lock held; `node` is linked, hence valid.
                let parked = unsafe { node.as_ref() }.parked;
                // A waker's `clone` unwinding leaves the node unmarked.
                // SAFETY: as above; the only reference to the interior.
                let inner = unsafe { &mut *inner(node) };
                // SAFETY: as above; the only reference to its mark.
                let checked = unsafe { &mut *checked(node) };
                if !*checked {
                    let waker = inner.waker.clone();
                    *checked = true;
                    batch.push(waker);
                    if parked {
                        unanswered -= 1;
                        if unanswered == 0 {
                            break;
                        }
                    }
                }
                behind = inner.next;
            }
            if behind.is_none() {
                // Walked to the end: every live waiter has been woken.
                unanswered = 0;
            }
            self.set_waiting(&list, &mut on_change);
            drop(list);
            let caught = batch.wake();
            panic = panic.or(caught);
            if !granting && unanswered == 0 {
                return resume(panic);
            }
        }
    }
}

/// Turns a `FnOnce(bool)` into the `FnMut` the helpers take; it runs once.
fn once(on_change: impl FnOnce(bool)) -> impl FnMut(bool) {
    let mut on_change = Some(on_change);
    move |waiting| {
        if let Some(f) = on_change.take() {
            f(waiting);
        }
    }
}

// SAFETY: a node `register` leaves queued has the flag up, raised by a
// SeqCst store under the lock; grants go front to back and only `cancel`,
// which returns them, takes them back.
unsafe impl WaitSet for Queue {
    type Node = QueueNode;

    #[inline]
    fn is_waiting(&self) -> bool {
        self.waiting.load_sc()
    }

    unsafe fn register(
        &self,
        node: Pin<&QueueNode>,
        waker: &Waker,
        need: usize,
        on_change: impl FnOnce(bool),
    ) -> usize {
        let ptr = NonNull::from(node.get_ref());
        // ORDERING: Acquire pairs with the Release store in `hand`.
        if node.handed.load(Ordering::Acquire) {
            // ORDERING: Relaxed; the owner's next lock orders it before the next raise.
            node.handed.store_at(false, Ordering::Relaxed);
            // SAFETY: handed to us: ours until we link it again, under the lock.
            let inner = unsafe { &mut *inner(ptr) };
            debug_assert!(inner.waker.is_none(), "the granter took the waker");
            return std::mem::take(&mut inner.got);
        }
        let mut on_change = once(on_change);
        let mut list = self.lock();
        let (stale, granted, idle) = {
            // SAFETY: lock held; pinned by the caller; the only reference.
            let inner = unsafe { &mut *inner(ptr) };
            if inner.linked {
                // SAFETY: as for `inner`; the only reference to the mark.
                unsafe { *checked(ptr) = false };
                let stale = match &inner.waker {
                    Some(old) if old.will_wake(waker) => None,
                    _ => inner.waker.replace(waker.clone()),
                };
                (stale, 0, false)
            } else if inner.got > 0 {
                // Handed to us since the look above.
                // ORDERING: Relaxed; the lock orders it before the next raise.
                node.handed.store_at(false, Ordering::Relaxed);
                (inner.waker.take(), std::mem::take(&mut inner.got), false)
            } else {
                inner.need = need;
                // SAFETY: as for `inner`; the only reference to the mark.
                unsafe { *checked(ptr) = false };
                (inner.waker.replace(waker.clone()), 0, true)
            }
        };
        if idle {
            // SAFETY: lock held; the node is pinned and idle.
            unsafe { Self::push_back(&mut list, ptr) };
        }
        if granted == 0 {
            self.set_waiting(&list, &mut on_change);
        }
        drop(list);
        // A replaced waker's `drop` is user code: not under the lock.
        drop(stale);
        granted
    }

    fn grant(&self, acquire: impl FnMut(usize) -> usize, on_change: impl FnOnce(bool)) {
        self.grant_from_front(acquire, on_change, false);
    }

    fn parked_node() -> QueueNode {
        QueueNode::parked()
    }

    fn notify(&self, units: usize) {
        self.grant_from_front(up_to(units), |_| (), true);
    }

    fn wake_all(&self, on_change: impl FnOnce(bool)) {
        let mut on_change = once(on_change);
        let mut batch = WakeBatch::new();
        let mut panic = None;
        loop {
            let mut list = self.lock();
            while let Some(front) = list.head {
                // SAFETY: lock held; `front` is linked, hence valid.
                unsafe { Self::unlink(&mut list, front) };
                // SAFETY: as above.
                batch.push(unsafe { (*inner(front)).waker.take() });
                // SAFETY: as above; only a node with units is handed, one
                // without is re-linked by its owner's next `register`.
                if unsafe { (*inner(front)).got } > 0 {
                    // SAFETY: unlinked just now, not touched again here.
                    unsafe { Self::hand(front) };
                }
                if batch.is_full() {
                    break;
                }
            }
            let done = list.head.is_none();
            self.set_waiting(&list, &mut on_change);
            drop(list);
            let caught = batch.wake();
            panic = panic.or(caught);
            if done {
                return resume(panic);
            }
        }
    }

    unsafe fn cancel(&self, node: Pin<&QueueNode>, on_change: impl FnOnce(bool)) -> Withdrawn {
        let mut on_change = once(on_change);
        let ptr = NonNull::from(node.get_ref());
        let mut list = self.lock();
        let mut woken_to_look = false;
        // SAFETY: lock held; the node is pinned by the caller.
        if unsafe { (*inner(ptr)).linked } {
            // SAFETY: lock held; the only reference to the node's mark.
            woken_to_look = node.parked && std::mem::take(unsafe { &mut *checked(ptr) });
            // SAFETY: lock held; the node is linked in this list.
            unsafe { Self::unlink(&mut list, ptr) };
            self.set_waiting(&list, &mut on_change);
        }
        let (got, waker) = {
            // SAFETY: lock held; the only reference to the node in the block.
            let inner = unsafe { &mut *inner(ptr) };
            (std::mem::take(&mut inner.got), inner.waker.take())
        };
        // ORDERING: Relaxed; the lock orders it before the next raise.
        node.handed.store_at(false, Ordering::Relaxed);
        drop(list);
        // The waker drops with the result, after the caller passed the units.
        Withdrawn {
            units: got,
            waker,
            woken_to_look,
        }
    }
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests {
    use super::*;
    use std::pin::pin;

    fn units(mut n: usize) -> impl FnMut(usize) -> usize {
        move |want| {
            let k = want.min(n);
            n -= k;
            k
        }
    }

    #[test]
    fn a_woken_waiter_collects_a_partial_grant_once_and_can_wait_again() {
        let queue = Queue::default();
        let node = pin!(QueueNode::default());
        // SAFETY: the node is pinned, used only with this queue and idle
        // when it goes out of scope.
        unsafe {
            assert_eq!(queue.register(node.as_ref(), Waker::noop(), 3, |_| ()), 0);
            // Two of three units: it stays queued.
            queue.grant(units(2), |_| ());
            assert!(queue.is_waiting());
            // A close wakes it with the two it holds.
            queue.wake_all(|_| ());
            assert!(!queue.is_waiting());
            assert_eq!(queue.register(node.as_ref(), Waker::noop(), 3, |_| ()), 2);
            // Idle again: the next registration queues it.
            assert_eq!(queue.register(node.as_ref(), Waker::noop(), 3, |_| ()), 0);
            assert!(queue.is_waiting());
            assert_eq!(queue.cancel(node.as_ref(), |_| ()).units(), 0);
        }
    }

    #[test]
    fn cancelling_a_granted_waiter_returns_its_units_once() {
        let queue = Queue::default();
        let node = pin!(QueueNode::default());
        // SAFETY: as in the test above.
        unsafe {
            assert_eq!(queue.register(node.as_ref(), Waker::noop(), 1, |_| ()), 0);
            queue.grant(units(1), |_| ());
            assert_eq!(queue.cancel(node.as_ref(), |_| ()).units(), 1);
            // No grant left behind for the next wait to find.
            assert_eq!(queue.register(node.as_ref(), Waker::noop(), 1, |_| ()), 0);
            assert!(queue.is_waiting());
            assert_eq!(queue.cancel(node.as_ref(), |_| ()).units(), 0);
        }
        assert!(!queue.is_waiting());
    }

    #[test]
    fn grants_go_to_waiters_in_the_order_they_registered() {
        let queue = Queue::default();
        let (a, b, c) = (
            pin!(QueueNode::default()),
            pin!(QueueNode::default()),
            pin!(QueueNode::default()),
        );
        let mut changes = Vec::new();
        // SAFETY: the nodes are pinned, used only here, and cancelled below.
        unsafe {
            queue.register(a.as_ref(), Waker::noop(), 1, |w| changes.push(w));
            queue.register(b.as_ref(), Waker::noop(), 2, |w| changes.push(w));
            queue.register(c.as_ref(), Waker::noop(), 1, |w| changes.push(w));
        }
        assert_eq!(changes, [true]);
        // Two units: one completes `a`, one goes to `b` in part; `c` waits.
        queue.grant(units(2), |_| ());
        // SAFETY: as above.
        unsafe {
            assert_eq!(queue.register(a.as_ref(), Waker::noop(), 1, |_| ()), 1);
            assert_eq!(queue.register(c.as_ref(), Waker::noop(), 1, |_| ()), 0);
            // `b` holds one of its two: still queued, so 0.
            assert_eq!(queue.register(b.as_ref(), Waker::noop(), 2, |_| ()), 0);
            // Cancelling `b` hands back its partial unit.
            assert_eq!(queue.cancel(b.as_ref(), |_| ()).units(), 1);
        }
        queue.grant(units(1), |w| changes.push(w));
        assert_eq!(changes, [true, false]);
        assert!(!queue.is_waiting());
        // SAFETY: as above.
        unsafe {
            assert_eq!(queue.register(c.as_ref(), Waker::noop(), 1, |_| ()), 1);
            assert_eq!(queue.cancel(c.as_ref(), |_| ()).units(), 0);
        }
    }

    #[test]
    fn waking_everyone_keeps_partial_grants_for_their_owners() {
        let queue = Queue::default();
        let a = pin!(QueueNode::default());
        // SAFETY: pinned, used only here, cancelled below.
        unsafe { queue.register(a.as_ref(), Waker::noop(), 3, |_| ()) };
        queue.grant(units(1), |_| ());
        queue.wake_all(|_| ());
        assert!(!queue.is_waiting());
        // SAFETY: as above.
        assert_eq!(unsafe { queue.cancel(a.as_ref(), |_| ()).units() }, 1);
    }

    /// A waker that records its wake-ups in order, and can panic on one.
    struct Recorder {
        id: usize,
        woken: std::sync::Arc<std::sync::Mutex<Vec<usize>>>,
        panics: bool,
    }

    impl std::task::Wake for Recorder {
        fn wake(self: std::sync::Arc<Self>) {
            self.woken.lock().unwrap().push(self.id);
            assert!(!self.panics, "a waker that panics");
        }
    }

    fn recorders(
        n: usize,
        panics_at: Option<usize>,
    ) -> (
        Vec<std::sync::Arc<Recorder>>,
        std::sync::Arc<std::sync::Mutex<Vec<usize>>>,
    ) {
        let woken = std::sync::Arc::default();
        let wakers = (0..n)
            .map(|id| {
                std::sync::Arc::new(Recorder {
                    id,
                    woken: std::sync::Arc::clone(&woken),
                    panics: panics_at == Some(id),
                })
            })
            .collect();
        (wakers, woken)
    }

    #[test]
    fn a_wake_batch_wakes_each_waker_once_in_order_and_can_be_reused() {
        let (wakers, woken) = recorders(WAKE_BATCH + 3, None);
        let mut batch = WakeBatch::new();
        for (i, recorder) in wakers.iter().enumerate() {
            if batch.is_full() {
                batch.wake();
            }
            batch.push(Some(Waker::from(std::sync::Arc::clone(recorder))));
            if i == 2 {
                batch.push(None);
            }
        }
        batch.wake();
        drop(batch);
        assert_eq!(
            *woken.lock().unwrap(),
            (0..WAKE_BATCH + 3).collect::<Vec<_>>()
        );
        // Every waker was consumed by its wake: only our handles are left.
        assert!(wakers.iter().all(|w| std::sync::Arc::strong_count(w) == 1));
    }

    #[test]
    fn a_dropped_batch_wakes_the_wakers_it_had_not_woken() {
        let (wakers, woken) = recorders(3, None);
        let mut batch = WakeBatch::new();
        for recorder in &wakers {
            batch.push(Some(Waker::from(std::sync::Arc::clone(recorder))));
        }
        drop(batch);
        assert_eq!(*woken.lock().unwrap(), [0, 1, 2]);
        assert!(wakers.iter().all(|w| std::sync::Arc::strong_count(w) == 1));
    }

    #[test]
    fn a_waker_that_panics_does_not_stop_the_rest_and_its_panic_is_returned() {
        let (wakers, woken) = recorders(4, Some(1));
        let mut batch = WakeBatch::new();
        for recorder in &wakers {
            batch.push(Some(Waker::from(std::sync::Arc::clone(recorder))));
        }
        let panic = batch.wake();
        assert!(panic.is_some());
        drop(batch);
        assert_eq!(*woken.lock().unwrap(), [0, 1, 2, 3]);
        // Each waker was consumed by its own `wake`: no leak, no double drop.
        assert!(wakers.iter().all(|w| std::sync::Arc::strong_count(w) == 1));
    }

    #[test]
    fn a_grant_whose_waker_panics_still_wakes_every_granted_waiter() {
        let queue = Queue::default();
        let (wakers, woken) = recorders(3, Some(0));
        let nodes = [
            Box::pin(QueueNode::default()),
            Box::pin(QueueNode::default()),
            Box::pin(QueueNode::default()),
        ];
        for (node, recorder) in nodes.iter().zip(&wakers) {
            let waker = Waker::from(std::sync::Arc::clone(recorder));
            // SAFETY: the nodes are pinned, used only with this queue, and
            // idle (granted, then collected) before they are dropped.
            unsafe { queue.register(node.as_ref(), &waker, 1, |_| ()) };
        }
        let unwound = std::panic::catch_unwind(AssertUnwindSafe(|| queue.grant(units(3), |_| ())));
        assert!(unwound.is_err(), "the waker's panic propagates");
        assert_eq!(*woken.lock().unwrap(), [0, 1, 2]);
        assert!(!queue.is_waiting());
        for node in &nodes {
            // SAFETY: as above.
            let got = unsafe { queue.register(node.as_ref(), Waker::noop(), 1, |_| ()) };
            assert_eq!(got, 1);
        }
    }

    #[test]
    fn a_notification_to_a_waiter_that_may_not_come_back_also_wakes_the_next() {
        let queue = Queue::default();
        let (wakers, woken) = recorders(3, None);
        let leaked = Box::pin(QueueNode::default());
        let parked = Box::pin(QueueNode::parked());
        let last = Box::pin(QueueNode::default());
        for (node, recorder) in [&leaked, &parked, &last].into_iter().zip(&wakers) {
            let waker = Waker::from(std::sync::Arc::clone(recorder));
            // SAFETY: pinned, used only with this queue, cancelled below.
            unsafe { queue.register(node.as_ref(), &waker, 1, |_| ()) };
        }
        // The front waiter is a future, which may never be polled again.
        queue.notify(1);
        assert_eq!(*woken.lock().unwrap(), [0, 1]);
        // SAFETY: as above.
        unsafe {
            assert_eq!(queue.cancel(leaked.as_ref(), |_| ()).units(), 1);
            // The parked thread was woken but holds nothing: still queued.
            assert_eq!(queue.register(parked.as_ref(), Waker::noop(), 1, |_| ()), 0);
        }
        // A parked thread always comes back: nobody else is woken for it.
        queue.notify(1);
        assert_eq!(*woken.lock().unwrap(), [0, 1]);
        // SAFETY: as above.
        unsafe {
            assert_eq!(queue.cancel(parked.as_ref(), |_| ()).units(), 1);
            assert_eq!(queue.cancel(last.as_ref(), |_| ()).units(), 0);
        }
    }

    #[test]
    fn a_notification_to_a_future_wakes_every_waiter_behind_it_up_to_a_parked_thread_of_its_own() {
        let queue = Queue::default();
        let (wakers, woken) = recorders(5, None);
        let nodes = [
            Box::pin(QueueNode::default()),
            Box::pin(QueueNode::default()),
            Box::pin(QueueNode::default()),
            Box::pin(QueueNode::parked()),
            Box::pin(QueueNode::default()),
        ];
        let waker = |id: usize| Waker::from(std::sync::Arc::clone(&wakers[id]));
        for (id, node) in nodes.iter().enumerate() {
            // SAFETY: pinned, used only with this queue, cancelled below.
            unsafe { queue.register(node.as_ref(), &waker(id), 1, |_| ()) };
        }
        // Any future may never be polled again, so every waiter behind the
        // one notified looks for itself, up to the parked thread.
        queue.notify(1);
        assert_eq!(*woken.lock().unwrap(), [0, 1, 2, 3]);
        // Waiter 2 comes back and waits again; 1 does not yet.
        // SAFETY: as above.
        let got = unsafe { queue.register(nodes[2].as_ref(), &waker(2), 1, |_| ()) };
        assert_eq!(got, 0);
        // The next notification goes to 1; of those behind, 2 is woken
        // again, the parked thread is not (it has not looked yet), and 4 is
        // woken too: the parked thread takes at most one value, and answers
        // for the first notification already.
        queue.notify(1);
        assert_eq!(*woken.lock().unwrap(), [0, 1, 2, 3, 1, 2, 4]);
        for (id, node) in nodes.iter().enumerate() {
            // SAFETY: as above.
            let got = unsafe { queue.cancel(node.as_ref(), |_| ()).units() };
            assert_eq!(got, usize::from(id < 2), "waiter {id}");
        }
        assert!(!queue.is_waiting());
    }

    #[test]
    fn a_parked_waiter_withdrawn_after_a_wake_to_look_says_so_until_it_registers_again() {
        let queue = Queue::default();
        let nodes = [
            Box::pin(QueueNode::default()),
            Box::pin(QueueNode::default()),
            Box::pin(QueueNode::parked()),
        ];
        for node in &nodes {
            // SAFETY: pinned, used only with this queue, cancelled below.
            unsafe { queue.register(node.as_ref(), Waker::noop(), 1, |_| ()) };
        }
        // The notification goes to 0; 1 and the parked 2 are woken to look.
        queue.notify(1);
        // SAFETY: as above.
        unsafe {
            assert!(
                !queue.cancel(nodes[1].as_ref(), |_| ()).woken_to_look(),
                "a future"
            );
            let again = queue.register(nodes[2].as_ref(), Waker::noop(), 1, |_| ());
            assert_eq!(again, 0);
            assert!(
                !queue.cancel(nodes[2].as_ref(), |_| ()).woken_to_look(),
                "looked since"
            );
            // Again, with 1 in front and 2 behind it.
            queue.register(nodes[1].as_ref(), Waker::noop(), 1, |_| ());
            queue.register(nodes[2].as_ref(), Waker::noop(), 1, |_| ());
        }
        queue.notify(1);
        // SAFETY: as above.
        unsafe {
            let withdrawn = queue.cancel(nodes[2].as_ref(), |_| ());
            assert!(withdrawn.woken_to_look(), "woken to look, and leaving");
            assert_eq!(withdrawn.units(), 0);
            drop(withdrawn);
            assert!(
                !queue.cancel(nodes[2].as_ref(), |_| ()).woken_to_look(),
                "once"
            );
            // 0 and 1 each hold the notification they were granted.
            for node in &nodes[..2] {
                assert_eq!(queue.cancel(node.as_ref(), |_| ()).units(), 1);
            }
        }
        assert!(!queue.is_waiting());
    }

    #[test]
    fn waiters_behind_a_notified_future_are_all_woken_past_a_full_batch() {
        let queue = Queue::default();
        let count = WAKE_BATCH * 2 + 5;
        let (wakers, woken) = recorders(count, None);
        let nodes: Vec<_> = (0..count).map(|_| Box::pin(QueueNode::default())).collect();
        for (node, recorder) in nodes.iter().zip(&wakers) {
            let waker = Waker::from(std::sync::Arc::clone(recorder));
            // SAFETY: pinned, used only with this queue, cancelled below.
            unsafe { queue.register(node.as_ref(), &waker, 1, |_| ()) };
        }
        queue.notify(1);
        assert_eq!(*woken.lock().unwrap(), (0..count).collect::<Vec<_>>());
        for node in &nodes {
            // SAFETY: as above.
            drop(unsafe { queue.cancel(node.as_ref(), |_| ()) });
        }
    }
}
