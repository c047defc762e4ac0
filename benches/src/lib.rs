//! What the benchmark workloads send and how they check what they received.
//!
//! The benchmarks themselves are the `channels` and `memory` bench targets of
//! this package (see `benches/README.md`); the peers are dev-dependencies, so
//! only the parts that need none of them live here: the payloads, the
//! receive-side checks that keep a broken channel from looking fast, and the
//! reference-counted waker the runtime-free async cells poll with.
//!
//! # Examples
//!
//! ```
//! use asyncband_benches::{InOrder, Payload};
//!
//! let mut check = InOrder::new(2);
//! check.take(&u64::stamped(0, 0));
//! check.take(&u64::stamped(1, 0));
//! check.take(&u64::stamped(0, 1));
//! check.take(&u64::stamped(1, 1));
//! check.finish(2);
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

/// A message that carries its producer and its sequence number, so the
/// consumer can check order and completeness.
///
/// `Default + Copy` because thingbuf preallocates its slots with `Default`
/// and reuses them through `Clone`.
pub trait Payload: Copy + Default + Send + 'static {
    /// The `seq`-th message of producer `producer`.
    fn stamped(producer: usize, seq: usize) -> Self;
    /// The producer that sent this message.
    fn producer(&self) -> usize;
    /// The sequence number of this message within its producer.
    fn seq(&self) -> usize;
}

/// The `u64` payload: producer in the high 32 bits, sequence in the low 32.
impl Payload for u64 {
    #[inline]
    fn stamped(producer: usize, seq: usize) -> Self {
        ((producer as u64) << 32) | (seq as u64 & 0xffff_ffff)
    }

    #[inline]
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the word was written from a `usize` by `stamped`"
    )]
    fn producer(&self) -> usize {
        (*self >> 32) as usize
    }

    #[inline]
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the word was written from a `usize` by `stamped`"
    )]
    fn seq(&self) -> usize {
        (*self & 0xffff_ffff) as usize
    }
}

/// A payload of `N` bytes (at least 16): the producer and the sequence
/// number in the first 16, little-endian, zeros after them.
///
/// A newtype only because an array of more than 32 bytes has no `Default`,
/// which thingbuf needs.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Bytes<const N: usize>(pub [u8; N]);

/// The 1 KiB payload.
pub type Kib = Bytes<1024>;

impl<const N: usize> Default for Bytes<N> {
    fn default() -> Self {
        Self([0; N])
    }
}

impl<const N: usize> std::fmt::Debug for Bytes<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bytes")
            .field("len", &N)
            .field("producer", &self.producer())
            .field("seq", &self.seq())
            .finish()
    }
}

impl<const N: usize> Bytes<N> {
    /// The little-endian word at bytes `at..at + 8`.
    #[inline]
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the word was written from a `usize` by `stamped`"
    )]
    fn word(&self, at: usize) -> usize {
        let mut word = [0; 8];
        word.copy_from_slice(&self.0[at..at + 8]);
        u64::from_le_bytes(word) as usize
    }
}

impl<const N: usize> Payload for Bytes<N> {
    #[inline]
    fn stamped(producer: usize, seq: usize) -> Self {
        const {
            assert!(N >= 16, "the producer and sequence take 16 bytes");
        }
        let mut bytes = [0; N];
        bytes[..8].copy_from_slice(&(producer as u64).to_le_bytes());
        bytes[8..16].copy_from_slice(&(seq as u64).to_le_bytes());
        Self(bytes)
    }

    #[inline]
    fn producer(&self) -> usize {
        self.word(0)
    }

    #[inline]
    fn seq(&self) -> usize {
        self.word(8)
    }
}

/// The check of a sole consumer: each producer's messages arrive exactly
/// once and in the order they were sent.
#[derive(Debug)]
pub struct InOrder {
    next: Vec<usize>,
}

impl InOrder {
    /// A check for messages from `producers` producers.
    #[must_use]
    pub fn new(producers: usize) -> Self {
        Self {
            next: vec![0; producers],
        }
    }

    /// Checks one received message.
    ///
    /// # Panics
    ///
    /// If the message comes from an unknown producer or out of order.
    #[inline]
    pub fn take<T: Payload>(&mut self, message: &T) {
        let (producer, seq) = (message.producer(), message.seq());
        let Some(next) = self.next.get_mut(producer) else {
            panic!("message from unknown producer {producer}");
        };
        assert_eq!(
            seq, *next,
            "producer {producer}: got message {seq}, expected {next}"
        );
        *next += 1;
    }

    /// Checks that every producer's `per_producer` messages all arrived.
    ///
    /// # Panics
    ///
    /// If any is missing.
    pub fn finish(self, per_producer: usize) {
        for (producer, &received) in self.next.iter().enumerate() {
            assert_eq!(
                received, per_producer,
                "producer {producer}: {received} of {per_producer} messages arrived"
            );
        }
    }
}

/// The check of one of several consumers: each producer's messages arrive in
/// ascending order; merged over all consumers, every message arrived once
/// (by count and by sum of sequence numbers).
#[derive(Debug)]
pub struct Ascending {
    last: Vec<Option<usize>>,
    count: Vec<usize>,
    sum: Vec<u64>,
}

impl Ascending {
    /// A check for messages from `producers` producers.
    #[must_use]
    pub fn new(producers: usize) -> Self {
        Self {
            last: vec![None; producers],
            count: vec![0; producers],
            sum: vec![0; producers],
        }
    }

    /// Checks one received message.
    ///
    /// # Panics
    ///
    /// If the message comes from an unknown producer or is not after the
    /// last one this consumer got from that producer.
    #[inline]
    pub fn take<T: Payload>(&mut self, message: &T) {
        let (producer, seq) = (message.producer(), message.seq());
        let Some(last) = self.last.get_mut(producer) else {
            panic!("message from unknown producer {producer}");
        };
        if let Some(last) = *last {
            assert!(
                seq > last,
                "producer {producer}: got message {seq} after {last}"
            );
        }
        *last = Some(seq);
        self.count[producer] += 1;
        self.sum[producer] += seq as u64;
    }

    /// Checks that, over the consumers in `checks`, every producer's
    /// `per_producer` messages arrived exactly once.
    ///
    /// # Panics
    ///
    /// If one is missing or arrived twice.
    pub fn finish(checks: impl IntoIterator<Item = Self>, producers: usize, per_producer: usize) {
        let mut count = vec![0; producers];
        let mut sum = vec![0; producers];
        for check in checks {
            for producer in 0..producers {
                count[producer] += check.count[producer];
                sum[producer] += check.sum[producer];
            }
        }
        let expected_sum = (per_producer as u64) * (per_producer as u64).saturating_sub(1) / 2;
        for producer in 0..producers {
            assert_eq!(
                count[producer], per_producer,
                "producer {producer}: wrong number of messages"
            );
            assert_eq!(
                sum[producer], expected_sum,
                "producer {producer}: messages lost or duplicated"
            );
        }
    }
}

/// A real, reference-counted waker (an `Arc<impl Wake>`) that counts its
/// wakes, for polling futures by hand without a runtime.
#[derive(Debug, Default)]
pub struct CountingWaker {
    wakes: AtomicUsize,
}

impl CountingWaker {
    /// A waker around a fresh counter, and the counter.
    #[must_use]
    pub fn new() -> (Arc<Self>, Waker) {
        let counter = Arc::new(Self::default());
        let waker = Waker::from(Arc::clone(&counter));
        (counter, waker)
    }

    /// How many times the waker was woken.
    pub fn wakes(&self) -> usize {
        self.wakes.load(Ordering::Relaxed)
    }
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::Relaxed);
    }
}

/// Polls a future once and returns its output.
///
/// # Panics
///
/// If the future is not ready: on the ready path every operation must
/// complete at its first poll.
#[inline]
pub fn ready<F: Future>(future: Pin<&mut F>, cx: &mut Context<'_>) -> F::Output {
    match future.poll(cx) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("not ready on the ready path"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_carry_producer_and_sequence() {
        let word = u64::stamped(3, 77);
        assert_eq!((word.producer(), word.seq()), (3, 77));
        let kib = Kib::stamped(3, 77);
        assert_eq!((kib.producer(), kib.seq()), (3, 77));
        let line = Bytes::<64>::stamped(3, 77);
        assert_eq!((line.producer(), line.seq()), (3, 77));
    }

    #[test]
    #[should_panic(expected = "expected 1")]
    fn a_gap_fails_the_in_order_check() {
        let mut check = InOrder::new(1);
        check.take(&u64::stamped(0, 0));
        check.take(&u64::stamped(0, 2));
    }

    #[test]
    #[should_panic(expected = "lost or duplicated")]
    fn a_duplicate_fails_the_ascending_check() {
        let mut first = Ascending::new(1);
        let mut second = Ascending::new(1);
        first.take(&u64::stamped(0, 0));
        second.take(&u64::stamped(0, 0));
        Ascending::finish([first, second], 1, 2);
    }
}
