//! The ring with one producer and one consumer (`spsc`), the first of
//! the bounded ring's two algorithms (see `mod.rs`).
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

use crate::arity::{Arity, Topology};
use crate::storage::{Capacity, PopError, PushError, Storage};
use crate::sync::{Ordering, SeqCst, spin_hint};

use super::{Ring, RingFront};

#[allow(
    clippy::inline_always,
    reason = "one arity's half of a `Storage` method: out of line it would cost a call per message"
)]
impl<T, const CAP: usize, P: Arity, C: Arity> Ring<T, CAP, P, C>
where
    (P, C): Topology,
{
    /// One producer: the consumer's position, refreshed from the published
    /// head when the cached copy leaves less than `need` free slots.
    ///
    /// # Safety
    ///
    /// Single producer.
    pub(super) unsafe fn room(&self, tail: u64, need: u64) -> bool {
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
    pub(super) unsafe fn publish_one(&self, tail: u64, value: &mut Option<T>) -> Result<(), ()> {
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
    pub(super) unsafe fn readable_end(&self, head: u64) -> u64 {
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

    /// [`Storage::try_push_from`] with one producer and one consumer.
    ///
    /// # Safety
    ///
    /// As for [`Storage::try_push_from`].
    #[inline(always)]
    pub(super) unsafe fn indexed_try_push_from(
        &self,
        value: &mut Option<T>,
    ) -> Result<(), PushError<()>> {
        debug_assert!(value.is_some(), "a value to push");
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
        unsafe { self.publish_one(tail, value) }.map_err(PushError::Closed)
    }

    /// [`Storage::front`] with one producer and one consumer.
    ///
    /// # Safety
    ///
    /// As for [`Storage::front`].
    #[inline(always)]
    pub(super) unsafe fn indexed_front(&self) -> Result<RingFront<T, P::Stamp>, PopError> {
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
        Ok(RingFront {
            pos: head,
            slot: self.slot(head),
            fenced,
        })
    }

    /// [`Storage::close`] with one producer and one consumer.
    ///
    /// # Safety
    ///
    /// As for [`Storage::close`].
    #[inline(always)]
    pub(super) unsafe fn indexed_close(&self, from_producer: bool) -> bool {
        // ORDERING: SeqCst: the closer's re-check of the tail, paired
        // with the producer's publish (see `Boundary`).
        let published = || self.tail.word.load_sc();
        self.boundary
            .close_single(from_producer, &self.producer.fence, published)
    }

    /// [`Storage::len`] with one producer and one consumer.
    #[inline(always)]
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the length never exceeds `CAP`, which is a `usize`"
    )]
    pub(super) fn indexed_len(&self) -> usize {
        let head = self.head_pos();
        // ORDERING: SeqCst; a query.
        let mut tail = self.tail.word.load_sc();
        if let Some(end) = self.boundary.frozen() {
            tail = tail.min(end);
        }
        tail.saturating_sub(head) as usize
    }

    /// [`Storage::try_acquire`] with one producer and one consumer.
    ///
    /// # Safety
    ///
    /// As for [`Storage::try_acquire`].
    #[inline(always)]
    pub(super) unsafe fn indexed_try_acquire(&self, n: usize) -> Result<(), PushError<()>> {
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
        Ok(())
    }

    /// [`Storage::push_reserved`] with one producer and one consumer.
    ///
    /// # Safety
    ///
    /// As for [`Storage::push_reserved`].
    #[inline(always)]
    pub(super) unsafe fn indexed_push_reserved(&self, value: T) -> Result<(), T> {
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
        result.map_err(|()| unsafe { value.unwrap_unchecked() })
    }

    /// [`Storage::is_full`] with one producer and one consumer.
    #[inline(always)]
    pub(super) fn indexed_is_full(&self) -> bool {
        self.len() + self.reserved() >= CAP
    }

    /// [`Storage::release_front`] with one producer and one consumer.
    ///
    /// # Safety
    ///
    /// As for [`Storage::release_front`].
    #[inline(always)]
    #[allow(
        clippy::needless_pass_by_value,
        reason = "a released front is used up, as `Storage::release_front` takes it"
    )]
    pub(super) unsafe fn indexed_release_front(&self, front: RingFront<T, P::Stamp>) {
        let head = front.pos;
        // Frees the slot for the producer, releasing our read of it.
        // SAFETY: single consumer.
        unsafe {
            self.consumer
                .head
                .publish(&self.head.word, head + 1, front.fenced);
        }
    }

    /// `Ring::take_queued` with one producer and one consumer.
    ///
    /// # Safety
    ///
    /// As for `Ring::take_queued`.
    #[inline(always)]
    pub(super) unsafe fn indexed_take_queued(&self) -> Option<T> {
        // ORDERING: Relaxed; the last consumer reads its own head.
        let head = self.head.word.load(Ordering::Relaxed);
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
        Some(value)
    }
}
