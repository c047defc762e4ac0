//! The channel: one storage, two wait sets, and the endpoint counts.
//!
//! [`Chan`] is generic over its [`Storage`]; the six public channels are
//! instantiations of it with a [`Ring`](crate::ring::Ring) or a
//! [`List`](crate::list::List) and the producer and consumer
//! [arity](crate::arity) of their topology. It owns no policy of its own
//! beyond who is woken when:
//!
//! - a push that succeeds notifies one waiting receiver, if the receivers'
//!   wait set says anyone waits (one `SeqCst` load, free on x86);
//! - a pop, a returned permit or a cancelled grant frees capacity, and if
//!   senders wait, capacity is *granted* to them in the order they queued
//!   (see [`crate::wait`]), so a woken sender already owns its slot;
//! - closing, or the last sender or receiver going away, wakes everybody.
//!
//! Nothing here locks, fences or touches a waker while nobody waits.
//!
//! # Safety contract of single sides
//!
//! Methods that move values are `unsafe`. Each side passes its cursor by
//! `&mut`: the producer's ([`Storage::ProducerCursor`]) or the consumer's
//! ([`Storage::Cursor`]). With one producer or one consumer, the caller
//! promises that it is that side's one cursor ([`Chan::producer_cursor`],
//! [`Chan::cursor`]); with many, the cursor holds nothing. A consumer-side
//! call is also made for a receiver still counted, one whose
//! [`Chan::drop_receiver`] has not been called, since the last receiver's
//! drain takes the values left without claiming them against other
//! consumers. The [`endpoint`](crate::endpoint) handles keep these promises
//! in their types (each single endpoint owns its side's one cursor, and
//! every handle counts itself until it drops), and they are how safe code,
//! the facade included, moves values.

use std::fmt;
use std::mem::ManuallyDrop;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crossbeam_utils::CachePadded;

use crate::arity::{Arity, Many};
use crate::error::{SendError, TryRecvError, TrySendError};
use crate::park::ReceiveWaits;
use crate::slot::is_large;
use crate::storage::{PopError, PushError, Storage, many_producers_cursor};
use crate::sync::{Arc, AtomicUsize, Ordering};
use crate::unwind::{Panic, resume};
use crate::wait::{Queue, WaitSet};

/// The wait set of the senders of storage `S`.
pub type TxWait<S> = <<S as Storage>::Senders as Arity>::WaitSet;
/// The wait set of the receivers of storage `S`.
pub type RxWait<S> = <<S as Storage>::Receivers as Arity>::WaitSet;

/// Read-mostly words: written only when somebody starts or stops waiting.
struct Waiters<S: Storage> {
    /// Receivers waiting for a value.
    rx: RxWait<S>,
    /// Senders waiting for capacity.
    tx: TxWait<S>,
    /// Futures of `Sender::closed`.
    closed: Queue,
    /// How the blocking receives' last waits went, which steers how the
    /// next one waits.
    receive_waits: ReceiveWaits,
}

/// A channel over storage `S`, shared by its endpoints through an [`Arc`].
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::chan::Chan;
/// use asyncband_core::ring::Ring;
///
/// let chan = Chan::<Ring<u32, 4, Many, One>>::new();
/// let mut cursor = chan.cursor();
/// chan.try_send(7).unwrap();
/// // SAFETY: `cursor` is the only consumer's only cursor.
/// assert_eq!(unsafe { chan.try_recv(&mut cursor) }, Ok(7));
/// ```
pub struct Chan<S: Storage> {
    storage: S,
    waiters: CachePadded<Waiters<S>>,
    senders: CachePadded<AtomicUsize>,
    receivers: AtomicUsize,
    /// Weak senders and weak receivers: counted for the queries only, they
    /// keep nothing open.
    weak_senders: AtomicUsize,
    weak_receivers: AtomicUsize,
}

impl<S: Storage> fmt::Debug for Chan<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chan")
            .field("storage", &self.storage)
            .field("rx", &self.waiters.rx)
            .field("tx", &self.waiters.tx)
            .field("len", &self.storage.len())
            .field("capacity", &S::CAPACITY)
            .field("closed", &self.storage.is_closed())
            .field("senders", &self.sender_count())
            .field("receivers", &self.receiver_count())
            .field("weak_senders", &self.weak_sender_count())
            .field("weak_receivers", &self.weak_receiver_count())
            .finish()
    }
}

impl<S: Storage> Chan<S> {
    /// A new open channel with one sender and one receiver counted.
    #[must_use]
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            storage: S::new(),
            waiters: CachePadded::new(Waiters {
                rx: Default::default(),
                tx: Default::default(),
                closed: Queue::default(),
                receive_waits: ReceiveWaits::default(),
            }),
            senders: CachePadded::new(AtomicUsize::new(1)),
            receivers: AtomicUsize::new(1),
            weak_senders: AtomicUsize::new(0),
            weak_receivers: AtomicUsize::new(0),
        })
    }

    /// The storage, for queries.
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// A consumer's cursor, at the position the consumers have published
    /// (see [`Storage::cursor`]). A single consumer's endpoint makes one
    /// when the channel is made and uses no other.
    pub fn cursor(&self) -> S::Cursor {
        self.storage.cursor()
    }

    /// A producer's cursor, at the position the producers have published
    /// (see [`Storage::producer_cursor`]). A single producer's endpoint
    /// makes one when the channel is made and uses no other.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband_core::arity::One;
    /// use asyncband_core::chan::Chan;
    /// use asyncband_core::ring::Ring;
    ///
    /// let chan = Chan::<Ring<u8, 2, One, One>>::new();
    /// let (mut tail, mut cursor) = (chan.producer_cursor(), chan.cursor());
    /// // SAFETY: `tail` and `cursor` are the only producer's and the only
    /// // consumer's only cursors.
    /// unsafe {
    ///     chan.try_send_unchecked(&mut tail, 3).unwrap();
    ///     assert_eq!(chan.try_recv(&mut cursor), Ok(3));
    /// }
    /// ```
    pub fn producer_cursor(&self) -> S::ProducerCursor {
        self.storage.producer_cursor()
    }

    pub(crate) fn rx_wait(&self) -> &RxWait<S> {
        &self.waiters.rx
    }

    pub(crate) fn tx_wait(&self) -> &TxWait<S> {
        &self.waiters.tx
    }

    pub(crate) fn closed_wait(&self) -> &Queue {
        &self.waiters.closed
    }

    pub(crate) fn receive_waits(&self) -> &ReceiveWaits {
        &self.waiters.receive_waits
    }

    /// After a push: wakes one waiting receiver.
    #[inline]
    pub(crate) fn notify_receivers(&self) {
        if self.waiters.rx.is_waiting() {
            self.waiters.rx.notify(1);
        }
    }

    /// A sender is about to wait for capacity. With many receivers, one of
    /// them may be asleep although the channel holds values: the
    /// notification of the send that woke nobody went to a `recv` future
    /// that was `mem::forget`-ten while registered, and at capacity 1 no
    /// later send comes to make up for it. A full channel has something for
    /// receivers (values, or units that become values), so wake one: its
    /// receive frees the capacity this sender waits for. A receiver woken
    /// for nothing re-checks and waits again.
    pub(crate) fn nudge_receivers(&self) {
        if <S::Receivers as Arity>::MANY {
            self.notify_receivers();
        }
    }

    /// A sender has just registered to wait: capacity freed before it did
    /// was offered to nobody, so offer it now (to the front waiter, maybe
    /// this one). Only senders that share a queue need this: a single
    /// sender re-checks with its own retry, and a grant to its cell would
    /// only wake itself for a poll that finds nothing new.
    pub(crate) fn grant_freed_before_register(&self) {
        if <S::Senders as Arity>::MANY {
            self.grant_senders();
        }
    }

    /// Passes `units` notifications a receiver held but did not use to the
    /// next waiting receivers.
    pub(crate) fn pass_notifications(&self, units: usize) {
        if units > 0 {
            self.waiters.rx.notify(units);
        }
    }

    /// After capacity was freed: grants it to waiting senders, in order.
    #[inline]
    pub(crate) fn notify_senders(&self) {
        if self.waiters.tx.is_waiting() {
            self.grant_senders();
        }
    }

    /// Grants free capacity to waiting senders, front first.
    pub(crate) fn grant_senders(&self) {
        self.waiters.tx.grant(
            |n| self.storage.grant(n),
            |waiting| self.storage.set_waiting(waiting),
        );
    }

    /// Gives back `units` of capacity a sender held and passes them on.
    ///
    /// # Safety
    ///
    /// The caller holds `units` units of this channel (reserved with
    /// [`Chan::try_reserve`], [`Chan::reserve_blocking`] or a
    /// [`Reserve`](crate::future::Reserve) future, or granted to a waiting sender) and gives each of
    /// them up here.
    pub unsafe fn return_units(&self, units: usize) {
        if units > 0 {
            // SAFETY: the caller holds `units` units (this function's
            // `# Safety`).
            unsafe { self.storage.release(units) };
            self.grant_senders();
        }
    }

    /// Pushes through a held unit and notifies a receiver.
    ///
    /// # Errors
    ///
    /// Hands `value` back in a [`SendError`] when the channel is closed; the
    /// unit is released.
    ///
    /// # Safety
    ///
    /// The caller holds a unit; the producer contract (module docs) for
    /// `cursor`.
    pub unsafe fn push_reserved(
        &self,
        cursor: &mut S::ProducerCursor,
        value: S::Item,
    ) -> Result<(), SendError<S::Item>> {
        // SAFETY: forwarded from the caller.
        let pushed = unsafe { self.push_unit(cursor, value) };
        if pushed.is_ok() {
            self.notify_receivers();
        }
        pushed
    }

    /// [`Chan::push_reserved`] without the notification, for a caller that
    /// holds a turn at the cursor and notifies once it has let the turn go
    /// (no waker runs while other units wait for the turn).
    ///
    /// # Errors
    ///
    /// As [`Chan::push_reserved`].
    ///
    /// # Safety
    ///
    /// As for [`Chan::push_reserved`].
    pub(crate) unsafe fn push_unit(
        &self,
        cursor: &mut S::ProducerCursor,
        value: S::Item,
    ) -> Result<(), SendError<S::Item>> {
        // SAFETY: forwarded from the caller.
        unsafe { self.storage.push_reserved(cursor, value) }.map_err(SendError)
    }

    /// Sends `value` if there is capacity now.
    ///
    /// # Errors
    ///
    /// Hands `value` back in [`TrySendError::Full`] when no capacity is free
    /// or senders are queued ahead, and in [`TrySendError::Disconnected`]
    /// when the channel is closed.
    ///
    /// # Safety
    ///
    /// The producer contract (module docs) for `cursor`.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "the ready path of every blocking and try call; LLVM otherwise often leaves it out of line, a call per message"
    )]
    pub unsafe fn try_send_unchecked(
        &self,
        cursor: &mut S::ProducerCursor,
        value: S::Item,
    ) -> Result<(), TrySendError<S::Item>> {
        // SAFETY: forwarded from the caller.
        match unsafe { self.storage.try_push(cursor, value) } {
            Ok(()) => {
                // SAFETY: the producer contract for `cursor`, which this
                // function's caller upholds (its `# Safety`).
                unsafe { self.pushed(cursor) };
                Ok(())
            }
            Err(PushError::Full(value)) => Err(TrySendError::Full(value)),
            Err(PushError::Closed(value)) => Err(TrySendError::Disconnected(value)),
        }
    }

    /// As [`Chan::try_send_unchecked`], with the value in `*value`, taken
    /// out only by a send that succeeds (see [`Storage::try_push_from`]).
    ///
    /// # Errors
    ///
    /// As [`Chan::try_send_unchecked`]; the value is then still in `*value`.
    ///
    /// # Safety
    ///
    /// The producer contract (module docs) for `cursor`, and `*value` holds
    /// a value.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "every send's ready path; as `Ring::try_push_from`, LLVM otherwise leaves it out of line"
    )]
    pub unsafe fn try_send_from(
        &self,
        cursor: &mut S::ProducerCursor,
        value: &mut Option<S::Item>,
    ) -> Result<(), TrySendError<()>> {
        // SAFETY: forwarded from the caller.
        match unsafe { self.storage.try_push_from(cursor, value) } {
            Ok(()) => {
                // SAFETY: the producer contract for `cursor`, which this
                // function's caller upholds (its `# Safety`).
                unsafe { self.pushed(cursor) };
                Ok(())
            }
            Err(PushError::Full(())) => Err(TrySendError::Full(())),
            Err(PushError::Closed(())) => Err(TrySendError::Disconnected(())),
        }
    }

    /// After a value was pushed: wakes a waiting receiver, and lets a fenced
    /// single producer count the publish (`wait/fence.rs`).
    ///
    /// # Safety
    ///
    /// The producer contract (module docs) for `cursor`.
    #[inline]
    unsafe fn pushed(&self, cursor: &mut S::ProducerCursor) {
        self.notify_receivers();
        // SAFETY: the producer contract for `cursor`, which this function's
        // caller upholds (its `# Safety`).
        unsafe {
            self.storage
                .after_push(cursor, || self.waiters.rx.is_waiting());
        }
    }

    /// After a value was popped: wakes a sender waiting for the room, and
    /// lets a fenced single consumer count the publish (`wait/fence.rs`).
    ///
    /// # Safety
    ///
    /// Consumer contract (module docs).
    #[inline]
    pub(crate) unsafe fn popped(&self, cursor: &mut S::Cursor) {
        // A waker that unwinds out of the grant skips the count below once;
        // it only decides when the fence goes back to plain stores.
        self.notify_senders();
        // SAFETY: `after_pop` needs the consumer contract, which this
        // function's caller upholds (its `# Safety`).
        unsafe {
            self.storage
                .after_pop(cursor, || self.waiters.tx.is_waiting());
        }
    }

    /// Takes the value `front` found, releases its place and notifies
    /// ([`Chan::popped`]): the receive of a small value, held in registers
    /// (or a local) until it is returned, so a waker that panics in the
    /// notification drops it once. A large one goes through
    /// [`Chan::popped_guard`] instead (see [`Popped`]).
    ///
    /// # Safety
    ///
    /// Consumer contract (module docs); `front` came from this channel's
    /// storage with `cursor`.
    #[inline]
    pub(crate) unsafe fn take_popped(
        &self,
        cursor: &mut S::Cursor,
        mut front: S::Front,
    ) -> S::Item {
        // SAFETY: the caller's contract; taken once, then released.
        let value = unsafe { self.storage.take_front(&mut front) };
        // SAFETY: as above.
        unsafe {
            self.storage.release_front(cursor, front);
            self.popped(cursor);
        }
        value
    }

    /// Holds the value `front` found until the guard drops; see [`Popped`].
    ///
    /// # Safety
    ///
    /// Consumer contract (module docs); `front` came from this channel's
    /// storage with `cursor`.
    #[inline]
    pub(crate) unsafe fn popped_guard<'a>(
        &'a self,
        cursor: &'a mut S::Cursor,
        front: S::Front,
    ) -> Popped<'a, S> {
        Popped {
            chan: self,
            cursor,
            front: ManuallyDrop::new(front),
        }
    }

    /// Receives the next value if one is ready.
    ///
    /// A value whose send completed before this call is found: when the
    /// next position is claimed by a producer that is still writing it (a
    /// few instructions, no user code), the receive waits the write out,
    /// spinning and then yielding, rather than report the channel empty
    /// with a completed value behind it.
    ///
    /// # Errors
    ///
    /// [`TryRecvError::Empty`] when no value is ready and no write is in
    /// flight, and [`TryRecvError::Disconnected`] when the channel is closed
    /// and every value sent before the close was received.
    ///
    /// # Safety
    ///
    /// Consumer contract (module docs).
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a ready path: out of line it costs a call per message"
    )]
    pub unsafe fn try_recv(&self, cursor: &mut S::Cursor) -> Result<S::Item, TryRecvError> {
        // SAFETY: forwarded from the caller.
        match unsafe { self.storage.front(cursor) } {
            Ok(front) if is_large::<S::Item>() => {
                // SAFETY: forwarded from the caller (consumer contract).
                let mut popped = unsafe { self.popped_guard(cursor, front) };
                // SAFETY: taken once; `popped` releases it afterwards.
                Ok(unsafe { popped.take() })
            }
            Ok(mut front) => {
                // `Chan::take_popped`, spelled out: this shape of the arm
                // lays out the one-thread ready path best.
                // SAFETY: forwarded from the caller (consumer contract);
                // taken once, then released.
                let value = unsafe { self.storage.take_front(&mut front) };
                // SAFETY: as above.
                unsafe {
                    self.storage.release_front(cursor, front);
                    self.popped(cursor);
                }
                Ok(value)
            }
            Err(PopError::Empty) => Err(TryRecvError::Empty),
            Err(PopError::Closed) => Err(TryRecvError::Disconnected),
            // SAFETY: forwarded from the caller.
            Err(PopError::Busy) => unsafe { self.try_recv_behind_write(cursor) },
        }
    }

    /// [`Chan::try_recv`] once the next position turned out claimed by a
    /// producer that is still writing it: the write ends without waiting on
    /// anything, so wait it out (spinning, then yielding in case the
    /// producer's thread was preempted) instead of reporting a value
    /// missing. Out of line, so the ready path stays small.
    ///
    /// # Safety
    ///
    /// As for [`Chan::try_recv`].
    #[cold]
    #[inline(never)]
    unsafe fn try_recv_behind_write(
        &self,
        cursor: &mut S::Cursor,
    ) -> Result<S::Item, TryRecvError> {
        let mut spins = 0;
        loop {
            spins += 1;
            if spins <= crate::sync::BUSY_TRY_SPINS {
                crate::sync::spin_hint();
            } else {
                crate::sync::thread::yield_now();
            }
            // SAFETY: forwarded from the caller.
            match unsafe { self.storage.front(cursor) } {
                // SAFETY: forwarded from the caller; `front` came from this
                // storage. (A large value is taken through a local here:
                // this path is rare, and then a panicking waker drops it.)
                Ok(front) => return Ok(unsafe { self.take_popped(cursor, front) }),
                Err(PopError::Empty) => return Err(TryRecvError::Empty),
                Err(PopError::Closed) => return Err(TryRecvError::Disconnected),
                Err(PopError::Busy) => {}
            }
        }
    }

    /// Closes the channel: senders fail from now on, receivers drain what
    /// was sent and then see it closed. Wakes every waiter. True if this call
    /// closed it.
    ///
    /// # Safety
    ///
    /// With `from_producer` on a single-producer channel, the caller is the
    /// producer and no producer-side call runs at the same time.
    pub unsafe fn close(&self, from_producer: bool) -> bool {
        // SAFETY: with `from_producer` on a single-producer channel the
        // caller is the producer and no producer-side call runs now (this
        // function's `# Safety`), which is what `Storage::close` requires.
        let closed = unsafe { self.storage.close(from_producer) };
        resume(self.wake_all());
        closed
    }

    /// Wakes every waiter: receivers, senders and close waiters. A waker
    /// that panics in one set does not keep the others asleep: every set is
    /// woken, and the first panic is returned for the caller to resume.
    #[must_use = "a waker's panic, to resume"]
    fn wake_all(&self) -> Option<Panic> {
        let mut panic = None;
        let mut wake = |set: &dyn Fn()| {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(set)) {
                panic.get_or_insert(payload);
            }
        };
        wake(&|| self.waiters.rx.wake_all(|_| ()));
        wake(&|| {
            self.waiters
                .tx
                .wake_all(|waiting| self.storage.set_waiting(waiting));
        });
        wake(&|| self.waiters.closed.wake_all(|_| ()));
        panic
    }

    /// Whether the channel is closed (explicitly, or because every sender
    /// or every receiver is gone).
    pub fn is_closed(&self) -> bool {
        self.storage.is_closed()
    }

    /// Live senders.
    pub fn sender_count(&self) -> usize {
        // ORDERING: Relaxed; a query.
        self.senders.load(Ordering::Relaxed)
    }

    /// Live receivers.
    pub fn receiver_count(&self) -> usize {
        // ORDERING: Relaxed; a query.
        self.receivers.load(Ordering::Relaxed)
    }

    /// Counts one more sender.
    ///
    /// # Panics
    ///
    /// When no sender is left: the channel closed for good, and a sender
    /// counted back in would act on it after its close
    /// ([`Chan::try_add_sender`] says so instead).
    pub fn add_sender(&self) {
        assert!(self.try_add_sender(), "`add_sender` with no sender left");
    }

    /// Counts one more sender if any is left (upgrading a weak sender).
    pub fn try_add_sender(&self) -> bool {
        // ORDERING: Relaxed loads; the compare-exchange is AcqRel so an
        // upgrade is ordered against the last sender's drop.
        let mut count = self.senders.load(Ordering::Relaxed);
        loop {
            if count == 0 {
                return false;
            }
            match self.senders.compare_exchange_weak(
                count,
                count + 1,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(current) => count = current,
            }
        }
    }

    /// Counts one more receiver.
    ///
    /// # Panics
    ///
    /// When no receiver is left: the last one has closed the channel and
    /// drains it (`Storage::drain`: no consumer acts then or later).
    pub fn add_receiver(&self) {
        assert!(
            self.try_add_receiver(),
            "`add_receiver` with no receiver left"
        );
    }

    /// Counts one more receiver if any is left (upgrading a weak receiver):
    /// once the last receiver is gone the channel is closed and drained,
    /// and stays so.
    pub fn try_add_receiver(&self) -> bool {
        // ORDERING: as in `try_add_sender`: the compare-exchange is AcqRel,
        // ordered against the last receiver's drop.
        let mut count = self.receivers.load(Ordering::Relaxed);
        loop {
            if count == 0 {
                return false;
            }
            match self.receivers.compare_exchange_weak(
                count,
                count + 1,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(current) => count = current,
            }
        }
    }

    /// Live weak senders.
    pub fn weak_sender_count(&self) -> usize {
        // ORDERING: Relaxed; a query.
        self.weak_senders.load(Ordering::Relaxed)
    }

    /// Live weak receivers.
    pub fn weak_receiver_count(&self) -> usize {
        // ORDERING: Relaxed; a query.
        self.weak_receivers.load(Ordering::Relaxed)
    }

    /// Counts a weak sender coming (`true`) or going (`false`).
    pub fn count_weak_sender(&self, coming: bool) {
        count(&self.weak_senders, coming);
    }

    /// Counts a weak receiver coming (`true`) or going (`false`).
    pub fn count_weak_receiver(&self, coming: bool) {
        count(&self.weak_receivers, coming);
    }

    /// A sender goes away; the last one closes the channel.
    ///
    /// # Safety
    ///
    /// On a single-producer channel the caller is the producer, with no
    /// producer-side call running at the same time.
    pub unsafe fn drop_sender(&self) {
        // ORDERING: AcqRel: the last sender sees every other sender's work.
        if self.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            // SAFETY: the last sender is going away, so no other
            // producer-side call runs; the caller (this function's
            // `# Safety`) is that sender.
            unsafe { self.close(true) };
        }
    }

    /// A receiver goes away; the last one closes the channel and drops the
    /// values still queued, right now.
    ///
    /// # Safety
    ///
    /// The caller gives up one counted receiver (counted by
    /// [`Chan::new`], [`Chan::add_receiver`] or a successful
    /// [`Chan::try_add_receiver`]), once, and makes no consumer-side call
    /// for it from then on. The last receiver's drain takes what is left
    /// without claiming against other consumers, so no consumer-side call
    /// may run during it or later. On a single-consumer channel the caller
    /// is the consumer, going away with its cursor (the drain continues from
    /// where the cursor published the head).
    pub unsafe fn drop_receiver(&self) {
        // ORDERING: AcqRel: the last receiver sees every other receiver's
        // work before it drains.
        if self.receivers.fetch_sub(1, Ordering::AcqRel) == 1 {
            // SAFETY: not the producer; `close(false)` has no contract.
            unsafe { self.storage.close(false) };
            // Waiters are woken after the drain, so a woken sender sees the
            // queued values already dropped; the guard wakes them even when
            // a value's `Drop` panics and unwinds out of the drain.
            let _wake = WakeAllOnDrop(self);
            // SAFETY: closed, and we are the last counted receiver: no
            // consumer-side call runs now or later (this function's
            // `# Safety`).
            unsafe { self.storage.drain() };
        }
    }
}

impl<S: Storage<Senders = Many>> Chan<S> {
    /// Sends `value` if there is capacity now (many producers: always safe).
    ///
    /// # Errors
    ///
    /// As [`Chan::try_send_unchecked`]: [`TrySendError::Full`] when no
    /// capacity is free or senders are queued ahead, and
    /// [`TrySendError::Disconnected`] when the channel is closed; either way
    /// `value` is handed back.
    #[inline]
    pub fn try_send(&self, value: S::Item) -> Result<(), TrySendError<S::Item>> {
        // SAFETY: many producers: the cursor holds nothing, and the contract
        // binds nobody.
        unsafe { self.try_send_unchecked(many_producers_cursor::<S>(), value) }
    }
}

/// Counts one more or one fewer in a count that is only queried.
fn count(counter: &AtomicUsize, coming: bool) {
    // ORDERING: Relaxed; nothing is published through these counts. A count
    // going below zero (more going than came) wraps to a large number: a
    // wrong answer to a query, nothing else.
    if coming {
        counter.fetch_add(1, Ordering::Relaxed);
    } else {
        counter.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Wakes every waiter of a channel when dropped, also during unwinding.
struct WakeAllOnDrop<'a, S: Storage>(&'a Chan<S>);

impl<S: Storage> Drop for WakeAllOnDrop<'_, S> {
    fn drop(&mut self) {
        resume(self.0.wake_all());
    }
}

impl<S: Storage> Chan<S> {
    /// Reserves `n` units of capacity now, for permits. Zero units reserve
    /// nothing; more than the capacity can never be held at once, so such
    /// a reservation is refused as full.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] when fewer than `n` units are free, senders
    /// are queued ahead, or `n` exceeds the capacity, and
    /// [`TrySendError::Disconnected`] when the channel is closed, whatever
    /// `n`.
    ///
    /// # Safety
    ///
    /// The producer contract (module docs) for `cursor`.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband_core::arity::{Many, One};
    /// use asyncband_core::chan::Chan;
    /// use asyncband_core::error::TrySendError;
    /// use asyncband_core::ring::Ring;
    ///
    /// let chan = Chan::<Ring<u8, 4, Many, One>>::new();
    /// // SAFETY: many producers: the cursor holds nothing.
    /// unsafe {
    ///     assert_eq!(chan.try_reserve(&mut (), 0), Ok(()));
    ///     assert_eq!(chan.try_reserve(&mut (), 5), Err(TrySendError::Full(())));
    ///     assert_eq!(chan.try_reserve(&mut (), 4), Ok(()));
    /// }
    /// ```
    pub unsafe fn try_reserve(
        &self,
        cursor: &mut S::ProducerCursor,
        n: usize,
    ) -> Result<(), TrySendError<()>> {
        // A count the storage never acquires (none, or more than it holds)
        // answers from the close flag first, as every send does.
        let beyond = S::CAPACITY.is_some_and(|cap| n > cap);
        if n == 0 || beyond {
            return if self.is_closed() {
                Err(TrySendError::Disconnected(()))
            } else if beyond {
                Err(TrySendError::Full(()))
            } else {
                Ok(())
            };
        }
        // SAFETY: forwarded from the caller; `1 <= n <= CAP`, checked above.
        match unsafe { self.storage.try_acquire(cursor, n) } {
            Ok(()) => Ok(()),
            Err(PushError::Full(())) => Err(TrySendError::Full(())),
            Err(PushError::Closed(())) => Err(TrySendError::Disconnected(())),
        }
    }
}

/// A popped value's place, held between [`Storage::front`] and
/// [`Storage::release_front`]: dropping the guard releases the place and
/// wakes a sender waiting for it ([`Chan::popped`]).
///
/// A receive builds its result from [`Popped::take`] while the guard is
/// alive, typically as its return expression, and the guard drops after.
/// The value then goes from the slot straight into the result: a value
/// held across the wake, which is opaque to the optimiser, is copied once
/// out of the slot and once more into the result (`benches/NOTES.md`).
///
/// The price: if a waker panics in the wake, the unwind leaves through a
/// function whose result is already written, and Rust does not drop a
/// result then. The value is neither delivered nor dropped (leaked: safe,
/// and it happens only when a waker panics); the slot, the grant and every
/// other waiter are handled as usual.
pub(crate) struct Popped<'a, S: Storage> {
    chan: &'a Chan<S>,
    cursor: &'a mut S::Cursor,
    front: ManuallyDrop<S::Front>,
}

impl<S: Storage> Popped<'_, S> {
    /// Moves the value out.
    ///
    /// # Safety
    ///
    /// Called exactly once before the guard drops.
    #[inline]
    pub(crate) unsafe fn take(&mut self) -> S::Item {
        // SAFETY: the front came from this storage (`Chan::popped_guard`) and
        // is taken once (our caller's contract).
        unsafe { self.chan.storage.take_front(&mut self.front) }
    }
}

impl<S: Storage> Drop for Popped<'_, S> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the front is moved out only here, once.
        let front = unsafe { ManuallyDrop::take(&mut self.front) };
        // SAFETY: taken from exactly once (`Popped::take`'s contract), with
        // the cursor it came from and the consumer contract
        // (`Chan::popped_guard`).
        unsafe {
            self.chan.storage.release_front(self.cursor, front);
            self.chan.popped(self.cursor);
        }
    }
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests {
    use super::Chan;
    use crate::arity::{Many, One};
    use crate::error::TrySendError;
    use crate::ring::Ring;
    use crate::storage::{Capacity, Storage};

    /// Reserves zero, more than the capacity, and far more, through
    /// `cursor`, then checks that nothing was held.
    ///
    /// # Safety
    ///
    /// `cursor` is a producer cursor of `chan` that nothing else uses.
    unsafe fn reserve_out_of_range<S: Storage + Capacity>(
        chan: &Chan<S>,
        cursor: &mut S::ProducerCursor,
    ) {
        let cap = S::CAPACITY.unwrap();
        // SAFETY: the caller's contract.
        unsafe {
            assert_eq!(chan.try_reserve(cursor, 0), Ok(()));
            for n in [cap + 1, usize::MAX / 2, usize::MAX] {
                assert_eq!(
                    chan.try_reserve(cursor, n),
                    Err(TrySendError::Full(())),
                    "{n}"
                );
            }
        }
        assert_eq!(chan.storage().reserved(), 0);
    }

    #[test]
    fn a_reservation_of_zero_or_more_than_the_capacity_holds_nothing() {
        let spsc = Chan::<Ring<u64, 4, One, One>>::new();
        let (mut tail, mut cursor) = (spsc.producer_cursor(), spsc.cursor());
        // SAFETY: the only producer's and the only consumer's cursors.
        unsafe {
            spsc.try_send_unchecked(&mut tail, 0).unwrap();
            reserve_out_of_range(&spsc, &mut tail);
            for value in 1..4 {
                spsc.try_send_unchecked(&mut tail, value).unwrap();
            }
            for value in 0..4 {
                assert_eq!(spsc.try_recv(&mut cursor), Ok(value));
            }
        }
        let one_consumer = Chan::<Ring<u64, 4, Many, One>>::new();
        // SAFETY: many producers: the cursor holds nothing.
        unsafe { reserve_out_of_range(&one_consumer, &mut ()) };
        let many_consumers = Chan::<Ring<u64, 4, Many, Many>>::new();
        // SAFETY: as above.
        unsafe { reserve_out_of_range(&many_consumers, &mut ()) };
        // SAFETY: closing from no producer has no contract.
        unsafe { many_consumers.close(false) };
        // SAFETY: as above.
        let closed = unsafe { many_consumers.try_reserve(&mut (), 0) };
        assert_eq!(closed, Err(TrySendError::Disconnected(())));
    }

    #[test]
    fn no_sender_or_receiver_is_counted_back_in_once_the_last_is_gone() {
        let chan = Chan::<Ring<u64, 4, Many, Many>>::new();
        chan.try_send(7).unwrap();
        // SAFETY: the receiver and sender `new` counted, each given up once;
        // nothing is received for the receiver afterwards.
        unsafe {
            chan.drop_receiver();
            chan.drop_sender();
        }
        let counted_in = |add: fn(&Chan<Ring<u64, 4, Many, Many>>)| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| add(&chan))).is_ok()
        };
        assert!(
            !counted_in(Chan::add_receiver),
            "add_receiver panics at zero"
        );
        assert!(!counted_in(Chan::add_sender), "add_sender panics at zero");
        assert!(!chan.try_add_receiver() && !chan.try_add_sender());
        assert_eq!((chan.receiver_count(), chan.sender_count()), (0, 0));
        // SAFETY: as above; many consumers' cursor holds nothing.
        let after = unsafe { chan.try_recv(&mut ()) };
        assert_eq!(
            after,
            Err(crate::error::TryRecvError::Disconnected),
            "drained"
        );
    }
}
