//! Bounded storage: a preallocated ring of `CAP` slots.
//!
//! `CAP` is a power of two, so a position maps to its slot with a mask.
//! Positions are 64-bit and never wrap in practice. Two algorithms share
//! the slots, one per producer arity, each in a file of its own:
//!
//! - `indexed.rs`: one producer and one consumer (`spsc`). Each side owns its
//!   position, caches the other's, and publishes with a single store of its
//!   index; no read-modify-write per message.
//! - `stamped.rs`: many producers (`mpsc`, `mpmc`). Producers claim positions
//!   in one shared claim word and publish through a stamp in each slot; a
//!   single consumer takes values with plain loads, many consumers claim
//!   theirs with one compare-exchange.
//!
//! This file holds what both use: the slots, the layout of the shared state
//! and the [`Storage`] methods, each of which hands over to the algorithm
//! of the ring's producer arity (a constant branch that folds away).

use std::marker::PhantomData;
use std::sync::atomic::compiler_fence;

use crossbeam_utils::CachePadded;

use crate::arity::{Arity, Topology};
use crate::boundary::Boundary;
use crate::slot::{Slot, Stamp, is_large, readable, writable};
use crate::storage::{Capacity, PopError, PushError, Storage, drop_each};
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Ordering, SeqCst, UnsafeCell};
use crate::wait::Fence;

mod indexed;
mod stamped;

/// The largest capacity a bounded channel may have: 2^20 slots.
pub const MAX_CAPACITY: usize = 1 << 20;

/// Bounded storage of `CAP` slots for producer arity `P` and consumer arity
/// `C`.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::One;
/// use asyncband_core::ring::Ring;
/// use asyncband_core::storage::{PopError, PushError, Storage};
///
/// let ring = Ring::<u32, 2, One, One>::new();
/// // SAFETY: this thread is the only producer and the only consumer.
/// unsafe {
///     ring.try_push(1).unwrap();
///     ring.try_push(2).unwrap();
///     assert_eq!(ring.try_push(3), Err(PushError::Full(3)));
///     assert_eq!(ring.try_pop(), Ok(1));
///     assert_eq!(ring.try_pop(), Ok(2));
///     assert_eq!(ring.try_pop(), Err(PopError::Empty));
/// }
/// ```
pub struct Ring<T, const CAP: usize, P: Arity, C: Arity>
where
    (P, C): Topology,
{
    /// Written by producers.
    tail: CachePadded<TailSide>,
    /// Written by consumers.
    head: CachePadded<HeadSide>,
    /// One producer: its own state, on a line the consumer never reads
    /// while values flow.
    producer: CachePadded<ProducerSide>,
    /// One consumer: its own state, likewise apart from the producer.
    consumer: CachePadded<ConsumerSide>,
    /// Close protocol of a single producer; read-mostly.
    boundary: CachePadded<Boundary>,
    /// A fixed-size array, so a masked position needs no bounds check.
    slots: Box<[Slot<T, P::Stamp>; CAP]>,
    _arity: PhantomData<(P, C)>,
}

/// A consumer's hold on the value at `pos` (see [`Storage::front`]): found
/// readable and, with many consumers, claimed; freed by `release_front`.
pub struct RingFront<T, S> {
    pos: u64,
    /// The slot of `pos`, found once: `take_front` and `release_front`
    /// would otherwise reload the slot array's address after `front`'s
    /// atomic operations.
    slot: *const Slot<T, S>,
    /// One producer: whether the release publishes fenced, asked of the
    /// consumer's fence in `front` (unused otherwise).
    fenced: bool,
}

impl<T, S> std::fmt::Debug for RingFront<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingFront")
            .field("pos", &self.pos)
            .finish_non_exhaustive()
    }
}

/// The word the consumers read to find values.
struct TailSide {
    /// Many producers: the claim word (layout in the module docs).
    /// One producer: the published tail position.
    word: AtomicU64,
}

/// The word the producers read to find free slots.
struct HeadSide {
    /// Many consumers: the claim word (the next position to take).
    /// One consumer: its position, published for the producer and `len`.
    word: AtomicU64,
}

/// What a single producer reads on every push, kept off the line of the
/// tail it publishes: a consumer that reads that line takes it away (a line
/// that is read and then written migrates to the reader), and the
/// producer's next push would miss on it.
struct ProducerSide {
    /// How it publishes (plain while nobody waits).
    fence: Fence,
    /// Units held as permits.
    reserved: AtomicUsize,
    /// Serialises pushes through units, which may be made from several
    /// threads (permits are `Send`).
    latch: AtomicBool,
    /// The consumer's head as last read.
    ///
    /// # Safety
    ///
    /// Touched only by the single producer.
    head_cache: UnsafeCell<u64>,
    /// Its own tail: always equal to `TailSide::word` outside a push, so
    /// that pushing never reads the published word.
    ///
    /// # Safety
    ///
    /// Touched only by the single producer or the holder of `latch` (the
    /// same rule as for writing `TailSide::word`).
    tail: Own,
}

/// What a single consumer reads on every pop, kept off the line of the head
/// it publishes (as for [`ProducerSide`]).
struct ConsumerSide {
    /// How it frees slots (plain while no sender waits).
    fence: Fence,
    /// One consumer of one producer: the producer's tail as last read.
    ///
    /// # Safety
    ///
    /// Touched only by the single consumer.
    tail_cache: UnsafeCell<u64>,
    /// One consumer of one producer: its own head, always equal to
    /// `HeadSide::word` outside a pop, so that popping never reads the
    /// published word.
    ///
    /// # Safety
    ///
    /// Touched only by the single consumer.
    head: Own,
}

/// A single endpoint's own copy of the position it publishes.
struct Own(UnsafeCell<u64>);

impl Own {
    /// # Safety
    ///
    /// Called only by the endpoint that owns it (the field's rules).
    #[inline]
    unsafe fn get(&self) -> u64 {
        // SAFETY: the caller's contract.
        self.0.with(|own| unsafe { *own })
    }

    /// # Safety
    ///
    /// As for [`Own::get`].
    #[inline]
    unsafe fn set(&self, position: u64) {
        // SAFETY: the caller's contract.
        self.0.with_mut(|own| unsafe { *own = position });
    }

    /// Sets it to `position` and publishes that in `word` (see `publish`).
    ///
    /// # Safety
    ///
    /// As for [`Own::get`].
    #[inline]
    unsafe fn publish(&self, word: &AtomicU64, position: u64, fenced: bool) {
        // SAFETY: the caller's contract.
        unsafe { self.set(position) };
        publish(word, position, fenced);
    }
}

/// A single endpoint's index store: `SeqCst` when fenced (the notifier half
/// of the store-buffer race), otherwise a release store that the compiler
/// may not move after the flag load that follows it (`wait/fence.rs`).
#[inline]
fn publish(index: &AtomicU64, value: u64, fenced: bool) {
    if fenced {
        index.store_sc(value);
    } else {
        // ORDERING: Release pairs with the other side's acquiring (SeqCst)
        // load of the index; a waiter is covered by its barrier.
        index.store_at(value, Ordering::Release);
        compiler_fence(Ordering::SeqCst);
    }
}

// SAFETY: values move between threads through the ring, so `T: Send` is
// required and sufficient; every shared cell is guarded by the protocol in
// the module docs.
unsafe impl<T: Send, const CAP: usize, P: Arity, C: Arity> Send for Ring<T, CAP, P, C> where
    (P, C): Topology
{
}
// SAFETY: as for `Send`; `&Ring` only ever moves values, never shares them.
unsafe impl<T: Send, const CAP: usize, P: Arity, C: Arity> Sync for Ring<T, CAP, P, C> where
    (P, C): Topology
{
}

impl<T, const CAP: usize, P: Arity, C: Arity> Ring<T, CAP, P, C>
where
    (P, C): Topology,
{
    /// The facade rejects a bad `CAP` at compile time with a message that
    /// says what is allowed; here a bad one only has to stay harmless until
    /// `new` refuses it, so nothing below may overflow.
    const MASK: u64 = CAP.wrapping_sub(1) as u64;
    const CAP64: u64 = CAP as u64;

    #[inline]
    #[allow(
        clippy::cast_possible_truncation,
        reason = "`pos & MASK < CAP`, which is a `usize`, so the cast is lossless"
    )]
    fn slot(&self, pos: u64) -> &Slot<T, P::Stamp> {
        // `pos & MASK < CAP`, the array's length: the compiler sees it and
        // drops the bounds check.
        &self.slots[(pos & Self::MASK) as usize]
    }

    /// The consumers' position.
    fn head_pos(&self) -> u64 {
        // ORDERING: SeqCst; a query, and the sender's re-check in `is_full`.
        self.head.word.load_sc()
    }
}

// SAFETY: see the module docs for the protocol; every value is delivered at
// most once (one claim per position) and at least once (claims before CLOSED
// are drained), each producer's values take increasing positions, and the
// condition changes waiters wait for are SeqCst operations.
unsafe impl<T, const CAP: usize, P: Arity, C: Arity> Storage for Ring<T, CAP, P, C>
where
    (P, C): Topology,
{
    type Item = T;
    type Front = RingFront<T, P::Stamp>;
    type Senders = P;
    type Receivers = C;
    const CAPACITY: Option<usize> = Some(CAP);
    const NOTIFIES_BUSY: bool = P::MANY && is_large::<T>();

    fn new() -> Self {
        // A slot must serve exactly one position per lap; that needs a power
        // of two. (The facade already refuses anything else at compile time.)
        assert!(
            CAP.is_power_of_two() && CAP <= MAX_CAPACITY,
            "ring capacity must be a power of two from 1 to 2^20, not {CAP}"
        );
        let mut slots = Box::<[Slot<T, P::Stamp>; CAP]>::new_uninit();
        let first = slots.as_mut_ptr().cast::<Slot<T, P::Stamp>>();
        for (i, pos) in (0..Self::CAP64).enumerate() {
            // SAFETY: `i < CAP`, inside the allocation; each slot is
            // initialised once, in place (no `[Slot; CAP]`, nor even one
            // slot, on the stack, which a large ring would overflow).
            unsafe { Slot::init(first.add(i), writable(pos)) };
        }
        // SAFETY: every one of the `CAP` slots was initialised above.
        let slots = unsafe { slots.assume_init() };
        Self {
            tail: CachePadded::new(TailSide {
                word: AtomicU64::new(0),
            }),
            head: CachePadded::new(HeadSide {
                word: AtomicU64::new(0),
            }),
            producer: CachePadded::new(ProducerSide {
                fence: Fence::new(),
                reserved: AtomicUsize::new(0),
                latch: AtomicBool::new(false),
                head_cache: UnsafeCell::new(0),
                tail: Own(UnsafeCell::new(0)),
            }),
            consumer: CachePadded::new(ConsumerSide {
                fence: Fence::new(),
                tail_cache: UnsafeCell::new(0),
                head: Own(UnsafeCell::new(0)),
            }),
            boundary: CachePadded::new(Boundary::new()),
            slots,
            _arity: PhantomData,
        }
    }

    #[inline]
    unsafe fn try_push(&self, value: T) -> Result<(), PushError<T>> {
        let mut value = Some(value);
        // SAFETY: forwarded from the caller; `value` holds a value.
        let refused = match unsafe { self.try_push_from(&mut value) } {
            Ok(()) => return Ok(()),
            Err(refused) => refused,
        };
        // SAFETY: a refused push leaves the value in place.
        let value = unsafe { value.unwrap_unchecked() };
        Err(match refused {
            PushError::Full(()) => PushError::Full(value),
            PushError::Closed(()) => PushError::Closed(value),
        })
    }

    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "with the value behind an `Option`, LLVM otherwise keeps the many-producer instantiations out of line, a call per message"
    )]
    unsafe fn try_push_from(&self, value: &mut Option<T>) -> Result<(), PushError<()>> {
        if !P::MANY {
            // SAFETY: forwarded from the caller.
            return unsafe { self.indexed_try_push_from(value) };
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.stamped_try_push_from(value) }
    }

    #[inline]
    unsafe fn front(&self) -> Result<RingFront<T, P::Stamp>, PopError> {
        if !P::MANY {
            // SAFETY: forwarded from the caller.
            return unsafe { self.indexed_front() };
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.stamped_front() }
    }

    #[inline]
    unsafe fn take_front(&self, front: &mut RingFront<T, P::Stamp>) -> T {
        // SAFETY: `front.slot` is the slot of `front.pos` in our array; the
        // value there is written and this consumer's (see `front`), and it
        // is taken once (caller's contract).
        unsafe { (*front.slot).read() }
    }

    #[inline]
    unsafe fn release_front(&self, front: RingFront<T, P::Stamp>) {
        if P::MANY {
            // SAFETY: forwarded from the caller.
            unsafe { self.stamped_release_front(front) };
        } else {
            // SAFETY: forwarded from the caller.
            unsafe { self.indexed_release_front(front) };
        }
    }

    unsafe fn peek(&self) -> Option<&T> {
        // ORDERING: Relaxed; the single consumer reads its own head.
        let head = self.head.word.load(Ordering::Relaxed);
        if P::MANY {
            // ORDERING: Acquire pairs with the producer's publish.
            if self.slot(head).stamp.load(Ordering::Acquire) != readable(head) {
                return None;
            }
        } else {
            // SAFETY: single consumer (caller's contract).
            if head >= unsafe { self.readable_end(head) } {
                return None;
            }
        }
        // SAFETY: the slot holds the value for `head`, and only this consumer
        // could move it, which the caller promises not to do while the
        // reference lives.
        Some(unsafe { self.slot(head).get() })
    }

    unsafe fn close(&self, from_producer: bool) -> bool {
        if !P::MANY {
            // SAFETY: forwarded from the caller.
            return unsafe { self.indexed_close(from_producer) };
        }
        self.stamped_close()
    }

    fn before_recv_wait(&self) {
        if !P::MANY {
            self.producer.fence.before_wait();
        }
    }

    fn before_send_wait(&self) {
        if !C::MANY {
            self.consumer.fence.before_wait();
        }
    }

    unsafe fn after_push(&self, waiting: impl Fn() -> bool) {
        if !P::MANY {
            // SAFETY: the single producer (caller's contract).
            unsafe {
                self.producer.fence.fenced_publish(waiting, || {
                    // ORDERING: Relaxed; the producer reads its own tail.
                    self.tail.word.load(Ordering::Relaxed)
                });
            }
        }
    }

    unsafe fn after_pop(&self, waiting: impl Fn() -> bool) {
        if !C::MANY {
            // SAFETY: the single consumer (caller's contract).
            unsafe {
                self.consumer.fence.fenced_publish(waiting, || {
                    // ORDERING: Relaxed; the consumer reads its own head.
                    self.head.word.load(Ordering::Relaxed)
                });
            }
        }
    }

    fn is_closed(&self) -> bool {
        if !P::MANY {
            return self.boundary.is_closed();
        }
        // ORDERING: SeqCst; a query.
        self.tail.word.load_sc() & Self::CLOSED != 0
    }

    fn head_position(&self) -> u64 {
        self.head_pos()
    }

    #[allow(
        clippy::cast_possible_truncation,
        reason = "the length never exceeds `CAP`, which is a `usize`"
    )]
    fn len(&self) -> usize {
        if !P::MANY {
            return self.indexed_len();
        }
        self.stamped_len()
    }

    unsafe fn try_acquire(&self, n: usize) -> Result<(), PushError<()>> {
        if !P::MANY {
            // SAFETY: forwarded from the caller.
            return unsafe { self.indexed_try_acquire(n) };
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.stamped_try_acquire(n) }
    }

    fn grant(&self, n: usize) -> usize {
        if !P::MANY {
            // One producer waits in a cell and retries; nothing to grant.
            return 0;
        }
        self.stamped_grant(n)
    }

    fn may_grant(&self) -> bool {
        if !P::MANY {
            // One producer waits in a cell and is never granted anything.
            return true;
        }
        self.stamped_may_grant()
    }

    unsafe fn push_reserved(&self, value: T) -> Result<(), T> {
        if !P::MANY {
            // SAFETY: forwarded from the caller.
            return unsafe { self.indexed_push_reserved(value) };
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.stamped_push_reserved(value) }
    }

    unsafe fn release(&self, n: usize) {
        if n == 0 {
            return;
        }
        if !P::MANY {
            // ORDERING: SeqCst: freeing capacity is a condition change.
            self.producer.reserved.fetch_sub(n, Ordering::SeqCst);
            return;
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.stamped_release(n) }
    }

    fn set_waiting(&self, waiting: bool) {
        if !P::MANY {
            return;
        }
        self.stamped_set_waiting(waiting);
    }

    fn is_full(&self) -> bool {
        if !P::MANY {
            return self.indexed_is_full();
        }
        self.stamped_is_full()
    }

    unsafe fn drain(&self) {
        // SAFETY: closed, and we are the last consumer (caller's contract).
        drop_each(|| unsafe { self.take_queued() });
    }
}

impl<T, const CAP: usize, P: Arity, C: Arity> Ring<T, CAP, P, C>
where
    (P, C): Topology,
{
    /// The last consumer's step: the next value still queued, with the head
    /// already moved past it; waits for a push that claimed its position
    /// before the close.
    ///
    /// # Safety
    ///
    /// No other consumer exists, and no push can linearise any more (closed,
    /// or every endpoint is gone).
    unsafe fn take_queued(&self) -> Option<T> {
        if !P::MANY {
            // SAFETY: forwarded from the caller.
            return unsafe { self.indexed_take_queued() };
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.stamped_take_queued() }
    }
}

// SAFETY: the accounting invariant is kept by checking the slot of position
// `pos + R + n - 1` before every claim or reservation, all in the claim word.
unsafe impl<T, const CAP: usize, P: Arity, C: Arity> Capacity for Ring<T, CAP, P, C>
where
    (P, C): Topology,
{
    const CAP: usize = CAP;

    #[allow(
        clippy::cast_possible_truncation,
        reason = "held units never exceed `CAP`, which is a `usize`"
    )]
    fn reserved(&self) -> usize {
        if !P::MANY {
            // ORDERING: SeqCst; a query.
            return self.producer.reserved.load_sc();
        }
        // ORDERING: SeqCst; a query.
        Self::units(self.tail.word.load_sc()) as usize
    }
}

impl<T, const CAP: usize, P: Arity, C: Arity> Drop for Ring<T, CAP, P, C>
where
    (P, C): Topology,
{
    fn drop(&mut self) {
        // SAFETY: `&mut self`: every endpoint is gone, so there is no other
        // consumer and no push in flight.
        drop_each(|| unsafe { self.take_queued() });
    }
}

impl<T, const CAP: usize, P: Arity, C: Arity> std::fmt::Debug for Ring<T, CAP, P, C>
where
    (P, C): Topology,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // ORDERING: SeqCst; a diagnostic snapshot as current as any query.
        let word = self.tail.word.load_sc();
        let mut out = f.debug_struct("Ring");
        out.field("capacity", &CAP);
        if P::MANY {
            out.field("claimed", &Self::pos(word))
                .field("reserved", &Self::units(word))
                .field("waiting", &(word & Self::WAITING != 0))
                .field("closed", &(word & Self::CLOSED != 0));
        } else {
            out.field("tail", &word)
                .field("closed", &self.boundary.is_closed());
        }
        out.field("head", &self.head_pos());
        out.finish_non_exhaustive()
    }
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests {
    use super::*;
    use crate::arity::{Many, One};
    use std::sync::Arc;

    /// Pushes on one thread and pops on another, checking order.
    fn threaded<const CAP: usize, P: Arity, C: Arity>(n: u64)
    where
        (P, C): Topology,
    {
        let ring = Arc::new(Ring::<u64, CAP, P, C>::new());
        let producer = {
            let ring = Arc::clone(&ring);
            std::thread::spawn(move || {
                for i in 0..n {
                    let mut value = i;
                    // SAFETY: the only producer.
                    while let Err(PushError::Full(v)) = unsafe { ring.try_push(value) } {
                        value = v;
                        std::thread::yield_now();
                    }
                }
            })
        };
        let mut next = 0;
        while next < n {
            // SAFETY: the only consumer.
            match unsafe { ring.try_pop() } {
                Ok(value) => {
                    assert_eq!(value, next);
                    next += 1;
                }
                Err(_) => std::thread::yield_now(),
            }
        }
        producer.join().unwrap();
    }

    #[test]
    fn every_arity_hands_values_over_in_order_across_threads() {
        let n = if cfg!(miri) { 50 } else { 20_000 };
        threaded::<1, One, One>(n);
        threaded::<4, One, One>(n);
        threaded::<1, Many, One>(n);
        threaded::<4, Many, One>(n);
        threaded::<2, Many, Many>(n);
    }

    fn fills_to_exactly_cap<P: Arity, C: Arity>()
    where
        (P, C): Topology,
    {
        let ring = Ring::<String, 4, P, C>::new();
        // SAFETY: single-threaded.
        unsafe {
            for i in 0..4 {
                ring.try_push(i.to_string()).unwrap();
            }
            assert!(ring.is_full());
            assert_eq!(ring.try_push("x".into()), Err(PushError::Full("x".into())));
            assert_eq!(ring.len(), 4);
            assert_eq!(ring.try_pop().as_deref(), Ok("0"));
            ring.try_push("4".into()).unwrap();
            for i in 1..5 {
                assert_eq!(ring.try_pop(), Ok(i.to_string()));
            }
            assert_eq!(ring.try_pop(), Err(PopError::Empty));
        }
    }

    #[test]
    fn a_ring_is_full_at_exactly_its_capacity() {
        fills_to_exactly_cap::<One, One>();
        fills_to_exactly_cap::<Many, One>();
        fills_to_exactly_cap::<Many, Many>();
    }

    fn units_count_against_capacity<P: Arity, C: Arity>()
    where
        (P, C): Topology,
    {
        let ring = Ring::<u8, 4, P, C>::new();
        // SAFETY: single-threaded.
        unsafe {
            ring.try_acquire(2).unwrap();
            ring.try_push(1).unwrap();
            ring.try_push(2).unwrap();
            assert!(ring.is_full());
            assert_eq!(ring.try_acquire(1), Err(PushError::Full(())));
            ring.push_reserved(3).unwrap();
            assert_eq!(ring.reserved(), 1);
            ring.release(1);
            assert_eq!(ring.reserved(), 0);
            ring.try_push(4).unwrap();
            assert_eq!((ring.try_pop(), ring.try_pop()), (Ok(1), Ok(2)));
            assert_eq!((ring.try_pop(), ring.try_pop()), (Ok(3), Ok(4)));
        }
    }

    #[test]
    fn reserved_units_count_against_capacity() {
        units_count_against_capacity::<One, One>();
        units_count_against_capacity::<Many, One>();
        units_count_against_capacity::<Many, Many>();
    }

    /// A send while units are held checks the slot `R` positions ahead of
    /// the one it claims; it must still write the claimed one, on every lap.
    fn sends_past_held_units_write_their_own_slot<C: Arity>()
    where
        (Many, C): Topology,
    {
        let ring = Ring::<u64, 4, Many, C>::new();
        // SAFETY: single-threaded.
        unsafe {
            for lap in 0..3 {
                let base = lap * 10;
                ring.try_acquire(2).unwrap();
                ring.try_push(base + 1).unwrap();
                ring.try_push(base + 2).unwrap();
                assert_eq!(ring.try_push(base + 9), Err(PushError::Full(base + 9)));
                assert_eq!(ring.try_pop(), Ok(base + 1));
                ring.push_reserved(base + 3).unwrap();
                ring.push_reserved(base + 4).unwrap();
                ring.try_push(base + 5).unwrap();
                for want in 2..=5 {
                    assert_eq!(ring.try_pop(), Ok(base + want));
                }
                assert_eq!(ring.try_pop(), Err(PopError::Empty));
            }
        }
    }

    #[test]
    fn sends_while_units_are_held_write_the_claimed_slot() {
        sends_past_held_units_write_their_own_slot::<One>();
        sends_past_held_units_write_their_own_slot::<Many>();
    }

    #[test]
    fn queued_senders_block_newcomers_but_not_grants() {
        let ring = Ring::<u8, 2, Many, One>::new();
        ring.set_waiting(true);
        // SAFETY: single-threaded.
        unsafe {
            assert_eq!(ring.try_push(1), Err(PushError::Full(1)));
            assert_eq!(ring.try_acquire(1), Err(PushError::Full(())));
            assert_eq!(ring.grant(5), 2);
            ring.push_reserved(1).unwrap();
            ring.push_reserved(2).unwrap();
        }
        ring.set_waiting(false);
        assert_eq!(ring.len(), 2);
    }

    fn may_grant_only_while_a_unit_is_free<C: Arity>()
    where
        (Many, C): Topology,
    {
        let ring = Ring::<u8, 2, Many, C>::new();
        assert!(ring.may_grant());
        // SAFETY: single-threaded.
        unsafe {
            ring.try_push(1).unwrap();
            assert!(ring.may_grant());
            // A held unit fills the bound as a value does.
            ring.try_acquire(1).unwrap();
            assert!(!ring.may_grant());
            assert_eq!(ring.grant(1), 0);
            ring.release(1);
            assert!(ring.may_grant());
            ring.try_push(2).unwrap();
            assert!(!ring.may_grant());
            assert_eq!(ring.try_pop(), Ok(1));
        }
        assert!(ring.may_grant());
        assert_eq!(ring.grant(1), 1);
        assert!(!ring.may_grant());
    }

    #[test]
    fn a_grant_may_take_a_unit_only_while_one_is_free() {
        may_grant_only_while_a_unit_is_free::<One>();
        may_grant_only_while_a_unit_is_free::<Many>();
    }

    fn close_keeps_what_was_sent<P: Arity, C: Arity>()
    where
        (P, C): Topology,
    {
        let ring = Ring::<u8, 4, P, C>::new();
        // SAFETY: single-threaded.
        unsafe {
            ring.try_push(1).unwrap();
            assert!(ring.close(false));
            assert!(!ring.close(false));
            assert_eq!(ring.try_push(2), Err(PushError::Closed(2)));
            assert_eq!(ring.try_acquire(1), Err(PushError::Closed(())));
            assert_eq!(ring.try_pop(), Ok(1));
            assert_eq!(ring.try_pop(), Err(PopError::Closed));
        }
    }

    #[test]
    fn closing_keeps_values_sent_before_and_refuses_later_ones() {
        close_keeps_what_was_sent::<One, One>();
        close_keeps_what_was_sent::<Many, One>();
        close_keeps_what_was_sent::<Many, Many>();
    }

    #[test]
    fn dropping_a_ring_drops_what_it_holds_once() {
        let live = Arc::new(());
        {
            let ring = Ring::<Arc<()>, 4, Many, One>::new();
            let spsc = Ring::<Arc<()>, 4, One, One>::new();
            // SAFETY: single-threaded.
            unsafe {
                for _ in 0..3 {
                    ring.try_push(Arc::clone(&live)).unwrap();
                    spsc.try_push(Arc::clone(&live)).unwrap();
                }
                drop(ring.try_pop());
            }
            assert_eq!(Arc::strong_count(&live), 6);
        }
        assert_eq!(Arc::strong_count(&live), 1);
    }

    fn push_from_moves_only_what_fits<P: Arity>()
    where
        (P, One): Topology,
    {
        let live = Arc::new(());
        {
            let ring = Ring::<Arc<()>, 1, P, One>::new();
            let mut first = Some(Arc::clone(&live));
            let mut second = Some(Arc::clone(&live));
            // SAFETY: single-threaded.
            unsafe {
                assert_eq!(ring.try_push_from(&mut first), Ok(()));
                assert!(first.is_none(), "a push that fits takes the value");
                assert_eq!(ring.try_push_from(&mut second), Err(PushError::Full(())));
                assert!(second.is_some(), "a push that does not fit leaves it");
                ring.close(true);
                assert_eq!(ring.try_pop().map(|v| Arc::ptr_eq(&v, &live)), Ok(true));
                assert_eq!(ring.try_push_from(&mut second), Err(PushError::Closed(())));
                assert!(second.is_some(), "a refused push hands it back");
            }
            assert_eq!(Arc::strong_count(&live), 2, "moved, never copied");
        }
        assert_eq!(Arc::strong_count(&live), 1);
    }

    #[test]
    fn a_push_from_an_option_moves_the_value_only_when_it_fits() {
        push_from_moves_only_what_fits::<One>();
        push_from_moves_only_what_fits::<Many>();
    }

    #[test]
    fn draining_drops_every_queued_value() {
        let live = Arc::new(());
        let ring = Ring::<Arc<()>, 8, Many, Many>::new();
        // SAFETY: single-threaded; closed before draining.
        unsafe {
            for _ in 0..5 {
                ring.try_push(Arc::clone(&live)).unwrap();
            }
            ring.close(false);
            ring.drain();
        }
        assert_eq!(Arc::strong_count(&live), 1);
        assert_eq!(ring.len(), 0);
    }

    #[test]
    fn zero_sized_values_travel_through_every_arity() {
        let spsc = Ring::<(), 2, One, One>::new();
        let mpmc = Ring::<(), 2, Many, Many>::new();
        // SAFETY: single-threaded.
        unsafe {
            spsc.try_push(()).unwrap();
            mpmc.try_push(()).unwrap();
            assert_eq!(spsc.try_pop(), Ok(()));
            assert_eq!(mpmc.try_pop(), Ok(()));
        }
        assert_eq!(size_of::<Slot<(), crate::slot::NoStamp>>(), 0);
    }

    #[test]
    fn peek_leaves_the_value_in_place() {
        let ring = Ring::<String, 2, Many, One>::new();
        // SAFETY: single-threaded.
        unsafe {
            assert!(ring.peek().is_none());
            ring.try_push("a".into()).unwrap();
            assert_eq!(ring.peek().map(String::as_str), Some("a"));
            assert_eq!(ring.len(), 1);
            assert_eq!(ring.try_pop().as_deref(), Ok("a"));
        }
    }

    /// Polls a `Recv` on `chan` whose next position a producer has claimed
    /// but not written; returns the poll's outcome and the wakes it caused.
    fn poll_while_claimed<T: Send + std::fmt::Debug>(
        chan: &crate::chan::Chan<Ring<T, 4, Many, One>>,
        value: T,
    ) -> (bool, usize, usize, Option<T>) {
        use std::pin::pin;
        use std::sync::atomic::AtomicUsize as Count;
        use std::task::{Context, Poll, Wake, Waker};

        struct Counting(Count);
        impl Wake for Counting {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let wakes = Arc::new(Counting(Count::new(0)));
        let handle = Waker::from(Arc::clone(&wakes));
        let mut cx = Context::from_waker(&handle);

        let ring = chan.storage();
        // A producer claims position 0 and is still writing it.
        let mut word = ring.tail.word.load(Ordering::Relaxed);
        while let Err(current) = ring.cas_tail(word, word + Ring::<T, 4, Many, One>::ONE_POS) {
            word = current;
        }
        // SAFETY: `chan` has no other consumer.
        let mut recv = pin!(unsafe { crate::future::Recv::new(chan) });
        let pending = recv.as_mut().poll(&mut cx).is_pending();
        let wakes_while_claimed = wakes.0.load(Ordering::Relaxed);
        // The producer finishes: writes, publishes, notifies.
        // SAFETY: position 0 was claimed above and holds no value.
        unsafe { ring.publish(0, u64::MAX, &mut Some(value)) };
        chan.notify_receivers();
        let wakes_after_publish = wakes.0.load(Ordering::Relaxed);
        let received = match recv.as_mut().poll(&mut cx) {
            Poll::Ready(Ok(value)) => Some(value),
            _ => None,
        };
        (pending, wakes_while_claimed, wakes_after_publish, received)
    }

    #[test]
    fn a_receive_sleeps_on_a_large_value_being_written_and_the_publish_wakes_it() {
        #[derive(Debug, PartialEq)]
        struct Large([u64; 20]);
        const { assert!(<Ring<Large, 4, Many, One> as Storage>::NOTIFIES_BUSY) };
        let chan = crate::chan::Chan::<Ring<Large, 4, Many, One>>::new();
        let (pending, wakes, after, received) = poll_while_claimed(&chan, Large([7; 20]));
        assert!(pending, "nothing to receive while the value is written");
        assert_eq!(wakes, 0, "it sleeps: no wake of its own");
        assert_eq!(after, 1, "the producer's publish wakes it");
        assert_eq!(received, Some(Large([7; 20])));
    }

    #[test]
    fn a_receive_spins_on_a_small_value_being_written_and_wakes_itself() {
        const { assert!(!<Ring<u64, 4, Many, One> as Storage>::NOTIFIES_BUSY) };
        let chan = crate::chan::Chan::<Ring<u64, 4, Many, One>>::new();
        let (pending, wakes, after, received) = poll_while_claimed(&chan, 7);
        assert!(pending, "nothing to receive while the value is written");
        assert_eq!(wakes, 1, "its producer may miss the flag: it polls again");
        assert_eq!(after, 1, "not registered: the publish wakes nobody");
        assert_eq!(received, Some(7));
    }
}
