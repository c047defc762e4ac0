//! The seam between topology and storage.
//!
//! A [`Storage`] holds the values of one channel and implements the cursor
//! claims for its producer and consumer [arity](crate::arity). It knows
//! nothing of waiting: it reports `Full`, `Empty` or `Busy`, and the channel
//! ([`Chan`](crate::chan::Chan)) decides who waits and who is woken. The two
//! storages are the bounded [`Ring`](crate::ring::Ring) and the unbounded
//! [`List`](crate::list::List); bounded storages also implement
//! [`Capacity`], the accounting behind permits and fair waiting.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::arity::{Arity, Many};
use crate::unwind::resume;

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
    /// The next value in order has been claimed by a producer that is still
    /// writing it. It will be ready in a moment. Unless the storage says
    /// [`Storage::NOTIFIES_BUSY`], the caller must not sleep on it (the
    /// producer may not see the waiting flag) and retries instead.
    Busy,
    /// The storage is closed and every value pushed before the close has
    /// been popped.
    Closed,
}

/// Storage for the values of one channel.
///
/// # Safety
///
/// Implementations must deliver every pushed value exactly once, keep each
/// producer's values in order, never hand out a value pushed after `close`
/// linearised, and make the condition changes that waiters wait for
/// (publishing a value, freeing capacity, closing) `SeqCst` operations, as
/// the store-buffer argument in [`crate::wait`] requires. Methods marked
/// "single side" may race only with the other side's methods. With many
/// consumers [`Storage::Cursor`], and with many producers
/// [`Storage::ProducerCursor`], is zero-sized and holds nothing.
///
/// # Cursors
///
/// A single consumer keeps a [`Storage::Cursor`] and passes it by `&mut` to
/// every consumer-side method: the cursor is the right to act as the
/// consumer, and it holds what only the consumer reads (the spsc ring's own
/// position, a copy of a single producer's position, the list's current
/// block). A single producer does the same with a
/// [`Storage::ProducerCursor`] (the spsc ring's own position and its copy
/// of the consumer's, the list's tail block) on every producer-side method.
/// What others read stays in the storage and is written only under that
/// right: the published positions (for queries, the other side and the
/// drain; in the list and the many-producer ring a position is its
/// published word itself), held units, and each single side's fence, whose
/// count sits beside the mode it reads on every push or pop. With many
/// producers or many consumers, that side's cursor is zero-sized and holds
/// nothing, so that each of them may conjure one as it acts.
pub unsafe trait Storage: Sized + std::fmt::Debug {
    /// The values stored.
    type Item;
    /// A consumer's hold on the next value between [`Storage::front`] and
    /// [`Storage::release_front`].
    type Front;
    /// The consumer's right to act and what only it reads (see "Cursors"
    /// above); nothing for many consumers.
    type Cursor: std::fmt::Debug + Unpin;
    /// The producer's right to act and what only it reads (see "Cursors"
    /// above); nothing for many producers.
    type ProducerCursor: std::fmt::Debug + Unpin;
    /// Producer arity.
    type Senders: Arity;
    /// Consumer arity.
    type Receivers: Arity;
    /// The bound, or `None` for unbounded storage.
    const CAPACITY: Option<usize>;
    /// Whether a receiver may sleep on [`PopError::Busy`]: the producer
    /// writing the value publishes it with a `SeqCst` store and then checks
    /// the receivers' waiting flag (`SeqCst`), so a receiver that registers
    /// (a `SeqCst` store of the flag) and then still finds the value
    /// unpublished (a `SeqCst` load) is woken by that producer. The storages
    /// say so for large values with many producers (`Slot::publish`), where
    /// a receiver spinning on a 1 KiB copy kept the tasks of a tokio
    /// runtime on different workers.
    const NOTIFIES_BUSY: bool = false;

    /// Empty, open storage.
    fn new() -> Self;

    /// A cursor for the consumer, at the position the storage has
    /// published. A single consumer is made one when its channel is made,
    /// and uses no other.
    fn cursor(&self) -> Self::Cursor;

    /// A cursor for the producer, at the position the storage has
    /// published. A single producer is made one when its channel is made,
    /// and uses no other.
    fn producer_cursor(&self) -> Self::ProducerCursor;

    /// Pushes `value` if there is capacity now.
    ///
    /// # Errors
    ///
    /// Hands `value` back in [`PushError::Full`] when no capacity is free or
    /// senders are queued ahead (never for unbounded storage), and in
    /// [`PushError::Closed`] when the storage is closed.
    ///
    /// # Safety
    ///
    /// The producer contract: with a single producer, `cursor` came from
    /// [`Storage::producer_cursor`] of this storage, and no other producer
    /// cursor of it has been used since it was made. (Every producer-side
    /// call takes the cursor by `&mut`, so no two of them overlap.)
    unsafe fn try_push(
        &self,
        cursor: &mut Self::ProducerCursor,
        value: Self::Item,
    ) -> Result<(), PushError<Self::Item>>;

    /// As [`Storage::try_push`], with the value in `*value`. A send future
    /// pushes straight from its own field: the ring moves the value out only
    /// once it has a slot for it, so a large value is copied once, into the
    /// slot, and one that does not fit is not copied at all. This default
    /// takes it first and puts it back when the push fails.
    ///
    /// # Errors
    ///
    /// As [`Storage::try_push`]; the value is then back in `*value`.
    ///
    /// # Safety
    ///
    /// As for [`Storage::try_push`], and `*value` holds a value.
    unsafe fn try_push_from(
        &self,
        cursor: &mut Self::ProducerCursor,
        value: &mut Option<Self::Item>,
    ) -> Result<(), PushError<()>> {
        let item = value.take().expect("a value to push");
        // SAFETY: forwarded from the caller.
        match unsafe { self.try_push(cursor, item) } {
            Ok(()) => Ok(()),
            Err(PushError::Full(item)) => {
                *value = Some(item);
                Err(PushError::Full(()))
            }
            Err(PushError::Closed(item)) => {
                *value = Some(item);
                Err(PushError::Closed(()))
            }
        }
    }

    /// Pops the next value.
    ///
    /// # Errors
    ///
    /// [`PopError::Empty`] when no value is stored and the storage is open,
    /// [`PopError::Busy`] when the next value is claimed but still being
    /// written, and [`PopError::Closed`] when the storage is closed and
    /// drained.
    ///
    /// # Safety
    ///
    /// The consumer contract: with a single consumer, `cursor` came from
    /// [`Storage::cursor`] of this storage, and no other cursor of it has
    /// been used since it was made. (Every consumer-side call takes the
    /// cursor by `&mut`, so no two of them overlap.)
    unsafe fn try_pop(&self, cursor: &mut Self::Cursor) -> Result<Self::Item, PopError> {
        // SAFETY: forwarded from the caller.
        let mut front = unsafe { self.front(cursor) }?;
        // SAFETY: `front` came from `front` and is taken once, then released.
        let value = unsafe { self.take_front(&mut front) };
        // SAFETY: as above.
        unsafe { self.release_front(cursor, front) };
        Ok(value)
    }

    /// A pop in three steps, for a caller that acts between them: `front`
    /// finds the next value (and, with many consumers, claims it),
    /// [`Storage::take_front`] moves it out, and [`Storage::release_front`]
    /// frees its place for the producers, after which the caller wakes a
    /// sender waiting for that place.
    ///
    /// # Errors
    ///
    /// As [`Storage::try_pop`].
    ///
    /// # Safety
    ///
    /// The consumer contract of [`Storage::try_pop`]; every front must be
    /// taken once and then released, with the same cursor, before the next
    /// `front` with that cursor.
    unsafe fn front(&self, cursor: &mut Self::Cursor) -> Result<Self::Front, PopError>;

    /// Moves the value out of `front`.
    ///
    /// # Safety
    ///
    /// `front` came from [`Storage::front`] of this storage and has not been
    /// taken from.
    unsafe fn take_front(&self, front: &mut Self::Front) -> Self::Item;

    /// Frees the place of a taken front for the producers.
    ///
    /// # Safety
    ///
    /// `front` came from [`Storage::front`] of this storage with `cursor`
    /// and was taken from exactly once.
    unsafe fn release_front(&self, cursor: &mut Self::Cursor, front: Self::Front);

    /// The next value, left in place, for as long as `cursor` is not used
    /// again.
    ///
    /// # Safety
    ///
    /// Single consumer, with the consumer contract of [`Storage::try_pop`].
    unsafe fn peek<'a>(&'a self, cursor: &'a mut Self::Cursor) -> Option<&'a Self::Item>;

    /// Freezes the boundary: every push that completed before stays
    /// poppable, every later push fails. True if this call closed it.
    /// `from_producer` says the caller is the single producer (it then
    /// knows the boundary exactly).
    ///
    /// # Safety
    ///
    /// With a single producer and `from_producer`, no producer-side method
    /// runs at the same time.
    unsafe fn close(&self, from_producer: bool) -> bool;

    /// Whether `close` has happened.
    fn is_closed(&self) -> bool;

    /// The position of the next value to pop: how many values have been
    /// popped (or claimed by a consumer), a count that only grows. A query.
    fn head_position(&self) -> u64;

    /// Values pushed and not yet popped.
    fn len(&self) -> usize;

    /// A receiver that just raised its waiting flag calls this before it
    /// re-checks: a single producer that publishes with plain stores is made
    /// to see the flag or to have its publish seen (`wait/fence.rs`).
    fn before_recv_wait(&self) {}

    /// The same for a sender waiting for a single consumer to free capacity.
    fn before_send_wait(&self) {}

    /// The single producer, after a push through `try_push` (not through a
    /// unit): lets a fenced producer go back to plain stores once nobody has
    /// waited for a while. `waiting` reads the receivers' flag.
    ///
    /// # Safety
    ///
    /// The producer contract of [`Storage::try_push`].
    unsafe fn after_push(&self, cursor: &mut Self::ProducerCursor, waiting: impl Fn() -> bool) {
        let _ = (cursor, waiting);
    }

    /// The single consumer, after a pop: as [`Storage::after_push`], with the
    /// senders' flag.
    ///
    /// # Safety
    ///
    /// The consumer contract of [`Storage::try_pop`].
    unsafe fn after_pop(&self, cursor: &mut Self::Cursor, waiting: impl Fn() -> bool) {
        let _ = (cursor, waiting);
    }

    /// No value is stored.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// No push could succeed now: queued values plus held units fill the
    /// bound, or senders are queued. Never true for unbounded storage.
    fn is_full(&self) -> bool;

    /// Takes `n` units of capacity if that many are free and no sender is
    /// queued ahead (see [`Storage::set_waiting`]). Unbounded storage always
    /// has them, unless closed.
    ///
    /// # Errors
    ///
    /// [`PushError::Full`] when fewer than `n` units are free or senders are
    /// queued ahead (never for unbounded storage), and [`PushError::Closed`]
    /// when the storage is closed.
    ///
    /// # Safety
    ///
    /// The producer contract of [`Storage::try_push`], and `n` is at least
    /// 1 and at most [`Storage::CAPACITY`] where there is one
    /// (`Chan::try_reserve` checks both).
    unsafe fn try_acquire(
        &self,
        cursor: &mut Self::ProducerCursor,
        n: usize,
    ) -> Result<(), PushError<()>>;

    /// Takes up to `n` free units of capacity for queued senders, ignoring
    /// the queue, and returns how many it took (0 when closed or full).
    /// Unbounded storage has no limit and grants all `n`.
    fn grant(&self, n: usize) -> usize;

    /// False when [`Storage::grant`] would certainly take nothing now: the
    /// bound is full, counting held units. An override must look with
    /// `SeqCst` loads of what frees capacity, so that a sender that
    /// registered before the look and finds nothing free is sure the
    /// capacity it waits for is freed after its registration, by a party
    /// that then sees it waiting and grants. True when unsure; the default
    /// (unbounded storage, whose senders never wait) always is.
    fn may_grant(&self) -> bool {
        true
    }

    /// Pushes `value` through one held unit, which is consumed. When the
    /// storage is closed the unit is released and the value handed back.
    ///
    /// # Errors
    ///
    /// Hands `value` back when the storage is closed.
    ///
    /// # Safety
    ///
    /// The caller holds a unit, and the producer contract of
    /// [`Storage::try_push`]. (The units of a single producer may push from
    /// several threads; they take turns on its cursor.)
    unsafe fn push_reserved(
        &self,
        cursor: &mut Self::ProducerCursor,
        value: Self::Item,
    ) -> Result<(), Self::Item>;

    /// Returns `n` held units (a `SeqCst` operation: freeing capacity is a
    /// condition change waiting senders pair with). Unbounded storage holds
    /// no units and has nothing to return.
    ///
    /// # Safety
    ///
    /// The caller holds `n` units (from [`Storage::try_acquire`] or
    /// [`Storage::grant`]) and gives up each of them here: returning a unit
    /// nobody holds would let a producer overwrite a queued value.
    unsafe fn release(&self, n: usize);

    /// Marks senders as queued (true) or not; while marked, `try_push` and
    /// `try_acquire` report `Full`, so newcomers cannot take capacity that
    /// belongs to a waiter. Called under the wait queue's lock. Unbounded
    /// storage is never full, so senders never queue on it.
    fn set_waiting(&self, waiting: bool);

    /// Drops every value still stored, waiting for in-flight pushes that
    /// linearised before the close.
    ///
    /// # Safety
    ///
    /// The storage is closed and no consumer-side method runs now or later
    /// (the last receiver is going away).
    unsafe fn drain(&self);
}

/// Capacity accounting of bounded storage: held permits and grants.
///
/// Queued values, plus units held as permits, plus units granted to woken
/// waiters, never exceed [`Capacity::CAP`]. A unit reserves capacity, not a
/// position: a value pushed through a unit takes its position when it is
/// pushed.
///
/// # Safety
///
/// As for [`Storage`]; in addition the accounting above holds at every
/// instant, and freeing capacity (popping, [`Storage::release`]) is a
/// `SeqCst` operation that waiting senders can pair with.
pub unsafe trait Capacity: Storage {
    /// The bound.
    const CAP: usize;

    /// Units held as permits or grants.
    fn reserved(&self) -> usize;
}

/// A cursor of a side with many endpoints, made from nothing where it acts.
///
/// # Safety
///
/// `C` is the [`Storage::ProducerCursor`] of a storage with many producers
/// or the [`Storage::Cursor`] of one with many consumers: zero-sized
/// (checked) and holding nothing (the [`Storage`] contract), so a dangling,
/// aligned pointer is a valid, unique reference to one.
///
/// # Panics
///
/// If `C` is not zero-sized. The check folds away; it is not a `const`
/// assertion, so that a generic caller may name this in a branch that only
/// many endpoints take.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "a reference conversion on every ready path of many endpoints"
)]
pub(crate) unsafe fn conjured_cursor<'a, C>() -> &'a mut C {
    assert!(
        size_of::<C>() == 0,
        "the cursor of many endpoints holds nothing"
    );
    // SAFETY: the caller's contract.
    unsafe { std::ptr::NonNull::dangling().as_mut() }
}

/// The cursor of one of many producers, conjured where it acts.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "a reference conversion on every send's ready path"
)]
pub(crate) fn many_producers_cursor<'a, S: Storage<Senders = Many>>() -> &'a mut S::ProducerCursor {
    const {
        assert!(
            size_of::<S::ProducerCursor>() == 0,
            "the cursor of many producers holds nothing"
        );
    }
    // SAFETY: the producer cursor of a storage with many producers.
    unsafe { conjured_cursor() }
}

/// The cursor of one of many consumers, conjured where it acts.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "a reference conversion on every receive's ready path"
)]
pub(crate) fn many_consumers_cursor<'a, S: Storage<Receivers = Many>>() -> &'a mut S::Cursor {
    const {
        assert!(
            size_of::<S::Cursor>() == 0,
            "the cursor of many consumers holds nothing"
        );
    }
    // SAFETY: the consumer cursor of a storage with many consumers.
    unsafe { conjured_cursor() }
}

/// Drops every value `next` yields; `next` must move its cursor past a
/// value before returning it, so none is dropped twice. A destructor that
/// panics does not stop the others, however many panic: each value is
/// dropped on its own, and the first panic is resumed after the last one,
/// unless the thread is already unwinding (a second panic would abort the
/// process), where it is dropped.
pub(crate) fn drop_each<T>(mut next: impl FnMut() -> Option<T>) {
    let mut panic = None;
    while let Some(value) = next() {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| drop(value))) {
            panic.get_or_insert(payload);
        }
    }
    resume(panic);
}
