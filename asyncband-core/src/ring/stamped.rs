//! The ring's cursors for many producers (`mpsc`, `mpmc`): [`Claiming`], the
//! second of the ring's two algorithms (see `mod.rs`), over [`OneConsumer`]
//! or [`ManyConsumers`].
//!
//! Producers share one *claim word*, updated by compare-exchange (and by
//! `fetch_or` for the flags only ever set). Reserving, granting and closing
//! in the word every send already compare-exchanges linearises them against
//! sends at no cost to the send path:
//!
//! ```text
//!  63            POS_SHIFT   POS_SHIFT-1    4      3       2       1        0
//! +----------------+----------------------+-------+-------+-------+--------+
//! | position (mod) | reserved units (R)   |WATCHED|POLLING|WAITING| CLOSED |
//! +----------------+----------------------+-------+-------+-------+--------+
//! ```
//!
//! - `position`: the next to claim, modulo `2^(60 - R_BITS)` (at least 39
//!   bits); the slot's stamp holds the full position. The truncation allows
//!   only an ABA by a thread stalled between its load and compare-exchange
//!   across 2^39 claims (hours) that resumes on exactly the same claim.
//! - `R`: capacity held as permits or granted to woken senders.
//! - `WAITING`: senders are queued; newcomers report `Full`, so capacity
//!   freed meanwhile goes to the queue in order.
//! - `CLOSED` freezes the boundary: a claim before it is received, every
//!   claim after it fails and hands its value back.
//! - `POLLING`: set when a `try_recv` first finds the ring empty. From then
//!   on each send marks the claimed, unwritten slots before its own
//!   `CLAIMED` (`mark_claims_before`), so `try_front` tells "empty" from the
//!   slot alone and leaves this word's line to the producers. With many
//!   consumers a send also notes its publish in this line (`marked_to`), so
//!   that the next position's check need not load a slot a consumer writes.
//! - `WATCHED`: set when a receiver would sleep on a large value being
//!   written (`watch_writes`); from then on each send publishes a large
//!   value `SeqCst`, and a consumer may sleep on one claimed after it.
//!
//! A send claims position `p` when position `p + R` is free for it (queued
//! values plus held units stay within `CAP`), writes its slot and stores
//! `readable(p)`: one read-modify-write per message. The claim is `SeqCst`,
//! the notifier half against a consumer that registers and then re-reads the
//! claim word. A consumer finding a position claimed but not written reports
//! [`PopError::Busy`] and retries, except for a large value claimed with
//! `WATCHED`, whose stamp is stored `SeqCst` so it may sleep
//! ([`PopError::Writing`]).
//!
//! How a slot is freed depends on the consumers:
//! - **Many** claim `h` by compare-exchange once its stamp is `readable(h)`,
//!   read it and store `writable(h + CAP)` (release: their claim already
//!   paired with waiting senders). A send checks the stamp of `p + R`.
//! - **One** reads `h` and publishes its head `h + 1` (`SeqCst` when a sender
//!   waits: the notifier half), writing no slot, so a slot's line is written
//!   by its producer alone. A send checks `p + R < head + CAP` against the
//!   head a producer last read (`TailLine::head_seen`, in the claim word's
//!   line), loading the consumer's head only when that says full. A slot
//!   not yet written keeps its previous lap's stamp (`vacant`); the
//!   consumer tells it from `readable(h)`, and a mark replaces it.
//!
//! Why a polling `try_front` may answer `Empty` from a slot `h` that is
//! `vacant(h)` (not marked) with `h` at or past `fast_from` and no close
//! seen: every send that completed before it and claimed past `h` saw
//! `POLLING` and, before publishing, walked back from its position, marking
//! each vacant slot, stopping at a published one (whose producer walked on
//! from there before it) or a taken one (the head is past it). So each
//! such send left `h` marked, published or taken, visibly to this read.
//! Many consumers acquire the head they read, and so every send before the
//! claim that moved it there; a head read stale only finds its slot taken.
//! With many consumers a claimed slot may still hold the previous lap's
//! value, being read (its producer waits for the read): a walk waits for
//! that read too, then marks the slot, since its plain `vacant` stamp would
//! otherwise read as empty.

#![allow(
    clippy::inline_always,
    reason = "each message's steps are `inline(always)`: with a hint alone LLVM leaves one out of line in some builds, a call per message"
)]

use std::sync::atomic::compiler_fence;

use crossbeam_utils::CachePadded;

use crate::arity::{Arity, Many, One};
use crate::slot::{CLAIMED, Stamp, Stamped, is_large, marked, readable, writable};
use crate::storage::{Capacity, PopError, PushError, Storage};
use crate::sync::{AtomicBool, AtomicU64, Ordering, SeqCst};
use crate::wait::{Fence, Wait, after_lost_claim, spin_hint};

use super::{Buffer, Cursors, RingFront, sealed};

/// Many producers' cursors: the shared claim word (module docs), the
/// consumers' head, and what the consumers' arity adds (`K`).
pub struct Claiming<K: Consumers> {
    /// The producers' line: the claim word and, for one consumer, its head.
    tail: CachePadded<TailLine>,
    /// The consumers' line: the head word and the close flag.
    head: CachePadded<HeadLine>,
    /// What the consumers' arity adds.
    consumers: K,
}

/// What the producers read on every send.
struct TailLine {
    /// The claim word (module docs).
    word: AtomicU64,
    /// One consumer: its head as a producer last read it, a lower bound, so
    /// that a claim checks capacity in this line (`room_by_head`).
    head_seen: AtomicU64,
    /// Many consumers: one past the position a marking producer last
    /// published, so that the next position's walk need not load that
    /// slot's stamp (`mark_claims_before`).
    marked_to: AtomicU64,
    /// The first position claimed after `WATCHED` was set (`u64::MAX`
    /// before), from which on a large value being written is `Writing`.
    watched_from: AtomicU64,
}

impl TailLine {
    /// `head_seen`, acquiring the head store it carries (`room_by_head`).
    ///
    /// Under loom a read-modify-write, which reads the latest value: loom
    /// does not explore reads of older ones (with them its grant model runs
    /// for an hour). Each older value is a head the consumer published, read
    /// with the same acquire chain, and a lower bound: at worst the producer
    /// finds the ring full by it and loads the head itself.
    #[inline(always)]
    fn head_seen(&self) -> u64 {
        #[cfg(asyncband_loom)]
        return self.head_seen.fetch_add(0, Ordering::Acquire);
        // ORDERING: Acquire, as in `room_by_head`.
        #[cfg(not(asyncband_loom))]
        self.head_seen.load(Ordering::Acquire)
    }
}

/// What the consumers read on every pop.
struct HeadLine {
    /// The next position to take; many consumers claim it, one publishes it
    /// after each read (its frees: see the module docs).
    word: AtomicU64,
    /// Set by `close` after `CLOSED`: a consumer finding the next slot
    /// unclaimed knows, without the claim word, that no close completed.
    closed: AtomicBool,
    /// The first position claimed after `POLLING` was set (`u64::MAX`
    /// before), from which on `try_front` may skip the claim word.
    fast_from: AtomicU64,
}

/// Many producers' consumers: [`OneConsumer`] or [`ManyConsumers`]. Sealed.
pub trait Consumers: sealed::Sealed + Sized + 'static {
    /// The consumers' arity.
    type Arity: Arity;
    /// The channel's wait policy.
    type Wait: Wait;
    /// A consumer's own state ([`Storage::Cursor`]).
    type Cursor: std::fmt::Debug + Unpin + Send + Sync;

    /// The cursors of consumers that have taken nothing.
    fn new() -> Self;

    /// A consumer's cursor.
    fn cursor() -> Self::Cursor;

    /// Takes published position `head` of `head_word`: one consumer owns it
    /// already, many claim it with a compare-exchange.
    ///
    /// # Errors
    ///
    /// The current head when another consumer took `head` first.
    fn claim(&self, head_word: &AtomicU64, head: u64) -> Result<(), u64>;

    /// The head to look at instead when another consumer took `head`, whose
    /// slot shows `stamp`, `next_lap` (writable next lap) or later. Many only.
    fn taken(&self, head_word: &AtomicU64, stamp: u64, next_lap: u64) -> Option<u64>;

    /// Before reporting empty or busy: the new head if `head` moved. Many only.
    fn moved(&self, head_word: &AtomicU64, head: u64) -> Option<u64>;

    /// A claim with `units` held found the slot `units` ahead free for `full`:
    /// the claimed slot's full position (`full - units` for one consumer,
    /// which frees in order), or `u64::MAX` when it must be waited for.
    fn claimed_slot(&self, full: u64, units: u64) -> u64;

    /// Frees the slot (`stamp`) of `head`, just read: many consumers store
    /// `writable`, one publishes `head + 1` in `head_word` instead.
    ///
    /// # Safety
    ///
    /// The caller read the value at `head` and is its only consumer (the
    /// winner of its claim, or the single consumer, with its `cursor`).
    unsafe fn free(
        &self,
        cursor: &mut Self::Cursor,
        stamp: &Stamped,
        writable: u64,
        head: u64,
        head_word: &AtomicU64,
    );

    /// A sender is about to wait for capacity (`wait/fence.rs`; one consumer).
    fn before_send_wait(&self);

    /// After a pop by one consumer: shows the freed slot to a sender that
    /// started waiting meanwhile (`wait/fence.rs`).
    ///
    /// # Safety
    ///
    /// The consumer contract of [`Storage::try_pop`] for `cursor`.
    unsafe fn after_pop(
        &self,
        cursor: &mut Self::Cursor,
        waiting: impl Fn() -> bool,
        head_word: &AtomicU64,
    );
}

/// The cursors of a single consumer of many producers: its fence (plain
/// frees while no sender waits); its position is the ring's head word.
pub struct OneConsumer<W: Wait> {
    /// On a line of its own: the consumer reads it on every pop.
    fence: CachePadded<W::Fence>,
}

/// The cursor of a single consumer of many producers ([`Storage::Cursor`]):
/// no state, only the right to act as the one consumer (to write the head).
#[derive(Debug)]
pub struct OneConsumerCursor {
    _one: (),
}

/// The cursors of many consumers: nothing beyond the head they claim.
#[derive(Debug)]
pub struct ManyConsumers<W>(std::marker::PhantomData<W>);

impl<W: Wait> std::fmt::Debug for OneConsumer<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OneConsumer").finish_non_exhaustive()
    }
}

impl<K: Consumers> std::fmt::Debug for Claiming<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claiming").finish_non_exhaustive()
    }
}

impl<W: Wait> sealed::Sealed for OneConsumer<W> {}
impl<W: Wait> sealed::Sealed for ManyConsumers<W> {}

#[allow(
    clippy::inline_always,
    reason = "steps of every send and pop: out of line each would cost a call per message"
)]
impl<W: Wait> Consumers for OneConsumer<W> {
    type Arity = One;
    type Wait = W;
    type Cursor = OneConsumerCursor;

    fn new() -> Self {
        Self {
            fence: CachePadded::new(W::Fence::new()),
        }
    }

    fn cursor() -> OneConsumerCursor {
        OneConsumerCursor { _one: () }
    }

    #[inline(always)]
    fn claim(&self, _head_word: &AtomicU64, _head: u64) -> Result<(), u64> {
        Ok(())
    }

    #[inline(always)]
    fn taken(&self, _head_word: &AtomicU64, _stamp: u64, _next_lap: u64) -> Option<u64> {
        None
    }

    #[inline(always)]
    fn moved(&self, _head_word: &AtomicU64, _head: u64) -> Option<u64> {
        None
    }

    #[inline(always)]
    fn claimed_slot(&self, full: u64, units: u64) -> u64 {
        full - units
    }

    #[inline(always)]
    unsafe fn free(
        &self,
        _cursor: &mut OneConsumerCursor,
        _stamp: &Stamped,
        _writable: u64,
        head: u64,
        head_word: &AtomicU64,
    ) {
        // Fenced, the store is the notifier half for waiting senders.
        // SAFETY: the single consumer, holding its cursor (caller's contract).
        if unsafe { self.fence.fenced(head + 1) } {
            head_word.store_sc(head + 1);
        } else {
            // ORDERING: Release pairs with the producers' loads of the head
            // (`room_by_head`); waiting senders rely on their barrier.
            head_word.store_at(head + 1, Ordering::Release);
            compiler_fence(Ordering::SeqCst);
        }
    }

    fn before_send_wait(&self) {
        self.fence.before_wait();
    }

    unsafe fn after_pop(
        &self,
        _cursor: &mut OneConsumerCursor,
        waiting: impl Fn() -> bool,
        head_word: &AtomicU64,
    ) {
        // SAFETY: the single consumer, holding its cursor (caller's contract).
        unsafe {
            self.fence.fenced_publish(waiting, || {
                // ORDERING: Relaxed; the consumer reads its own head.
                head_word.load(Ordering::Relaxed)
            });
        }
    }
}

#[allow(
    clippy::inline_always,
    reason = "steps of every send and pop: out of line each would cost a call per message"
)]
impl<W: Wait> Consumers for ManyConsumers<W> {
    type Arity = Many;
    type Wait = W;
    type Cursor = ();

    fn new() -> Self {
        Self(std::marker::PhantomData)
    }

    fn cursor() {}

    #[inline(always)]
    fn claim(&self, head_word: &AtomicU64, head: u64) -> Result<(), u64> {
        // ORDERING: SeqCst: the notifier half for senders waiting on capacity.
        head_word
            .compare_exchange_weak(head, head + 1, Ordering::SeqCst, Ordering::Relaxed)
            .map(drop)
    }

    #[inline(always)]
    fn taken(&self, head_word: &AtomicU64, stamp: u64, next_lap: u64) -> Option<u64> {
        // ORDERING: Relaxed; re-validated by the claim.
        (stamp >= next_lap).then(|| head_word.load(Ordering::Relaxed))
    }

    #[inline(always)]
    fn moved(&self, head_word: &AtomicU64, head: u64) -> Option<u64> {
        // ORDERING: Relaxed; a consistency check of our own view.
        let current = head_word.load(Ordering::Relaxed);
        (current != head).then_some(current)
    }

    #[inline(always)]
    fn claimed_slot(&self, full: u64, units: u64) -> u64 {
        if units == 0 { full } else { u64::MAX }
    }

    #[inline(always)]
    unsafe fn free(&self, (): &mut (), stamp: &Stamped, writable: u64, _: u64, _: &AtomicU64) {
        // ORDERING: Release, paired with the producer's Acquire stamp load.
        Stamp::store(stamp, writable, Ordering::Release);
    }

    fn before_send_wait(&self) {}

    unsafe fn after_pop(&self, (): &mut (), _waiting: impl Fn() -> bool, _head_word: &AtomicU64) {}
}

impl<K: Consumers> sealed::Sealed for Claiming<K> {}

impl<K: Consumers> Cursors for Claiming<K> {
    type Stamp = Stamped;

    fn new() -> Self {
        Self {
            tail: CachePadded::new(TailLine {
                word: AtomicU64::new(0),
                head_seen: AtomicU64::new(0),
                marked_to: AtomicU64::new(0),
                watched_from: AtomicU64::new(u64::MAX),
            }),
            head: CachePadded::new(HeadLine {
                word: AtomicU64::new(0),
                closed: AtomicBool::new(false),
                fast_from: AtomicU64::new(u64::MAX),
            }),
            consumers: K::new(),
        }
    }

    unsafe fn take_queued<T, const CAP: usize>(ring: &Buffer<T, CAP, Self>) -> Option<T> {
        // ORDERING: Relaxed; the last consumer reads its own head.
        let head = ring.cursors.head.word.load(Ordering::Relaxed);
        // ORDERING: SeqCst: the closed claim word's position is the frozen end.
        if head & Buffer::<T, CAP, Self>::POS_MASK
            == Buffer::<T, CAP, Self>::pos(ring.cursors.tail.word.load_sc())
        {
            return None;
        }
        let slot = ring.slot(head);
        // ORDERING: Acquire pairs with the publish of a claim before close.
        while slot.stamp.load(Ordering::Acquire) != readable(head) {
            spin_hint();
        }
        // SAFETY: published, and no other consumer exists.
        let value = unsafe { slot.read() };
        if K::Arity::MANY {
            // ORDERING: Release, as in `release_front`.
            slot.stamp.store(
                writable(head + Buffer::<T, CAP, Self>::CAP64),
                Ordering::Release,
            );
        }
        // ORDERING: SeqCst, a query's view of the head (and one consumer's free).
        ring.cursors.head.word.store_sc(head + 1);
        Some(value)
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

impl<T, const CAP: usize, K: Consumers> Buffer<T, CAP, Claiming<K>> {
    const CLOSED: u64 = 1;
    const WAITING: u64 = 2;
    const POLLING: u64 = 4;
    const WATCHED: u64 = 8;
    const R_SHIFT: u32 = 4;
    const R_BITS: u32 = if CAP.is_power_of_two() {
        CAP.trailing_zeros() + 1
    } else {
        1
    };
    const R_FIELD: u64 = ((1 << Self::R_BITS) - 1) << Self::R_SHIFT;
    const ONE_R: u64 = 1 << Self::R_SHIFT;
    const POS_SHIFT: u32 = Self::R_SHIFT + Self::R_BITS;
    pub(super) const ONE_POS: u64 = 1 << Self::POS_SHIFT;
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

    /// The full position `stamp` is writable for, if that is truncated
    /// position `want`: one compare. A `CLAIMED` mark, if left on, only
    /// makes the full position wrong, never a wrong slot free.
    #[inline(always)]
    fn free_for(stamp: u64, want: u64) -> Option<u64> {
        (stamp & 1 == 0 && (stamp >> 1) & Self::POS_MASK == want).then_some(stamp >> 1)
    }

    /// Compares slot `pos & MASK` against truncated position `want`.
    #[inline]
    fn lap(&self, want: u64, order: Ordering) -> Lap {
        let stamp = if order == Ordering::SeqCst {
            self.slot(want).stamp.load_seq_cst()
        } else {
            self.slot(want).stamp.load(order)
        } & !CLAIMED;
        if let Some(full) = Self::free_for(stamp, want) {
            return Lap::Free(full);
        }
        let have = (stamp >> 1) & Self::POS_MASK;
        // Readable for `want` (its claim is taken) also counts as ahead.
        if have.wrapping_sub(want) & Self::POS_MASK < Self::POS_MASK / 2 {
            Lap::Ahead
        } else {
            Lap::Behind
        }
    }

    /// Whether `extra` more units fit after claim word `word` (the slot of
    /// `pos + R + extra - 1` is free for it); `None`: the word is stale.
    fn fits(&self, word: u64, extra: u64) -> Option<bool> {
        self.room_for(word, extra).map(|room| room.is_some())
    }

    /// As [`Ring::fits`], with room as `Some(Some(full))`, the full position
    /// of the slot checked (the claimed one with no units held, `extra == 1`).
    #[inline(always)]
    #[allow(
        clippy::option_option,
        reason = "an intentional private three-state answer: stale word, no room, or room at a position"
    )]
    fn room_for(&self, word: u64, extra: u64) -> Option<Option<u64>> {
        let last = Self::pos(word)
            .wrapping_add(Self::units(word))
            .wrapping_add(extra - 1)
            & Self::POS_MASK;
        if !K::Arity::MANY {
            return self.room_by_head(last);
        }
        // ORDERING: SeqCst: acquires the consumer's writable stamp (its read
        // before our write), and is the waiting sender's re-check, paired with
        // the consumers' SeqCst claims.
        match self.lap(last, Ordering::SeqCst) {
            Lap::Free(full) => Some(Some(full)),
            Lap::Ahead => None,
            Lap::Behind => {
                // ORDERING: SeqCst, as above.
                let head = self.cursors.head.word.load_sc() & Self::POS_MASK;
                // Capacity counts claims: a slot claimed and still being read
                // is room, and its publisher waits for the reader.
                Some((last.wrapping_sub(head) & Self::POS_MASK < Self::CAP64).then_some(u64::MAX))
            }
        }
    }

    /// One consumer: [`Ring::room_for`] of truncated position `last`, whose
    /// slot is free once the consumer's head has passed `last - CAP`. Checks
    /// the head producers last read first, in the claim word's line, and
    /// loads the consumer's head only when that says full.
    #[inline(always)]
    #[allow(clippy::option_option, reason = "as `room_for`, whose answer this is")]
    fn room_by_head(&self, last: u64) -> Option<Option<u64>> {
        let line = &self.cursors.tail;
        // Acquire, paired with the Release store below, which carries the
        // consumer's head store that producer read (and so its reads).
        let seen = line.head_seen();
        if let Some(full) = Self::within_cap(last, seen) {
            return Some(Some(full));
        }
        // ORDERING: SeqCst: acquires the consumer's reads of the slots it
        // freed, and is the waiting sender's re-check, paired with a single
        // consumer's SeqCst (fenced) store of its head.
        let head = self.cursors.head.word.load_sc();
        if last.wrapping_sub(head) & Self::POS_MASK > Self::POS_MASK / 2 {
            // `last` is behind the head: taken already, the word is stale.
            return None;
        }
        // At least `seen` (its store happens before this load). ORDERING:
        // Release, for the Acquire load above. Another producer may store an
        // older head after it: a lower bound all the same.
        if head != seen {
            line.head_seen.store(head, Ordering::Release);
        }
        Some(Self::within_cap(last, head))
    }

    /// The full position of truncated `pos` if it is less than `CAP` past
    /// full position `head`.
    #[inline(always)]
    fn within_cap(pos: u64, head: u64) -> Option<u64> {
        let ahead = pos.wrapping_sub(head) & Self::POS_MASK;
        (ahead < Self::CAP64).then_some(head + ahead)
    }

    /// The full position of a claimed truncated `pos` whose slot the claim
    /// found free (`None` when the slot must be checked: many consumers).
    #[inline(always)]
    fn fast_room(&self, pos: u64) -> Option<u64> {
        if K::Arity::MANY {
            // ORDERING: SeqCst, as in `room_for`.
            let stamp = self.slot(pos).stamp.load_seq_cst();
            // `lap` without its `CLAIMED` mask: marks go on claimed slots
            // only, so if the claim succeeds this slot was unmarked.
            Self::free_for(stamp, pos)
        } else {
            Self::within_cap(pos, self.cursors.tail.head_seen())
        }
    }

    /// Waits until the slot of claimed (truncated) `pos` is writable for it,
    /// spinning while a consumer reads the previous lap; the full position.
    fn wait_writable(&self, pos: u64) -> u64 {
        if !K::Arity::MANY {
            // Free already: capacity was checked against a head past `pos -
            // CAP`, whose store this thread's claim (a chain of read-modify-
            // writes of the claim word since that check) happens after, so
            // the head read here is at least that and at most `pos`.
            // ORDERING: Relaxed, by that chain.
            let head = self.cursors.head.word.load(Ordering::Relaxed);
            return head + (pos.wrapping_sub(head) & Self::POS_MASK);
        }
        loop {
            // ORDERING: Acquire pairs with the releasing consumer's store.
            if let Lap::Free(full) = self.lap(pos, Ordering::Acquire) {
                return full;
            }
            spin_hint();
        }
    }

    /// Moves `*value` to the position claimed from `word` and publishes it;
    /// `known` is its full position if the claim saw the slot free, or `MAX`.
    ///
    /// # Safety
    ///
    /// `*value` holds a value.
    #[inline(always)]
    pub(super) unsafe fn publish(&self, word: u64, known: u64, value: &mut Option<T>) {
        let full = if known == u64::MAX {
            self.wait_writable(Self::pos(word))
        } else {
            known
        };
        let slot = self.slot(full);
        // SAFETY: claimed, and free for it: ours until readable; `*value`
        // holds a value (caller's contract).
        unsafe { slot.write_from(value) };
        // After the write, which owns the previous slot's line, usually.
        let walk = word & Self::POLLING != 0;
        if walk {
            self.mark_claims_before(full);
        }
        // Release (`SeqCst` for a large value watched), paired with `front`'s load.
        slot.publish(readable(full), word & Self::WATCHED != 0);
        if K::Arity::MANY && walk {
            // ORDERING: Release, after the publish: acquired by the next
            // position's producer in place of this slot's stamp.
            self.cursors
                .tail
                .marked_to
                .store(full + 1, Ordering::Release);
        }
    }

    /// The stamp of claimed position `pos`'s slot until its value is
    /// written. Many consumers freed it as `writable(pos)`; one leaves the
    /// previous lap's in place (read already: `pos` was claimed within `CAP`
    /// of the head), or a fresh ring's.
    #[inline(always)]
    fn vacant(pos: u64) -> u64 {
        if !K::Arity::MANY && pos >= Self::CAP64 {
            readable(pos - Self::CAP64)
        } else {
            writable(pos)
        }
    }

    /// Before publishing `full`, marks `CLAIMED` the slots before it still
    /// vacant, down to the first published (or, many consumers, taken) one:
    /// usually just that one load; see the module docs.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "a step of every send")]
    fn mark_claims_before(&self, full: u64) {
        // Many consumers write the previous slot's line to free it, so its
        // stamp is a transfer away; the previous position's producer, if it
        // marked, noted its publish in the claim word's line instead, which
        // this claim has just held. ORDERING: Acquire, paired with that
        // Release store, as for the stamp below.
        if K::Arity::MANY && self.cursors.tail.marked_to.load(Ordering::Acquire) == full {
            return;
        }
        // Position 0 wraps to a position no slot is stamped for.
        let pos = full.wrapping_sub(1);
        // ORDERING: Acquire: a published stamp synchronises with its
        // producer, whose walk marked the positions before it; a taken one
        // with its consumer, whose claim moved the head past `pos`.
        let seen = self.slot(pos).stamp.load(Ordering::Acquire);
        if seen != Self::vacant(pos) && seen != marked(pos) && !Self::being_read(seen, pos) {
            return;
        }
        self.mark_claims_from(pos);
    }

    /// The rest of `mark_claims_before`, from claimed position `pos` down to
    /// the first slot neither vacant nor marked for its position.
    #[cold]
    #[inline(never)]
    fn mark_claims_from(&self, mut pos: u64) {
        loop {
            let stamp = &self.slot(pos).stamp;
            // ORDERING: Acquire, as in `mark_claims_before`.
            let seen = stamp.load(Ordering::Acquire);
            if Self::being_read(seen, pos) {
                // Claimed, but its producer waits for the previous lap's
                // reader: it becomes vacant (to mark) or published soon.
                // (`SeqCst`: under loom a read-modify-write, the latest.)
                while stamp.load_seq_cst() == seen {
                    spin_hint();
                }
                continue;
            }
            let marked = seen == marked(pos);
            if !marked && (seen != Self::vacant(pos) || !Self::mark_claimed(stamp, pos)) {
                return;
            }
            pos = pos.wrapping_sub(1);
        }
    }

    /// Many consumers: whether slot `pos`, claimed, still shows `seen`, the
    /// previous lap's value, which a consumer has claimed and is reading
    /// (the claim of `pos` found the head past it). One consumer's vacant
    /// stamp is that value, and no slot of theirs is in this state.
    #[inline(always)]
    fn being_read(seen: u64, pos: u64) -> bool {
        K::Arity::MANY && pos >= Self::CAP64 && seen == readable(pos - Self::CAP64)
    }

    /// Marks claimed `pos`'s vacant slot; false if it was published.
    fn mark_claimed(stamp: &Stamped, pos: u64) -> bool {
        // ORDERING: Acquire on failure, as in `mark_claims_before`; the mark
        // itself is ordered before our publish by that Release store.
        match stamp.compare_exchange(
            Self::vacant(pos),
            marked(pos),
            Ordering::Relaxed,
            Ordering::Acquire,
        ) {
            Ok(_) => true,
            Err(now) => now == marked(pos),
        }
    }

    /// A consumer finding the ring empty: sets `POLLING` once, and notes
    /// the first position whose producer sees it.
    #[cold]
    fn start_polling(&self) {
        self.raise(Self::POLLING, &self.cursors.head.fast_from);
    }

    /// Sets `flag`, set once, in the claim word, and stores in `from` the
    /// first position claimed with it (unless a consumer did so before).
    fn raise(&self, flag: u64, from: &AtomicU64) {
        // ORDERING: Relaxed: set once, and any value set is exact.
        if from.load(Ordering::Relaxed) != u64::MAX {
            return;
        }
        // A head no later than the position the word holds below: loaded
        // first, acquiring (from many consumers) the claims before it.
        let head = self.cursors.head.word.load(Ordering::Acquire);
        // ORDERING: Relaxed: the word's modification order alone decides
        // which claims see the flag.
        let word = self.cursors.tail.word.fetch_or(flag, Ordering::Relaxed);
        let claimed = Self::pos(word).wrapping_sub(head) & Self::POS_MASK;
        // Consumers racing here store positions with `flag` set before
        // them: either is exact.
        from.store(head + claimed, Ordering::Relaxed);
    }

    /// Compare-exchange on the claim word; on failure, the current word.
    #[inline]
    pub(super) fn cas_tail(&self, current: u64, new: u64) -> Result<u64, u64> {
        // ORDERING: SeqCst: the notifier half against a registering consumer
        // (module docs); failure only needs a fresh value.
        self.cursors.tail.word.compare_exchange_weak(
            current,
            new,
            Ordering::SeqCst,
            Ordering::Relaxed,
        )
    }

    /// Acquires `n` units; `honour_queue`: queued senders make it `Full`.
    fn acquire_units(&self, n: u64, honour_queue: bool) -> Result<(), PushError<()>> {
        // ORDERING: Relaxed; the compare-exchange validates it.
        let mut word = self.cursors.tail.word.load(Ordering::Relaxed);
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
                    word = self.cursors.tail.word.load(Ordering::Relaxed);
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

#[allow(
    clippy::inline_always,
    reason = "the ring's per-message methods: out of line they would cost a call per message"
)]
// SAFETY: by the module docs' protocol each value is delivered at most once
// (one claim per position) and at least once (claims before CLOSED drain),
// each producer's at increasing positions; waiters' conditions change SeqCst.
unsafe impl<T, const CAP: usize, K: Consumers> Storage for Buffer<T, CAP, Claiming<K>> {
    type Item = T;
    type Front = RingFront<T, Stamped>;
    type Cursor = K::Cursor;
    type ProducerCursor = ();
    type Senders = Many;
    type Receivers = K::Arity;
    type Wait = K::Wait;
    const CAPACITY: Option<usize> = Some(CAP);

    fn new() -> Self {
        Self::with_cursors(Claiming::new())
    }

    fn cursor(&self) -> K::Cursor {
        K::cursor()
    }

    fn producer_cursor(&self) {}

    #[inline(always)]
    unsafe fn try_push_from(
        &self,
        _cursor: &mut (),
        value: &mut Option<T>,
    ) -> Result<(), PushError<()>> {
        debug_assert!(value.is_some(), "a value to push");
        // ORDERING: Relaxed; the compare-exchange validates it.
        let mut word = self.cursors.tail.word.load(Ordering::Relaxed);
        // The common case first, on its own (its code stays small): open,
        // nobody queued, no units held, no consumer polling (one test: a
        // plain send pays nothing for permits or marks), the next slot free.
        if word & (Self::CLOSED | Self::WAITING | Self::R_FIELD | Self::POLLING) == 0 {
            if let Some(full) = self.fast_room(Self::pos(word)) {
                match self.cas_tail(word, word.wrapping_add(Self::ONE_POS)) {
                    Ok(_) => {
                        // SAFETY: claimed; `*value` holds a value.
                        unsafe { self.publish(word, full, value) };
                        return Ok(());
                    }
                    Err(current) => word = current,
                }
            }
        }
        // A claim lost here backs off, as the list's do, so that the winner
        // writes its slot while the word's line stays its own (the common
        // case above stays as it was: it is the one-thread ready path).
        let mut losses = 0;
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
                    word = self.cursors.tail.word.load(Ordering::Relaxed);
                    continue;
                }
                Some(None) => return Err(PushError::Full(())),
                // The slot checked is `R` past the claimed one; a single
                // consumer freed that in order, its read before the stamp
                // store just loaded (`Consumers::claimed_slot`).
                Some(Some(full)) => self.cursors.consumers.claimed_slot(full, Self::units(word)),
            };
            match self.cas_tail(word, word.wrapping_add(Self::ONE_POS)) {
                Ok(_) => {
                    // SAFETY: claimed; `*value` holds a value.
                    unsafe { self.publish(word, known, value) };
                    return Ok(());
                }
                Err(current) => {
                    word = current;
                    after_lost_claim(&mut losses);
                }
            }
        }
    }

    #[inline(always)]
    unsafe fn front(&self, _cursor: &mut K::Cursor) -> Result<RingFront<T, Stamped>, PopError> {
        let (consumers, head_word) = (&self.cursors.consumers, &self.cursors.head.word);
        // ORDERING: Relaxed; one consumer's own head; many re-validate.
        let mut head = head_word.load(Ordering::Relaxed);
        loop {
            let slot = self.slot(head);
            // Acquire (`SeqCst` for a large value, a registered consumer's
            // re-check), paired with `publish`: readable means visible.
            let stamp = slot.published();
            if stamp == readable(head) {
                if let Err(current) = consumers.claim(head_word, head) {
                    head = current;
                    continue;
                }
                // Written, and `head` is ours (one consumer, or the claim's).
                return Ok(RingFront {
                    pos: head,
                    slot,
                    fenced: false,
                });
            }
            // A mark (the top bit) is no later lap.
            let lap = stamp & !CLAIMED;
            if let Some(current) = consumers.taken(head_word, lap, writable(head + Self::CAP64)) {
                head = current;
                continue;
            }
            // ORDERING: SeqCst: the consumer's re-check against SeqCst claims.
            let word = self.cursors.tail.word.load_sc();
            if let Some(current) = consumers.moved(head_word, head) {
                head = current;
                continue;
            }
            if Self::pos(word) != head & Self::POS_MASK {
                // ORDERING: Relaxed: set once, and any value set is exact.
                let watched = head >= self.cursors.tail.watched_from.load(Ordering::Relaxed);
                return Err(if is_large::<T>() && watched {
                    PopError::Writing
                } else {
                    PopError::Busy
                });
            }
            return Err(if word & Self::CLOSED != 0 {
                PopError::Closed
            } else {
                PopError::Empty
            });
        }
    }

    #[inline(always)]
    unsafe fn try_front(
        &self,
        cursor: &mut K::Cursor,
        waiting: bool,
    ) -> Result<RingFront<T, Stamped>, PopError> {
        let line = &self.cursors.head;
        // One consumer reads its own head (Relaxed). Many acquire the claim
        // that moved it here, and with it every send before that claim: an
        // `Empty` read from the slot is then never older than a value those
        // sends left (module docs).
        let head = line.word.load(if K::Arity::MANY {
            Ordering::Acquire
        } else {
            Ordering::Relaxed
        });
        let slot = self.slot(head);
        // An acquire load, paired with the producer's store in `publish`.
        let stamp = slot.published();
        if stamp == readable(head) && self.cursors.consumers.claim(&line.word, head).is_ok() {
            return Ok(RingFront {
                pos: head,
                slot,
                fenced: false,
            });
        }
        // ORDERING: Relaxed: set once; `closed`: see `close`.
        let closed = || line.closed.load(Ordering::Relaxed);
        // A waiter looks again: unwritten is as good as empty to it.
        if waiting && stamp != readable(head) && !closed() {
            return Err(PopError::Empty);
        }
        // A later send published and marked this claim, unwritten.
        if stamp == marked(head) {
            return Err(PopError::Busy);
        }
        // Vacant and unmarked past `fast_from`: nothing published after it
        // (module docs).
        if stamp == Self::vacant(head)
            && head >= line.fast_from.load(Ordering::Relaxed)
            && !closed()
        {
            return Err(PopError::Empty);
        }
        // SAFETY: forwarded from the caller.
        let front = unsafe { self.front(cursor) };
        if !waiting && matches!(front, Err(PopError::Empty)) {
            self.start_polling();
        }
        front
    }

    fn watch_writes(&self) {
        if is_large::<T>() {
            self.raise(Self::WATCHED, &self.cursors.tail.watched_from);
        }
    }

    unsafe fn published_behind(&self, _cursor: &mut K::Cursor) -> bool {
        // Other consumers move the head and take values while the scan runs,
        // so for them a miss proves nothing: wait the write out instead. With
        // one consumer nothing leaves `head..tail`, and a miss at every slot
        // read after the tail load means nothing was published at that load.
        if K::Arity::MANY {
            return true;
        }
        // ORDERING: Relaxed; the single consumer reads its own head.
        let head = self.cursors.head.word.load(Ordering::Relaxed);
        // ORDERING: SeqCst, as in `front`: holds every completed send's claim.
        let claimed =
            Self::pos(self.cursors.tail.word.load_sc()).wrapping_sub(head) & Self::POS_MASK;
        // ORDERING: Acquire pairs with each producer's publish.
        (0..claimed.min(Self::CAP64))
            .any(|i| self.slot(head + i).stamp.load(Ordering::Acquire) == readable(head + i))
    }

    #[allow(
        clippy::cast_possible_truncation,
        reason = "the length never exceeds `CAP`, which is a `usize`"
    )]
    fn len(&self) -> usize {
        let head = self.head_position();
        // ORDERING: SeqCst; a query.
        let word = self.cursors.tail.word.load_sc();
        let used = Self::pos(word).wrapping_sub(head) & Self::POS_MASK;
        // A consumer racing ahead of our snapshot would make this wrap.
        if used > Self::CAP64 { 0 } else { used as usize }
    }

    unsafe fn try_acquire(&self, n: usize) -> Result<(), PushError<()>> {
        self.acquire_units(n as u64, true)
    }

    #[inline]
    unsafe fn push_reserved(&self, _cursor: &mut (), value: T) -> Result<(), T> {
        // ORDERING: Relaxed; the compare-exchange validates it.
        let mut word = self.cursors.tail.word.load(Ordering::Relaxed);
        loop {
            if word & Self::CLOSED != 0 {
                // SAFETY: the caller's held unit, given back with the value.
                unsafe { self.release(1) };
                return Err(value);
            }
            match self.cas_tail(word, word.wrapping_add(Self::ONE_POS - Self::ONE_R)) {
                Ok(_) => {
                    // SAFETY: claimed; the value is in the option.
                    unsafe { self.publish(word, u64::MAX, &mut Some(value)) };
                    return Ok(());
                }
                Err(current) => word = current,
            }
        }
    }

    fn is_full(&self) -> bool {
        // ORDERING: SeqCst; a query.
        let word = self.cursors.tail.word.load_sc();
        if word & Self::WAITING != 0 {
            return true;
        }
        let used = Self::pos(word).wrapping_sub(self.head_position()) & Self::POS_MASK;
        used.min(Self::CAP64) + Self::units(word) >= Self::CAP64
    }

    #[allow(
        clippy::cast_possible_truncation,
        reason = "held units never exceed `CAP`, which is a `usize`"
    )]
    fn reserved(&self) -> usize {
        // ORDERING: SeqCst; a query.
        Self::units(self.cursors.tail.word.load_sc()) as usize
    }

    unsafe fn grant(&self, n: usize) -> usize {
        let mut granted = 0;
        while granted < n && self.acquire_units(1, false).is_ok() {
            granted += 1;
        }
        granted
    }

    fn may_grant(&self) -> bool {
        // ORDERING: SeqCst: a registered sender's look, paired with the
        // consumers' SeqCst frees or claims (`room_for`) and `release`.
        let word = self.cursors.tail.word.load_sc();
        self.fits(word, 1) != Some(false)
    }

    unsafe fn release(&self, n: usize) {
        // ORDERING: SeqCst: freeing is a condition waiters pair with; `R >= n`.
        self.cursors
            .tail
            .word
            .fetch_sub(n as u64 * Self::ONE_R, Ordering::SeqCst);
    }

    unsafe fn set_waiting(&self, waiting: bool) {
        // ORDERING: SeqCst: newcomers' claims are ordered against it.
        let tail = &self.cursors.tail.word;
        if waiting {
            tail.fetch_or(Self::WAITING, Ordering::SeqCst);
        } else {
            tail.fetch_and(!Self::WAITING, Ordering::SeqCst);
        }
    }

    #[inline(always)]
    unsafe fn take_front(&self, front: &mut RingFront<T, Stamped>) -> T {
        // SAFETY: `front` owns its published position; taken once (caller's).
        unsafe { front.take() }
    }

    #[inline]
    #[allow(
        clippy::needless_pass_by_value,
        reason = "a released front is used up, as `Storage::release_front` takes it"
    )]
    unsafe fn release_front(&self, cursor: &mut K::Cursor, front: RingFront<T, Stamped>) {
        // SAFETY: the slot of `front.pos` in our array (set by `front`).
        let slot = unsafe { &*front.slot };
        // SAFETY: we read the value at `front.pos`, which we own (caller's).
        unsafe {
            self.cursors.consumers.free(
                cursor,
                &slot.stamp,
                writable(front.pos + Self::CAP64),
                front.pos,
                &self.cursors.head.word,
            );
        }
    }

    unsafe fn peek<'a>(&'a self, _cursor: &'a mut K::Cursor) -> Option<&'a T> {
        // ORDERING: Relaxed; the single consumer reads its own head.
        let head = self.cursors.head.word.load(Ordering::Relaxed);
        // ORDERING: Acquire pairs with the producer's publish.
        if self.slot(head).stamp.load(Ordering::Acquire) != readable(head) {
            return None;
        }
        // SAFETY: published for `head`; only the single consumer (caller's
        // contract) moves it, through its cursor, borrowed as long as this.
        Some(unsafe { self.slot(head).get() })
    }

    unsafe fn close(&self, _from_producer: bool) -> bool {
        // ORDERING: SeqCst: freezes the boundary between claims.
        let first = self
            .cursors
            .tail
            .word
            .fetch_or(Self::CLOSED, Ordering::SeqCst)
            & Self::CLOSED
            == 0;
        // ORDERING: Release; `try_front` reads it only to skip the claim word
        // while no close completed, and a completed close happens before.
        self.cursors.head.closed.store(true, Ordering::Release);
        first
    }

    fn is_closed(&self) -> bool {
        // ORDERING: SeqCst; a query.
        self.cursors.tail.word.load_sc() & Self::CLOSED != 0
    }

    fn head_position(&self) -> u64 {
        // ORDERING: SeqCst; a query, and the sender's re-check in `is_full`.
        self.cursors.head.word.load_sc()
    }

    fn before_send_wait(&self) {
        self.cursors.consumers.before_send_wait();
    }

    unsafe fn after_pop(&self, cursor: &mut K::Cursor, waiting: impl Fn() -> bool) {
        // SAFETY: forwarded from the caller.
        unsafe {
            self.cursors
                .consumers
                .after_pop(cursor, waiting, &self.cursors.head.word);
        }
    }

    unsafe fn drain(&self) {
        // SAFETY: closed, and we are the last consumer (caller's contract).
        unsafe { self.drop_queued() };
    }
}

// SAFETY: the accounting invariant is kept by checking position `pos + R + n
// - 1` (its slot, or one consumer's head) before every claim or reservation,
// all in the claim word.
unsafe impl<T, const CAP: usize, K: Consumers> Capacity for Buffer<T, CAP, Claiming<K>> {
    const CAP: usize = CAP;
}

impl<T, const CAP: usize, K: Consumers> std::fmt::Debug for Buffer<T, CAP, Claiming<K>> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // ORDERING: SeqCst; a diagnostic snapshot as current as any query.
        let word = self.cursors.tail.word.load_sc();
        f.debug_struct("Ring")
            .field("capacity", &CAP)
            .field("claimed", &Self::pos(word))
            .field("reserved", &Self::units(word))
            .field("waiting", &(word & Self::WAITING != 0))
            .field("closed", &(word & Self::CLOSED != 0))
            .field("head", &self.head_position())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests {
    use super::*;

    /// A ring whose next position is `start`, as if `start` values had been
    /// sent and received.
    fn starting_at<K: Consumers>(start: u64) -> Buffer<u64, 4, Claiming<K>> {
        let ring = Buffer::<u64, 4, Claiming<K>>::new();
        let pos_mask = Buffer::<u64, 4, Claiming<K>>::POS_MASK;
        let pos_shift = Buffer::<u64, 4, Claiming<K>>::POS_SHIFT;
        ring.cursors
            .tail
            .word
            .store_sc((start & pos_mask) << pos_shift);
        ring.cursors.tail.head_seen.store_sc(start);
        ring.cursors.head.word.store_sc(start);
        for pos in start..start + 4 {
            // Many consumers free a slot for the next lap, one leaves it.
            let vacant = if K::Arity::MANY {
                writable(pos)
            } else {
                readable(pos - 4)
            };
            ring.slot(pos).stamp.store_seq_cst(vacant);
        }
        ring
    }

    /// Sends, reservations and receives across the point where the claim
    /// word's position field wraps to 0 (the stamps keep counting).
    fn positions_wrap<K: Consumers>() {
        let wrap = Buffer::<u64, 4, Claiming<K>>::POS_MASK + 1;
        for start in [wrap - 6, wrap - 3, wrap - 1] {
            let ring = starting_at::<K>(start);
            let mut cursor = ring.cursor();
            let mut next = 0;
            let mut want = 0;
            // SAFETY: single-threaded; `cursor` is the only one.
            unsafe {
                for _ in 0..4 {
                    for _ in 0..4 {
                        ring.try_push(&mut (), next).unwrap();
                        next += 1;
                    }
                    assert_eq!(ring.try_push(&mut (), 99), Err(PushError::Full(99)));
                    assert_eq!(ring.len(), 4);
                    for _ in 0..2 {
                        assert_eq!(ring.try_pop(&mut cursor), Ok(want));
                        want += 1;
                    }
                    ring.try_acquire(1).unwrap();
                    ring.try_push(&mut (), next).unwrap();
                    next += 1;
                    assert_eq!(ring.try_push(&mut (), 99), Err(PushError::Full(99)));
                    ring.push_reserved(&mut (), next).unwrap();
                    next += 1;
                    while want < next {
                        assert_eq!(ring.try_pop(&mut cursor), Ok(want));
                        want += 1;
                    }
                    assert_eq!(ring.try_pop(&mut cursor), Err(PopError::Empty));
                }
            }
        }
    }

    #[test]
    fn one_consumer_frees_a_slot_by_its_head_and_leaves_the_slot_alone() {
        let ring = Buffer::<u64, 2, Claiming<OneConsumer<crate::wait::Park>>>::new();
        let mut cursor = ring.cursor();
        // SAFETY: single-threaded; `cursor` is the only one.
        unsafe {
            ring.try_push(&mut (), 10).unwrap();
            ring.try_push(&mut (), 11).unwrap();
            assert_eq!(ring.try_push(&mut (), 12), Err(PushError::Full(12)));
            assert_eq!(ring.try_pop(&mut cursor), Ok(10));
            assert_eq!(
                ring.slot(0).stamp.load_seq_cst(),
                readable(0),
                "not written by the read"
            );
            assert_eq!(ring.head_position(), 1);
            // The producers' copy of the head says full; the head says not.
            ring.try_push(&mut (), 12).unwrap();
            assert_eq!(ring.slot(0).stamp.load_seq_cst(), readable(2));
            assert_eq!(ring.try_push(&mut (), 13), Err(PushError::Full(13)));
            assert_eq!(ring.try_pop(&mut cursor), Ok(11));
            assert_eq!(ring.try_pop(&mut cursor), Ok(12));
            assert_eq!(ring.try_pop(&mut cursor), Err(PopError::Empty));
        }
    }

    #[test]
    fn claims_carry_on_across_the_wrap_of_the_claim_words_position() {
        positions_wrap::<OneConsumer<crate::wait::Park>>();
        positions_wrap::<ManyConsumers<crate::wait::Park>>();
    }

    /// A receiver that keeps waiting reads "empty" from its slot and asks
    /// producers for no marks; a `try_recv`'s look at an empty ring does.
    fn waiting_looks_ask_no_marks<K: Consumers>() {
        type Polled<K> = Buffer<u64, 4, Claiming<K>>;
        let ring = Polled::<K>::new();
        let mut cursor = ring.cursor();
        let polling = || ring.cursors.tail.word.load_sc() & Polled::<K>::POLLING != 0;
        // SAFETY: single-threaded; each front is taken and released once.
        unsafe {
            assert_eq!(
                ring.try_front(&mut cursor, true).err(),
                Some(PopError::Empty)
            );
            assert!(!polling(), "a waiting look asked for marks");
            ring.try_push(&mut (), 1).unwrap();
            let mut front = ring.try_front(&mut cursor, true).unwrap();
            assert_eq!(ring.take_front(&mut front), 1);
            ring.release_front(&mut cursor, front);
            assert_eq!(
                ring.try_front(&mut cursor, false).err(),
                Some(PopError::Empty)
            );
            assert!(polling(), "a polling look marks from now on");
            ring.close(true);
            assert_eq!(
                ring.try_front(&mut cursor, true).err(),
                Some(PopError::Closed)
            );
        }
    }

    #[test]
    fn a_waiting_look_asks_producers_for_no_marks() {
        waiting_looks_ask_no_marks::<OneConsumer<crate::wait::Park>>();
        waiting_looks_ask_no_marks::<ManyConsumers<crate::wait::Park>>();
    }
}

/// A loom model of the walk over a claim waiting for a reader, which needs
/// the ring's own steps: a send's claim apart from its wait.
#[cfg(all(test, asyncband_loom))]
mod loom_tests {
    use loom::thread;

    use super::*;

    type Polled = Buffer<u32, 2, Claiming<ManyConsumers<crate::wait::Park>>>;

    /// Many consumers: a position claimed while its slot's previous lap is
    /// still being read becomes vacant when that read ends; a later send's
    /// walk waits for that and marks it, so a polling `try_recv` after the
    /// later send completed finds the claim in flight, never `Empty`.
    #[test]
    fn a_polling_try_recv_never_reports_empty_past_a_claim_waiting_for_a_reader() {
        loom::model(|| {
            let ring = crate::Arc::new(Polled::new());
            let mut cursor = ();
            // SAFETY: many consumers' cursor holds nothing; each front below
            // is taken once and released with the same cursor, and `claim`
            // published once.
            let mut reading = unsafe {
                assert_eq!(
                    ring.try_front(&mut cursor, false).err(),
                    Some(PopError::Empty)
                );
                ring.try_push(&mut (), 10).unwrap();
                ring.try_push(&mut (), 11).unwrap();
                let reading = ring.try_front(&mut cursor, false).unwrap();
                assert_eq!(ring.try_pop(&mut cursor), Ok(11));
                reading
            };
            // Position 2, whose slot still holds position 0, being read: a
            // send's claim, before it waits for that read.
            let claim = ring.cursors.tail.word.load_sc();
            assert!(matches!(ring.room_for(claim, 1), Some(Some(u64::MAX))));
            ring.cas_tail(claim, claim + Polled::ONE_POS).unwrap();
            // Position 3, free: its walk passes over position 2.
            let later = {
                let ring = ring.clone();
                // SAFETY: many producers' cursor holds nothing.
                thread::spawn(move || unsafe { ring.try_push(&mut (), 2) }.unwrap())
            };
            // SAFETY: as above.
            unsafe {
                assert_eq!(ring.take_front(&mut reading), 10);
                ring.release_front(&mut cursor, reading);
            }
            later.join().unwrap();
            // SAFETY: as above.
            unsafe {
                let first = ring.try_front(&mut cursor, false).err();
                // Completes the claim first, so that the ring drains if the
                // assertion fails.
                ring.publish(claim, u64::MAX, &mut Some(1));
                assert_eq!(
                    first,
                    Some(PopError::Busy),
                    "a claim in flight ahead of a completed send"
                );
                assert_eq!(ring.try_pop(&mut cursor), Ok(1));
                assert_eq!(ring.try_pop(&mut cursor), Ok(2));
            }
        });
    }
}
