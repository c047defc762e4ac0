//! The seam between topology and storage, and the cursors each side acts
//! through.
//!
//! A [`Storage`] (the bounded [`Ring`](crate::ring::Ring), also a
//! [`Capacity`], or the unbounded [`List`](crate::list::List)) holds one
//! channel's values and implements the cursor claims of its
//! [arity](crate::arity); of [waiting](crate::wait) it knows only how a single
//! endpoint publishes. It reports `Full`, `Empty` or `Busy`, and the channel
//! decides who waits and who is woken. Its operations are `unsafe` and
//! hidden: only the channel calls them, for the endpoints.

use crate::arity::Arity;
use crate::unwind::{catch, resume};
use crate::wait::{Latch, Wait};

/// Why a value could not be pushed; the value is handed back.
#[derive(Debug, PartialEq, Eq)]
pub enum PushError<T> {
    /// No free capacity (or senders are queued ahead of this one).
    Full(T),
    /// The storage is closed.
    Closed(T),
}

/// Why no value could be popped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopError {
    /// Nothing was pushed that has not been popped.
    Empty,
    /// The next value has been claimed by a producer still writing it, which
    /// may not see the waiting flag: the caller retries rather than sleeps
    /// (and may ask for [`PopError::Writing`] with [`Storage::watch_writes`]).
    Busy,
    /// As `Busy`, by a producer that publishes `SeqCst` and then checks the
    /// waiting flag (`Slot::publish`): the caller may sleep on it.
    Writing,
    /// Closed, and every value pushed before the close has been popped.
    Closed,
}

/// Storage for the values of one channel. Sealed by its contract: only
/// this crate's [`Ring`](crate::ring::Ring) and [`List`](crate::list::List)
/// implement it.
///
/// # Safety
///
/// Implementations deliver every pushed value exactly once, keep each
/// producer's values in order, never hand out a value pushed after `close`
/// linearised, and make the condition changes waiters wait for (publishing,
/// freeing capacity, closing) `SeqCst`, as [`crate::wait`] requires. A
/// storage is `Send` and `Sync` whenever `Item` is `Send` (the channel's own
/// rest on this). A single consumer passes its [`Storage::Cursor`] by `&mut`
/// to every consumer-side method: its right to act, holding what only it
/// reads; a single producer likewise its [`Storage::ProducerCursor`]. A side
/// with many endpoints has a zero-sized cursor holding nothing, conjured.
pub unsafe trait Storage: Sized + std::fmt::Debug {
    /// The values stored.
    type Item;
    /// A consumer's hold on the next value, from [`Storage::front`] to
    /// [`Storage::release_front`].
    #[doc(hidden)]
    type Front;
    /// The consumer's right to act and what only it reads.
    #[doc(hidden)]
    type Cursor: std::fmt::Debug + Unpin + Send + Sync;
    /// The producer's right to act and what only it reads.
    #[doc(hidden)]
    type ProducerCursor: std::fmt::Debug + Unpin + Send + Sync;
    /// Producer arity.
    type Senders: Arity;
    /// Consumer arity.
    type Receivers: Arity;
    /// How the channel waits.
    type Wait: Wait;
    /// The bound, or `None` for unbounded storage.
    const CAPACITY: Option<usize>;

    /// Empty, open storage.
    #[doc(hidden)]
    fn new() -> Self;

    /// The consumer's cursor, at the position the storage has published.
    #[doc(hidden)]
    fn cursor(&self) -> Self::Cursor;

    /// The producer's cursor, likewise.
    #[doc(hidden)]
    fn producer_cursor(&self) -> Self::ProducerCursor;

    /// Pushes the value in `*value` if there is capacity now, taking it out
    /// only once it has a place (a large value is copied once); refused
    /// (`Full` or `Closed`), it is left in `*value`.
    ///
    /// # Safety
    ///
    /// The producer contract: a single producer's `cursor` came from this
    /// storage's [`Storage::producer_cursor`], the only one in use. `*value`
    /// holds a value.
    #[doc(hidden)]
    unsafe fn try_push_from(
        &self,
        cursor: &mut Self::ProducerCursor,
        value: &mut Option<Self::Item>,
    ) -> Result<(), PushError<()>>;

    /// [`Storage::try_push_from`] with the value by value, handed back.
    ///
    /// # Safety
    ///
    /// As for [`Storage::try_push_from`].
    #[doc(hidden)]
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "every try send; LLVM sometimes leaves it out of line, a call per message"
    )]
    unsafe fn try_push(
        &self,
        cursor: &mut Self::ProducerCursor,
        value: Self::Item,
    ) -> Result<(), PushError<Self::Item>> {
        let mut value = Some(value);
        // SAFETY: forwarded from the caller; `value` holds a value.
        unsafe { self.try_push_from(cursor, &mut value) }.map_err(|refused| {
            // SAFETY: a refused push leaves the value in place.
            let value = unsafe { value.unwrap_unchecked() };
            match refused {
                PushError::Full(()) => PushError::Full(value),
                PushError::Closed(()) => PushError::Closed(value),
            }
        })
    }

    /// Pops the next value, or says why not.
    ///
    /// # Safety
    ///
    /// The consumer contract: a single consumer's `cursor` came from this
    /// storage's [`Storage::cursor`], the only one in use.
    #[doc(hidden)]
    unsafe fn try_pop(&self, cursor: &mut Self::Cursor) -> Result<Self::Item, PopError> {
        // SAFETY: forwarded from the caller.
        let mut front = unsafe { self.front(cursor) }?;
        // SAFETY: `front` came from `front` and is taken once, then released.
        let value = unsafe { self.take_front(&mut front) };
        // SAFETY: as above.
        unsafe { self.release_front(cursor, front) };
        Ok(value)
    }

    /// A pop in three steps: `front` finds the next value (with many
    /// consumers, claims it), [`Storage::take_front`] moves it out,
    /// [`Storage::release_front`] frees its place.
    ///
    /// # Safety
    ///
    /// The consumer contract; every front is taken once and then released,
    /// with the same cursor, before the next `front` with that cursor.
    #[doc(hidden)]
    unsafe fn front(&self, cursor: &mut Self::Cursor) -> Result<Self::Front, PopError>;

    /// As [`Storage::front`], for a receive that will not sleep on the
    /// answer: `Empty` may skip a registered waiter's `SeqCst` re-check.
    /// For a receiver that keeps `waiting` (it looks again instead of
    /// reporting the answer), `Empty` may also stand for a value being
    /// written, so that looking costs the producers nothing: no load of
    /// their claim word, no marks asked of them.
    ///
    /// # Safety
    ///
    /// As for [`Storage::front`].
    #[doc(hidden)]
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "every try receive's ready path")]
    unsafe fn try_front(
        &self,
        cursor: &mut Self::Cursor,
        _waiting: bool,
    ) -> Result<Self::Front, PopError> {
        // SAFETY: forwarded from the caller.
        unsafe { self.front(cursor) }
    }

    /// A receiver about to sleep on [`PopError::Busy`]: from now on, a
    /// producer writing a large value publishes it so that a sleeper is
    /// woken, and `front` reports it [`PopError::Writing`]. Set once: a
    /// value only `try_recv` takes is published with a release store.
    #[doc(hidden)]
    fn watch_writes(&self) {}

    /// After `front` reported [`PopError::Busy`]: whether a later value is
    /// published, so that a `try_recv` waits the write out (else `Empty`).
    ///
    /// # Safety
    ///
    /// The consumer contract.
    #[doc(hidden)]
    unsafe fn published_behind(&self, _cursor: &mut Self::Cursor) -> bool {
        true
    }

    /// Moves the value out of `front`.
    ///
    /// # Safety
    ///
    /// `front` came from [`Storage::front`] and has not been taken from.
    #[doc(hidden)]
    unsafe fn take_front(&self, front: &mut Self::Front) -> Self::Item;

    /// Frees the place of a taken front for the producers.
    ///
    /// # Safety
    ///
    /// `front` came from [`Storage::front`] with `cursor` and was taken
    /// from exactly once.
    #[doc(hidden)]
    unsafe fn release_front(&self, cursor: &mut Self::Cursor, front: Self::Front);

    /// The next value, left in place while `cursor` is not used again.
    ///
    /// # Safety
    ///
    /// Single consumer, with the consumer contract.
    #[doc(hidden)]
    unsafe fn peek<'a>(&'a self, cursor: &'a mut Self::Cursor) -> Option<&'a Self::Item>;

    /// Freezes the boundary: every push that completed before stays
    /// poppable, every later push fails. True if this call closed it.
    ///
    /// # Safety
    ///
    /// With a single producer and `from_producer`, the caller is that
    /// producer and no producer-side method runs at the same time.
    #[doc(hidden)]
    unsafe fn close(&self, from_producer: bool) -> bool;

    /// Whether `close` has happened.
    fn is_closed(&self) -> bool;

    /// How many values have been popped (or claimed): only grows.
    #[doc(hidden)]
    fn head_position(&self) -> u64;

    /// Values pushed and not yet popped.
    fn len(&self) -> usize;

    /// No value is stored.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// No push could succeed now: queued values plus held units fill the
    /// bound, or senders are queued. Never true for unbounded storage.
    fn is_full(&self) -> bool;

    /// Units of capacity held as permits or granted to woken senders.
    fn reserved(&self) -> usize {
        0
    }

    /// Between a receiver's raising its flag and re-checking: makes a single
    /// producer's plain publishes visible (`wait/fence.rs`).
    #[doc(hidden)]
    fn before_recv_wait(&self) {}

    /// The same for a sender waiting on a single consumer.
    #[doc(hidden)]
    fn before_send_wait(&self) {}

    /// After a single producer's push: back to plain stores once nobody has
    /// waited for a while (`waiting` reads the receivers' flag).
    ///
    /// # Safety
    ///
    /// The producer contract.
    #[doc(hidden)]
    unsafe fn after_push(&self, _: &mut Self::ProducerCursor, _waiting: impl Fn() -> bool) {}

    /// As [`Storage::after_push`], after a single consumer's pop.
    ///
    /// # Safety
    ///
    /// The consumer contract.
    #[doc(hidden)]
    unsafe fn after_pop(&self, _cursor: &mut Self::Cursor, _waiting: impl Fn() -> bool) {}

    /// Takes `n` units of capacity if that many are free and no sender is
    /// queued ahead, else `Full` (or `Closed`); needs no cursor, so it runs
    /// beside pushes through the same producer's units.
    ///
    /// # Safety
    ///
    /// The caller acts as a producer (with a single producer: its right,
    /// or units lent from it), and `1 <= n <= CAPACITY`.
    #[doc(hidden)]
    unsafe fn try_acquire(&self, n: usize) -> Result<(), PushError<()>>;

    /// Takes up to `n` free units for queued senders, ignoring the queue;
    /// returns how many (0 when closed or full).
    ///
    /// # Safety
    ///
    /// Called by the senders' wait set, which hands every unit it takes to
    /// a waiter.
    #[doc(hidden)]
    unsafe fn grant(&self, n: usize) -> usize;

    /// False when [`Storage::grant`] would certainly take nothing now (by
    /// `SeqCst` loads of what frees capacity); true when unsure.
    #[doc(hidden)]
    fn may_grant(&self) -> bool {
        true
    }

    /// Pushes `value` through one held unit, used up either way; hands it
    /// back when closed.
    ///
    /// # Safety
    ///
    /// The caller holds a unit; the producer contract (a single producer's
    /// units take turns at its cursor).
    #[doc(hidden)]
    unsafe fn push_reserved(
        &self,
        cursor: &mut Self::ProducerCursor,
        value: Self::Item,
    ) -> Result<(), Self::Item>;

    /// Returns `n` held units (a `SeqCst` operation: freeing capacity is a
    /// condition change waiting senders pair with).
    ///
    /// # Safety
    ///
    /// The caller holds `n` units and gives up each of them here: returning
    /// a unit nobody holds would let a producer overwrite a queued value.
    #[doc(hidden)]
    unsafe fn release(&self, n: usize);

    /// Marks senders as queued or not; while marked, `try_push` and
    /// `try_acquire` report `Full`, leaving capacity to the waiters.
    ///
    /// # Safety
    ///
    /// Called by the senders' wait set, under its lock, exactly when it
    /// turns non-empty or empty.
    #[doc(hidden)]
    unsafe fn set_waiting(&self, waiting: bool);

    /// Drops every value still stored, waiting for in-flight pushes that
    /// linearised before the close.
    ///
    /// # Safety
    ///
    /// The storage is closed and no consumer-side method runs now or later.
    #[doc(hidden)]
    unsafe fn drain(&self);
}

/// Bounded storage: queued values, plus units held as permits, plus units
/// granted to woken waiters, never exceed [`Capacity::CAP`]. A unit
/// reserves capacity, not a position.
///
/// # Safety
///
/// As for [`Storage`]; the accounting above holds at every instant.
pub unsafe trait Capacity: Storage {
    /// The bound.
    const CAP: usize;
}

/// The cursor of a side with many endpoints, made from nothing.
///
/// # Safety
///
/// `C` is the cursor of a side with many endpoints: zero-sized (checked)
/// and holding nothing (the [`Storage`] contract), so a dangling, aligned
/// pointer is a valid, unique reference to one.
#[inline(always)]
#[allow(clippy::inline_always, reason = "every ready path of many endpoints")]
pub(crate) unsafe fn conjured<'a, C>() -> &'a mut C {
    assert!(size_of::<C>() == 0, "many endpoints' cursor holds nothing");
    // SAFETY: the caller's contract.
    unsafe { std::ptr::NonNull::dangling().as_mut() }
}

/// The cursor an endpoint of side arity `A` acts with: `own`, or conjured.
///
/// # Safety
///
/// With a single endpoint, `own` is `Some`; with many, `C` is that side's
/// cursor (see [`conjured`]).
#[inline(always)]
#[allow(clippy::inline_always, reason = "every ready path")]
pub(crate) unsafe fn cursor_of<A: Arity, C>(own: Option<&mut C>) -> &mut C {
    if A::MANY {
        // SAFETY: many endpoints' cursor (the caller's contract).
        unsafe { conjured() }
    } else {
        // SAFETY: a single endpoint keeps its cursor (the caller's contract).
        unsafe { own.unwrap_unchecked() }
    }
}

/// A single producer's cursor, used through `&mut` or, by the units it
/// reserved (on any thread), in turns under a latch.
pub(crate) struct Turns<C> {
    /// `std`'s cell even under loom: the reference lent out outlives any
    /// closure loom's cell could track it in.
    cursor: std::cell::UnsafeCell<C>,
    latch: Latch,
}

// SAFETY: the cursor moves with the value; `C: Send` is required and enough.
unsafe impl<C: Send> Send for Turns<C> {}
// SAFETY: through `&Turns` the cursor is reached only under the latch
// (`with_turn`), so one thread uses it at a time, as with `Mutex<C>`.
unsafe impl<C: Send> Sync for Turns<C> {}

impl<C> Turns<C> {
    pub(crate) fn new(cursor: C) -> Self {
        Self {
            cursor: std::cell::UnsafeCell::new(cursor),
            latch: Latch::new(),
        }
    }

    /// The cursor, for the only user of `self`.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "on every send's ready path")]
    pub(crate) fn get_mut(&mut self) -> &mut C {
        self.cursor.get_mut()
    }

    /// Runs `f` with the cursor, holding the latch.
    #[inline]
    pub(crate) fn with_turn<R>(&self, f: impl FnOnce(&mut C) -> R) -> R {
        let _held = self.latch.hold();
        // SAFETY: the latch is held, whose Acquire orders this use after the
        // previous holder's; every other user takes a turn or has `&mut self`.
        f(unsafe { &mut *self.cursor.get() })
    }
}

opaque_debug!(impl[C] Turns<C>);

/// Drops every value `next` yields; the first destructor's panic is
/// resumed after the last value.
pub(crate) fn drop_each<T>(mut next: impl FnMut() -> Option<T>) {
    let mut panic = None;
    while let Some(value) = next() {
        catch(&mut panic, || drop(value));
    }
    resume(panic);
}
