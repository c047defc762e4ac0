//! Bounded storage: a preallocated ring of `CAP` slots.
//!
//! `CAP` is a power of two, so a position maps to its slot with a mask.
//! Positions are 64-bit and never wrap in practice. The ring is specialised by
//! producer arity `P` and consumer arity `C`; the branches on `P::MANY` and
//! `C::MANY` fold away at compile time.
//!
//! # One producer (`spsc`)
//!
//! The producer owns its tail. It checks capacity against a cached copy of
//! the consumer's head and reloads that copy only when the cache says full;
//! it writes the slot and publishes the new tail with a single `SeqCst`
//! store. The consumer does the mirror image with a cached tail and a `SeqCst`
//! store of its head. No read-modify-write per message on either side.
//! Each side keeps its own position and cache on a line of its own
//! (`ProducerSide`, `ConsumerSide`) and only ever *stores* to the word it
//! publishes, so the other side reading that word never costs it a miss (a
//! line that one core reads and then writes migrates to the next core that
//! reads it). The
//! `SeqCst` stores are the notifier halves of the store-buffer race (see
//! [`crate::wait`]): a waiting consumer re-checks the tail, a waiting
//! producer re-checks the head. Closing goes through a
//! `Boundary` (private `boundary` module).
//!
//! # Many producers (`mpsc`, `mpmc`)
//!
//! Producers share one *claim word*, updated only by compare-exchange:
//!
//! ```text
//!  63            POS_SHIFT   POS_SHIFT-1    2      1         0
//! +----------------+----------------------+-------+--------+
//! | position (mod) | reserved units (R)   |WAITING| CLOSED |
//! +----------------+----------------------+-------+--------+
//! ```
//!
//! - `position` is the next position to claim, modulo `2^(62 - R_BITS)`
//!   (at least 41 bits). The full 64-bit position is recovered from the
//!   slot's stamp, which always holds it; the truncation matters only to an
//!   ABA on this word, which needs a thread stalled between its load and its
//!   compare-exchange while 2^41 other claims happen (hours at the highest
//!   rates) and then resuming on exactly the same claim.
//! - `R` counts capacity held as permits or granted to woken senders.
//! - `WAITING` says senders are queued: newcomers then report `Full`, so
//!   capacity freed while senders wait goes to them in order.
//! - `CLOSED` freezes the boundary: a claim that succeeds before it is set is
//!   received; every claim after it fails and hands its value back.
//!
//! Keeping all of this in the word every producer already compare-exchanges
//! makes reserving, granting and closing linearise against sends with no
//! extra cost on the send path.
//!
//! A send claims position `p` when the slot of position `p + R` is writable
//! for that position (so queued values plus held units stay within `CAP`),
//! then writes its slot and stores the stamp `readable(p)`. That is one
//! read-modify-write per message. The claim is `SeqCst`: it is the notifier
//! half of the race with a consumer that registers to wait and then re-reads
//! the claim word. A consumer that finds a position claimed but not yet
//! written reports [`PopError::Busy`] and retries instead of sleeping,
//! except for large values, whose stamp is stored `SeqCst` so that the
//! consumer can sleep on it ([`Storage::NOTIFIES_BUSY`]).
//!
//! The consumer side checks the slot's stamp for `readable(h)`: a single
//! consumer then takes the value with no read-modify-write, many consumers
//! claim `h` with one compare-exchange first. After reading, the consumer
//! stores `writable(h + CAP)`. A single consumer makes that store `SeqCst`
//! (the notifier half for waiting senders); many consumers already paired
//! their claim with the waiters, so theirs is a release store.

use std::marker::PhantomData;

use crossbeam_utils::CachePadded;

use crate::arity::{Arity, Topology};
use crate::boundary::Boundary;
use crate::slot::{Slot, Stamp, is_large, readable, writable};
use crate::storage::{Capacity, PopError, PushError, Storage, drop_each};
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Ordering, SeqCst, UnsafeCell, spin_hint};
use crate::wait::Fence;
use std::sync::atomic::compiler_fence;

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

/// Where a slot stands relative to the position a producer wants it for.
enum Lap {
    /// Writable for exactly that position; carries the full position.
    Free(u64),
    /// Still holds (or is being read for) an older position: full.
    Behind,
    /// Already used for that position or later: the caller's view is stale.
    Ahead,
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

    const CLOSED: u64 = 1;
    const WAITING: u64 = 2;
    const R_SHIFT: u32 = 2;
    const R_BITS: u32 = if CAP.is_power_of_two() {
        CAP.trailing_zeros() + 1
    } else {
        1
    };
    const R_FIELD: u64 = ((1 << Self::R_BITS) - 1) << Self::R_SHIFT;
    const ONE_R: u64 = 1 << Self::R_SHIFT;
    const POS_SHIFT: u32 = Self::R_SHIFT + Self::R_BITS;
    const ONE_POS: u64 = 1 << Self::POS_SHIFT;
    /// Masks a full position down to the width of the claim word's field.
    const POS_MASK: u64 = u64::MAX >> Self::POS_SHIFT;

    #[inline]
    fn pos(word: u64) -> u64 {
        word >> Self::POS_SHIFT
    }

    #[inline]
    fn units(word: u64) -> u64 {
        (word & Self::R_FIELD) >> Self::R_SHIFT
    }

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

    /// Compares slot `pos & MASK` against truncated position `want`.
    #[inline]
    fn lap(&self, want: u64, order: Ordering) -> Lap {
        let stamp = if order == Ordering::SeqCst {
            self.slot(want).stamp.load_seq_cst()
        } else {
            self.slot(want).stamp.load(order)
        };
        let have = (stamp >> 1) & Self::POS_MASK;
        let ahead = have.wrapping_sub(want) & Self::POS_MASK;
        if ahead == 0 {
            if stamp & 1 == 0 {
                Lap::Free(stamp >> 1)
            } else {
                Lap::Ahead
            }
        } else if ahead < Self::POS_MASK / 2 {
            Lap::Ahead
        } else {
            Lap::Behind
        }
    }

    /// Many producers: whether `extra` more units fit after claim word
    /// `word`, i.e. the slot of position `pos + R + extra - 1` is writable
    /// for it. `None` means the caller's word is stale.
    fn fits(&self, word: u64, extra: u64) -> Option<bool> {
        self.room_for(word, extra).map(|room| room.is_some())
    }

    /// As [`Ring::fits`], with the answer `Some(Some(full))` when there is
    /// room: `full` is the full position of the slot checked, which, with no
    /// units held and `extra == 1`, is the slot the claim will write.
    #[inline]
    #[allow(
        clippy::option_option,
        reason = "an intentional private three-state answer: stale word, no room, or room at a position"
    )]
    fn room_for(&self, word: u64, extra: u64) -> Option<Option<u64>> {
        let last = Self::pos(word)
            .wrapping_add(Self::units(word))
            .wrapping_add(extra - 1)
            & Self::POS_MASK;
        // ORDERING: SeqCst: acquires the consumer's store of the writable
        // stamp (its read of the old value happens before our write), and is
        // the waiting sender's re-check, paired with a single consumer's
        // SeqCst store of that stamp.
        match self.lap(last, Ordering::SeqCst) {
            Lap::Free(full) => Some(Some(full)),
            Lap::Ahead => None,
            Lap::Behind if C::MANY => {
                // A consumer may have claimed the old value and still be
                // reading it; capacity counts claims, so ask the head.
                // ORDERING: SeqCst: the waiting sender's re-check pairs with
                // the consumers' SeqCst claims.
                let head = self.head.word.load_sc() & Self::POS_MASK;
                let used = last.wrapping_sub(head) & Self::POS_MASK;
                // Room, but the claimed slot may still be being read: the
                // publisher waits for it.
                Some((used < Self::CAP64).then_some(u64::MAX))
            }
            Lap::Behind => Some(None),
        }
    }

    /// Many producers: waits until the slot of the claimed (truncated)
    /// position `pos` is writable for it, and returns the full position. The
    /// wait only spins when a consumer is still reading the previous lap.
    fn wait_writable(&self, pos: u64) -> u64 {
        loop {
            // ORDERING: Acquire pairs with the releasing consumer's store.
            if let Lap::Free(full) = self.lap(pos, Ordering::Acquire) {
                return full;
            }
            spin_hint();
        }
    }

    /// Many producers: moves the value out of `*value` to the claimed
    /// position and publishes it. `known` is the full position if the claim
    /// already saw its slot writable for it (`u64::MAX` if not).
    ///
    /// # Safety
    ///
    /// `*value` holds a value.
    #[inline]
    unsafe fn publish(&self, pos: u64, known: u64, value: &mut Option<T>) {
        let full = if known == u64::MAX {
            self.wait_writable(pos)
        } else {
            known
        };
        let slot = self.slot(full);
        // SAFETY: the claim gave this producer the position and the slot is
        // writable for it, so nobody else touches it until it is readable;
        // `*value` holds a value (caller's contract).
        unsafe { slot.write_from(value) };
        // A release store (`SeqCst` for a large value), paired with the
        // consumer's load in `front`: see `Slot::publish`.
        slot.publish(readable(full));
    }

    /// Many producers: compare-exchange on the claim word; on failure
    /// returns the current word.
    #[inline]
    fn cas_tail(&self, current: u64, new: u64) -> Result<u64, u64> {
        // ORDERING: SeqCst: the claim is the notifier half of the race with a
        // consumer that registers and then re-reads this word; failure only
        // needs a fresh value.
        self.tail
            .word
            .compare_exchange_weak(current, new, Ordering::SeqCst, Ordering::Relaxed)
    }

    /// One producer: the consumer's position, refreshed from the published
    /// head when the cached copy leaves less than `need` free slots.
    ///
    /// # Safety
    ///
    /// Single producer.
    unsafe fn room(&self, tail: u64, need: u64) -> bool {
        // SAFETY: only the single producer touches `head_cache`.
        let cached = self.producer.head_cache.with(|cache| unsafe { *cache });
        if tail + need - cached <= Self::CAP64 {
            return true;
        }
        // ORDERING: SeqCst: the waiting producer's re-check pairs with the
        // consumer's SeqCst store of its head; it also acquires the
        // consumer's reads of the freed slots.
        let head = self.head.word.load_sc();
        // SAFETY: as above.
        self.producer
            .head_cache
            .with_mut(|cache| unsafe { *cache = head });
        tail + need - head <= Self::CAP64
    }

    /// One producer: moves the value out of `*value` to `tail`, publishes,
    /// and settles a close that raced with it (the value is then back in
    /// `*value`).
    ///
    /// # Safety
    ///
    /// Single producer (or holder of the latch); the slot at `tail` is free;
    /// `*value` holds a value.
    #[inline]
    unsafe fn publish_one(&self, tail: u64, value: &mut Option<T>) -> Result<(), ()> {
        let slot = self.slot(tail);
        // SAFETY: the caller is the single producer (or holds the latch).
        let fenced = unsafe { self.producer.fence.fenced(tail + 1) };
        // SAFETY: the slot is free (checked by the caller) and only this
        // producer writes slots; `*value` holds a value.
        unsafe { slot.write_from(value) };
        // SAFETY: the caller's contract.
        unsafe {
            self.producer
                .tail
                .publish(&self.tail.word, tail + 1, fenced);
        }
        if self.boundary.is_closed() && self.boundary.settle(tail + 1) <= tail {
            // The boundary excludes this value: nobody will read it.
            // ORDERING: Relaxed; only this producer reads its own tail, and
            // the consumer never reads past the boundary.
            self.tail.word.store_at(tail, Ordering::Relaxed);
            // SAFETY: the caller's contract.
            unsafe { self.producer.tail.set(tail) };
            // SAFETY: the value was written above and is outside the
            // boundary, so it is still ours.
            *value = Some(unsafe { slot.read() });
            return Err(());
        }
        Ok(())
    }

    /// One consumer of one producer: the end of what may be read now.
    ///
    /// # Safety
    ///
    /// Single consumer.
    unsafe fn readable_end(&self, head: u64) -> u64 {
        // SAFETY: only the single consumer touches `tail_cache`.
        let cached = self.consumer.tail_cache.with(|cache| unsafe { *cache });
        if head < cached {
            return cached;
        }
        // ORDERING: SeqCst: acquires the producer's slot writes, and is the
        // waiting consumer's re-check that pairs with the producer's SeqCst
        // store of its tail.
        // The tail, then the close flag. No flag: the closer has not stored
        // it yet, so the tail it will load is at least ours, and so is any
        // boundary. A flag: the tail is loaded again, after it, and includes
        // every publish whose producer missed the flag, so it is safe to
        // settle with (`Boundary`); the first one is not (its producer may
        // since have published, missed the flag and returned `Ok`).
        let mut tail = self.tail.word.load_sc();
        if self.boundary.is_closed() {
            tail = self.tail.word.load_sc();
            tail = tail.min(self.boundary.settle(tail));
        }
        // SAFETY: as above.
        self.consumer
            .tail_cache
            .with_mut(|cache| unsafe { *cache = tail });
        tail
    }

    /// The consumers' position.
    fn head_pos(&self) -> u64 {
        // ORDERING: SeqCst; a query, and the sender's re-check in `is_full`.
        self.head.word.load_sc()
    }

    /// Many producers: acquires one unit on behalf of a waiter or `n` for a
    /// reservation. `honour_queue` makes queued senders block the attempt.
    fn acquire_units(&self, n: u64, honour_queue: bool) -> Result<(), PushError<()>> {
        // ORDERING: Relaxed; the compare-exchange validates it.
        let mut word = self.tail.word.load(Ordering::Relaxed);
        loop {
            if word & Self::CLOSED != 0 {
                return Err(PushError::Closed(()));
            }
            if honour_queue && word & Self::WAITING != 0 {
                return Err(PushError::Full(()));
            }
            match self.fits(word, n) {
                None => {
                    // ORDERING: Relaxed; stale view, reload.
                    word = self.tail.word.load(Ordering::Relaxed);
                    continue;
                }
                Some(false) => return Err(PushError::Full(())),
                Some(true) => {}
            }
            match self.cas_tail(word, word + n * Self::ONE_R) {
                Ok(_) => return Ok(()),
                Err(current) => word = current,
            }
        }
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
        debug_assert!(value.is_some(), "a value to push");
        if !P::MANY {
            // SAFETY: single producer (caller's contract).
            let tail = unsafe { self.producer.tail.get() };
            // ORDERING: Relaxed; the producer reads its own count of held
            // units. Permits borrow the single sender, so none is in use
            // now, but a forgotten one still holds its slot.
            let held = self.producer.reserved.load(Ordering::Relaxed) as u64;
            // SAFETY: single producer (caller's contract).
            if !unsafe { self.room(tail + held, 1) } {
                // A closed channel may be full too: say which matters.
                return Err(if self.boundary.is_closed() {
                    PushError::Closed(())
                } else {
                    PushError::Full(())
                });
            }
            // No check of the close flag before publishing: `publish_one`
            // checks it after, as the boundary protocol requires, and takes
            // the value back if it is outside.
            // SAFETY: single producer, `room` found the slot free, and
            // `*value` holds a value (caller's contract).
            return unsafe { self.publish_one(tail, value) }.map_err(PushError::Closed);
        }
        // ORDERING: Relaxed; the compare-exchange validates it.
        let mut word = self.tail.word.load(Ordering::Relaxed);
        // The common case first, on its own: open, nobody queued, no units
        // held, and the slot of the next position free. One test covers
        // the three flags, so a plain send pays nothing for permits.
        if word & (Self::CLOSED | Self::WAITING | Self::R_FIELD) == 0 {
            // ORDERING: SeqCst, as in `room_for`: acquires the consumer's
            // store of the writable stamp, and is the waiting sender's
            // re-check paired with a single consumer's SeqCst store of it.
            if let Lap::Free(full) = self.lap(Self::pos(word), Ordering::SeqCst) {
                match self.cas_tail(word, word + Self::ONE_POS) {
                    Ok(_) => {
                        // SAFETY: claimed; `*value` holds a value.
                        unsafe { self.publish(Self::pos(word), full, value) };
                        return Ok(());
                    }
                    Err(current) => word = current,
                }
            }
        }
        loop {
            if word & (Self::CLOSED | Self::WAITING) != 0 {
                return Err(if word & Self::CLOSED != 0 {
                    PushError::Closed(())
                } else {
                    PushError::Full(())
                });
            }
            let known = match self.room_for(word, 1) {
                None => {
                    // ORDERING: Relaxed; stale view, reload.
                    word = self.tail.word.load(Ordering::Relaxed);
                    continue;
                }
                Some(None) => return Err(PushError::Full(())),
                // With `R` units held, the slot checked is `R` positions past
                // the one claimed. A single consumer frees slots in position
                // order, so that one is free as well, and the consumer's
                // read of it came before its store of the stamp just
                // loaded: its full position is `full - R`, no second wait.
                // (Many consumers free slots out of order: `wait_writable`.)
                Some(Some(full)) if !C::MANY || Self::units(word) == 0 => full - Self::units(word),
                Some(Some(_)) => u64::MAX,
            };
            match self.cas_tail(word, word + Self::ONE_POS) {
                Ok(_) => {
                    // SAFETY: claimed; `*value` holds a value.
                    unsafe { self.publish(Self::pos(word), known, value) };
                    return Ok(());
                }
                Err(current) => word = current,
            }
        }
    }

    #[inline]
    unsafe fn front(&self) -> Result<RingFront<T, P::Stamp>, PopError> {
        if !P::MANY {
            // SAFETY: single consumer (caller's contract).
            let head = unsafe { self.consumer.head.get() };
            // SAFETY: as above.
            if head >= unsafe { self.readable_end(head) } {
                let closed = self.boundary.frozen().is_some_and(|end| head >= end);
                return Err(if closed {
                    PopError::Closed
                } else {
                    PopError::Empty
                });
            }
            // SAFETY: the single consumer.
            let fenced = unsafe { self.consumer.fence.fenced(head + 1) };
            // `head` is below the published tail (and the boundary), so the
            // slot holds a value only this consumer reads.
            return Ok(RingFront {
                pos: head,
                slot: self.slot(head),
                fenced,
            });
        }
        // ORDERING: Relaxed; a single consumer reads its own head, many
        // consumers re-validate with the compare-exchange below.
        let mut head = self.head.word.load(Ordering::Relaxed);
        loop {
            let slot = self.slot(head);
            // An acquire load (`SeqCst` for a large value, the re-check of a
            // consumer that registered), paired with the producer's store in
            // `publish`: the value is visible once the stamp says readable.
            let stamp = slot.published();
            if stamp == readable(head) {
                if C::MANY {
                    // ORDERING: SeqCst: the claim is the notifier half for
                    // senders waiting on capacity.
                    if let Err(current) = self.head.word.compare_exchange_weak(
                        head,
                        head + 1,
                        Ordering::SeqCst,
                        Ordering::Relaxed,
                    ) {
                        head = current;
                        continue;
                    }
                }
                // The stamp says the value is written, and this consumer
                // owns position `head` (the only consumer, or the winner of
                // the claim).
                return Ok(RingFront {
                    pos: head,
                    slot,
                    fenced: false,
                });
            }
            if C::MANY && stamp >= writable(head + Self::CAP64) {
                // Another consumer took `head` already.
                // ORDERING: Relaxed; re-validated by the claim.
                head = self.head.word.load(Ordering::Relaxed);
                continue;
            }
            // ORDERING: SeqCst: the waiting consumer's re-check, paired with
            // the producers' SeqCst claims.
            let word = self.tail.word.load_sc();
            if C::MANY {
                // ORDERING: Relaxed; a consistency check of our own view.
                let current = self.head.word.load(Ordering::Relaxed);
                if current != head {
                    head = current;
                    continue;
                }
            }
            if Self::pos(word) != head & Self::POS_MASK {
                return Err(PopError::Busy);
            }
            return Err(if word & Self::CLOSED != 0 {
                PopError::Closed
            } else {
                PopError::Empty
            });
        }
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
        let head = front.pos;
        // SAFETY: the slot of `head` in our array (set by `front`).
        let slot = unsafe { &*front.slot };
        if !P::MANY {
            // Frees the slot for the producer, releasing our read of it.
            // SAFETY: single consumer.
            unsafe {
                self.consumer
                    .head
                    .publish(&self.head.word, head + 1, front.fenced);
            }
        } else if C::MANY {
            // ORDERING: Release pairs with the producer's Acquire load of the
            // stamp: our read happens before its write.
            slot.stamp
                .store(writable(head + Self::CAP64), Ordering::Release);
        } else {
            // Frees the slot (releasing our read); the notifier half for
            // waiting senders when fenced.
            // SAFETY: the single consumer.
            if unsafe { self.consumer.fence.fenced(head + 1) } {
                slot.stamp.store_seq_cst(writable(head + Self::CAP64));
            } else {
                // ORDERING: Release pairs with the producer's SeqCst
                // (acquiring) load of the stamp; waiting senders are covered
                // by their barrier (`wait/fence.rs`).
                slot.stamp
                    .store(writable(head + Self::CAP64), Ordering::Release);
                compiler_fence(Ordering::SeqCst);
            }
            // ORDERING: Relaxed; published only for `len` and queries.
            self.head.word.store_at(head + 1, Ordering::Relaxed);
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
            // ORDERING: SeqCst: the closer's re-check of the tail, paired
            // with the producer's publish (see `Boundary`).
            let published = || self.tail.word.load_sc();
            return self
                .boundary
                .close_single(from_producer, &self.producer.fence, published);
        }
        // ORDERING: SeqCst: freezes the boundary in the claim word; every
        // claim is ordered before or after it.
        self.tail.word.fetch_or(Self::CLOSED, Ordering::SeqCst) & Self::CLOSED == 0
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
        let head = self.head_pos();
        if !P::MANY {
            // ORDERING: SeqCst; a query.
            let mut tail = self.tail.word.load_sc();
            if let Some(end) = self.boundary.frozen() {
                tail = tail.min(end);
            }
            return tail.saturating_sub(head) as usize;
        }
        // ORDERING: SeqCst; a query.
        let word = self.tail.word.load_sc();
        let used = Self::pos(word).wrapping_sub(head) & Self::POS_MASK;
        // A consumer racing ahead of our snapshot would make this wrap.
        if used > Self::CAP64 { 0 } else { used as usize }
    }

    unsafe fn try_acquire(&self, n: usize) -> Result<(), PushError<()>> {
        if !P::MANY {
            if self.boundary.is_closed() {
                return Err(PushError::Closed(()));
            }
            // SAFETY: single producer (caller's contract).
            let tail = unsafe { self.producer.tail.get() };
            // ORDERING: Relaxed; the producer reads its own state.
            let held = self.producer.reserved.load(Ordering::Relaxed) as u64;
            // SAFETY: single producer.
            if !unsafe { self.room(tail + held, n as u64) } {
                return Err(PushError::Full(()));
            }
            // ORDERING: Relaxed; the count is only read by this producer and
            // by queries; releases from permit threads are RMWs too.
            self.producer.reserved.fetch_add(n, Ordering::Relaxed);
            return Ok(());
        }
        self.acquire_units(n as u64, true)
    }

    fn grant(&self, n: usize) -> usize {
        if !P::MANY {
            // One producer waits in a cell and retries; nothing to grant.
            return 0;
        }
        let mut granted = 0;
        while granted < n && self.acquire_units(1, false).is_ok() {
            granted += 1;
        }
        granted
    }

    fn may_grant(&self) -> bool {
        if !P::MANY {
            // One producer waits in a cell and is never granted anything.
            return true;
        }
        // ORDERING: SeqCst: the look after a sender's registration; paired
        // with the SeqCst stamp store of a single consumer and the SeqCst
        // claims of many (see `room_for`) and with `release`.
        let word = self.tail.word.load_sc();
        self.fits(word, 1) != Some(false)
    }

    unsafe fn push_reserved(&self, value: T) -> Result<(), T> {
        if !P::MANY {
            // Permits are `Send`: pushes through them may come from several
            // threads at once, so they take turns.
            // ORDERING: Acquire pairs with the Release below: the previous
            // holder's writes to the tail are visible.
            while self
                .producer
                .latch
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                spin_hint();
            }
            let mut value = Some(value);
            let result = if self.boundary.is_closed() {
                Err(())
            } else {
                // SAFETY: we hold the latch (its Acquire orders us after the
                // previous holder's update).
                let tail = unsafe { self.producer.tail.get() };
                // SAFETY: we hold the latch, so we act as the single
                // producer; the held unit guarantees the slot is free.
                unsafe { self.publish_one(tail, &mut value) }
            };
            // ORDERING: Release hands the tail to the next latch holder.
            self.producer.latch.store_at(false, Ordering::Release);
            // SAFETY: the caller held one unit; the push consumed it or,
            // refused, gives it back here.
            unsafe { self.release(1) };
            // SAFETY: a refused push leaves the value in place.
            return result.map_err(|()| unsafe { value.unwrap_unchecked() });
        }
        // ORDERING: Relaxed; the compare-exchange validates it.
        let mut word = self.tail.word.load(Ordering::Relaxed);
        loop {
            if word & Self::CLOSED != 0 {
                // SAFETY: the caller's held unit, given back with the value.
                unsafe { self.release(1) };
                return Err(value);
            }
            match self.cas_tail(word, word + Self::ONE_POS - Self::ONE_R) {
                Ok(_) => {
                    // SAFETY: claimed; the value is in the option.
                    unsafe { self.publish(Self::pos(word), u64::MAX, &mut Some(value)) };
                    return Ok(());
                }
                Err(current) => word = current,
            }
        }
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
        // ORDERING: SeqCst: freeing capacity is a condition change waiting
        // senders pair with; `R >= n`, so the subtraction cannot borrow.
        self.tail
            .word
            .fetch_sub(n as u64 * Self::ONE_R, Ordering::SeqCst);
    }

    fn set_waiting(&self, waiting: bool) {
        if !P::MANY {
            return;
        }
        // ORDERING: SeqCst: newcomers' claims are ordered against it.
        if waiting {
            self.tail.word.fetch_or(Self::WAITING, Ordering::SeqCst);
        } else {
            self.tail.word.fetch_and(!Self::WAITING, Ordering::SeqCst);
        }
    }

    fn is_full(&self) -> bool {
        if !P::MANY {
            return self.len() + self.reserved() >= CAP;
        }
        // ORDERING: SeqCst; a query.
        let word = self.tail.word.load_sc();
        if word & Self::WAITING != 0 {
            return true;
        }
        let used = Self::pos(word).wrapping_sub(self.head_pos()) & Self::POS_MASK;
        used.min(Self::CAP64) + Self::units(word) >= Self::CAP64
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
        // ORDERING: Relaxed; the last consumer reads its own head.
        let head = self.head.word.load(Ordering::Relaxed);
        if !P::MANY {
            // ORDERING: SeqCst, as in `close`.
            let tail = self.tail.word.load_sc();
            if head >= self.boundary.settle(tail).min(tail) {
                return None;
            }
            // SAFETY: below the boundary and the published tail: a value
            // nobody else will read.
            let value = unsafe { self.slot(head).read() };
            // SAFETY: the only consumer (caller's contract); as in
            // `try_pop`, fenced.
            unsafe { self.consumer.head.publish(&self.head.word, head + 1, true) };
            return Some(value);
        }
        // ORDERING: SeqCst: the position in the closed claim word is the
        // frozen end.
        if head & Self::POS_MASK == Self::pos(self.tail.word.load_sc()) {
            return None;
        }
        let slot = self.slot(head);
        // A producer that claimed before the close may still be writing.
        // ORDERING: Acquire pairs with its publish.
        while slot.stamp.load(Ordering::Acquire) != readable(head) {
            spin_hint();
        }
        // SAFETY: published, and no other consumer exists.
        let value = unsafe { slot.read() };
        // ORDERING: Release, as in `try_pop`.
        slot.stamp
            .store(writable(head + Self::CAP64), Ordering::Release);
        // ORDERING: SeqCst, as in `try_pop`.
        self.head.word.store_sc(head + 1);
        Some(value)
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
