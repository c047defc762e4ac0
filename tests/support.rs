//! Shared helpers for the behavioural tests of asyncband.
//!
//! - [`Ledger`] and [`Tracked`]: a payload that records every drop, so a
//!   test can assert that each value was dropped exactly once, and when.
//! - [`within`]: runs a scenario on its own thread and fails the test if it
//!   does not finish in time, so a lost wake-up fails instead of hanging CI.
//! - [`WakeCounter`]: a waker that counts its wakes, for polling futures by
//!   hand and asserting who was woken.
//! - [`scale`]: message counts, multiplied by `ASYNCBAND_STRESS`.
//! - [`current_thread`] and [`multi_thread`]: tokio runtimes with timers.
//! - [`assert_delivered_once_in_producer_order`]: the exactly-once check of
//!   the many-producer, many-consumer scenarios;
//!   [`assert_received_exactly_the_accepted`] the same when only some sends
//!   were accepted (closes, timeouts, cancellations).
//! - [`XorShift`], [`test_seed`] and [`SeedReport`]: a seeded generator for
//!   randomized tests, whose seed is printed when the test fails.
//! - [`silence_planned_panics`]: keeps the panics a test causes on purpose
//!   (payloads whose `Drop` panics) out of the output.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

/// How long a scenario may run before [`within`] declares it hung. Override
/// with `ASYNCBAND_TEST_LIMIT_SECS`.
pub const DEFAULT_LIMIT: Duration = Duration::from_secs(60);

/// `n` times the factor in the `ASYNCBAND_STRESS` environment variable (1
/// when unset), for message counts and repetitions.
///
/// # Examples
///
/// ```
/// assert!(asyncband_tests::scale(10) >= 10);
/// ```
#[must_use]
pub fn scale(n: usize) -> usize {
    let factor = std::env::var("ASYNCBAND_STRESS")
        .ok()
        .and_then(|factor| factor.parse::<usize>().ok())
        .filter(|&factor| factor > 0)
        .unwrap_or(1);
    n * factor
}

fn limit() -> Duration {
    std::env::var("ASYNCBAND_TEST_LIMIT_SECS")
        .ok()
        .and_then(|secs| secs.parse().ok())
        .map_or(DEFAULT_LIMIT, Duration::from_secs)
}

/// Runs `scenario` on a fresh thread and returns its result; re-raises its
/// panic. If it does not finish within [`DEFAULT_LIMIT`] the test fails with
/// a message naming the likely cause (the stuck thread is left behind).
///
/// # Panics
///
/// If `scenario` panics (the panic is re-raised), if it does not finish in
/// time, or if its thread cannot be spawned.
///
/// # Examples
///
/// ```
/// assert_eq!(asyncband_tests::within(|| 1 + 1), 2);
/// ```
pub fn within<R: Send + 'static>(scenario: impl FnOnce() -> R + Send + 'static) -> R {
    let (done_tx, done_rx) = mpsc::channel();
    let runner = thread::Builder::new()
        .name("scenario".into())
        .spawn(move || {
            let result = scenario();
            let _ = done_tx.send(());
            result
        })
        .expect("spawn the scenario thread");
    let limit = limit();
    match done_rx.recv_timeout(limit) {
        // Finished, or panicked (the sender was dropped while unwinding):
        // either way `join` returns at once and re-raises a panic.
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => match runner.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => panic!(
            "the scenario did not finish within {limit:?}: a lost wake-up, a deadlock or a \
             livelock (set ASYNCBAND_TEST_LIMIT_SECS to wait longer)"
        ),
    }
}

/// Polls `condition` every millisecond until it holds; panics after
/// `limit`. For waiting on another thread's progress without a channel.
///
/// # Panics
///
/// If `condition` does not hold within `limit`.
pub fn wait_until(limit: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !condition() {
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting until {what}"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

/// A tokio runtime on the current thread, with timers.
///
/// # Panics
///
/// If the runtime cannot be built.
#[must_use]
pub fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("build a current-thread runtime")
}

/// A tokio runtime with `workers` worker threads, with timers.
///
/// # Panics
///
/// If the runtime cannot be built (for instance, `workers` is zero).
#[must_use]
pub fn multi_thread(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_time()
        .build()
        .expect("build a multi-thread runtime")
}

/// Records the drops of the [`Tracked`] values it made.
///
/// # Examples
///
/// ```
/// use asyncband_tests::Ledger;
///
/// let ledger = Ledger::new();
/// let value = ledger.track();
/// assert_eq!(ledger.live(), 1);
/// drop(value);
/// assert_eq!(ledger.live(), 0);
/// ledger.assert_each_dropped_once();
/// ```
pub struct Ledger {
    /// Drops so far of the value with each id; ids are indices.
    drops: Mutex<Vec<u32>>,
    dropped: AtomicUsize,
}

impl Ledger {
    /// An empty ledger.
    #[must_use]
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            drops: Mutex::new(Vec::new()),
            dropped: AtomicUsize::new(0),
        })
    }

    /// A new value, with the next id (0, 1, 2, …).
    ///
    /// # Panics
    ///
    /// If a thread panicked while holding the ledger's lock.
    pub fn track(self: &Arc<Self>) -> Tracked {
        let mut drops = self.drops.lock().unwrap();
        drops.push(0);
        Tracked {
            id: drops.len() - 1,
            ledger: Arc::clone(self),
        }
    }

    /// Values made so far.
    ///
    /// # Panics
    ///
    /// If a thread panicked while holding the ledger's lock.
    pub fn created(&self) -> usize {
        self.drops.lock().unwrap().len()
    }

    /// Drops so far (a value dropped twice counts twice).
    pub fn dropped(&self) -> usize {
        self.dropped.load(Ordering::SeqCst)
    }

    /// Values made and not dropped yet.
    ///
    /// # Panics
    ///
    /// If more drops than values were recorded (a value was dropped twice),
    /// or the ledger's lock is poisoned.
    pub fn live(&self) -> usize {
        let created = self.created();
        let dropped = self.dropped();
        assert!(
            dropped <= created,
            "{dropped} drops of {created} values: some were dropped twice"
        );
        created - dropped
    }

    /// How many times the value `id` was dropped.
    ///
    /// # Panics
    ///
    /// If no value `id` was made, or the ledger's lock is poisoned.
    pub fn drops_of(&self, id: usize) -> u32 {
        self.drops.lock().unwrap()[id]
    }

    /// Panics unless every value made was dropped exactly once, naming the
    /// ones that were not.
    ///
    /// # Panics
    ///
    /// As above, and if the ledger's lock is poisoned.
    pub fn assert_each_dropped_once(&self) {
        let drops = self.drops.lock().unwrap();
        let never: Vec<usize> = (0..drops.len()).filter(|&id| drops[id] == 0).collect();
        let twice: Vec<usize> = (0..drops.len()).filter(|&id| drops[id] > 1).collect();
        assert!(
            never.is_empty() && twice.is_empty(),
            "of {} values, never dropped: {never:?}; dropped more than once: {twice:?}",
            drops.len()
        );
    }
}

impl fmt::Debug for Ledger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ledger")
            .field("created", &self.created())
            .field("dropped", &self.dropped())
            .finish()
    }
}

/// A payload whose drop is recorded in its [`Ledger`]. Two values are equal
/// when they have the same id.
pub struct Tracked {
    id: usize,
    ledger: Arc<Ledger>,
}

impl Tracked {
    /// The id the ledger gave this value.
    #[must_use]
    pub fn id(&self) -> usize {
        self.id
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        // Never panic here: a double drop is recorded and reported by the
        // test, not turned into an abort while unwinding.
        if let Ok(mut drops) = self.ledger.drops.lock() {
            drops[self.id] += 1;
        }
        self.ledger.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

impl PartialEq for Tracked {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Tracked {}

impl fmt::Debug for Tracked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tracked({})", self.id)
    }
}

/// A waker that counts how many times it was woken.
///
/// # Examples
///
/// ```
/// use asyncband_tests::WakeCounter;
///
/// let counter = WakeCounter::new();
/// counter.waker().wake_by_ref();
/// assert_eq!(counter.wakes(), 1);
/// ```
#[derive(Debug, Default)]
pub struct WakeCounter {
    wakes: AtomicUsize,
}

impl WakeCounter {
    /// A counter at zero.
    #[must_use]
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A waker that counts into this counter.
    pub fn waker(self: &Arc<Self>) -> Waker {
        Waker::from(Arc::clone(self))
    }

    /// Wakes so far.
    #[must_use]
    pub fn wakes(&self) -> usize {
        self.wakes.load(Ordering::SeqCst)
    }

    /// Polls `future` once with a waker of this counter.
    pub fn poll<F: Future + ?Sized>(self: &Arc<Self>, future: Pin<&mut F>) -> Poll<F::Output> {
        let waker = self.waker();
        future.poll(&mut Context::from_waker(&waker))
    }
}

impl Wake for WakeCounter {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
    }
}

/// Checks the outcome of a many-producer, many-consumer run: `received[c]`
/// is what consumer `c` got, in order, as `(producer, sequence)` pairs, each
/// producer having sent sequences `0..per_producer`. Panics unless every
/// value was received exactly once and each consumer saw each producer's
/// values in increasing order.
///
/// # Panics
///
/// As above.
pub fn assert_delivered_once_in_producer_order(
    received: &[Vec<(usize, u64)>],
    producers: usize,
    per_producer: u64,
) {
    for (consumer, values) in received.iter().enumerate() {
        let mut last: HashMap<usize, u64> = HashMap::new();
        for &(producer, seq) in values {
            assert!(
                producer < producers,
                "consumer {consumer} got a value of producer {producer}"
            );
            if let Some(&previous) = last.get(&producer) {
                assert!(
                    seq > previous,
                    "consumer {consumer} got producer {producer}'s value {seq} after {previous}"
                );
            }
            last.insert(producer, seq);
        }
    }
    let per_producer = usize::try_from(per_producer).expect("per_producer fits in usize");
    let mut seen = vec![vec![0u32; per_producer]; producers];
    for &(producer, seq) in received.iter().flatten() {
        seen[producer][usize::try_from(seq).expect("seq fits in usize")] += 1;
    }
    for (producer, counts) in seen.iter().enumerate() {
        for (seq, &count) in counts.iter().enumerate() {
            assert_eq!(
                count, 1,
                "producer {producer}'s value {seq} was received {count} times"
            );
        }
    }
}

/// Checks the outcome of a run where only some sends were accepted:
/// `received[c]` is what consumer `c` got, in order, as `(producer,
/// sequence)` pairs, and `accepted[p]` the sequences producer `p`'s sends
/// that returned `Ok`, in the order it sent them. Panics unless every
/// accepted value was received exactly once, nothing else was received, and
/// each consumer saw each producer's values in the order they were sent.
///
/// # Panics
///
/// As above.
pub fn assert_received_exactly_the_accepted(received: &[Vec<(usize, u64)>], accepted: &[Vec<u64>]) {
    let producers = accepted.len();
    for (consumer, values) in received.iter().enumerate() {
        let mut last: HashMap<usize, u64> = HashMap::new();
        for &(producer, seq) in values {
            assert!(
                producer < producers,
                "consumer {consumer} got a value of producer {producer}"
            );
            if let Some(&previous) = last.get(&producer) {
                assert!(
                    seq > previous,
                    "consumer {consumer} got producer {producer}'s value {seq} after {previous}"
                );
            }
            last.insert(producer, seq);
        }
    }
    for (producer, sent) in accepted.iter().enumerate() {
        let mut got: Vec<u64> = received
            .iter()
            .flatten()
            .filter(|&&(p, _)| p == producer)
            .map(|&(_, seq)| seq)
            .collect();
        got.sort_unstable();
        if got != *sent {
            let missing: Vec<u64> = sent
                .iter()
                .copied()
                .filter(|seq| got.binary_search(seq).is_err())
                .collect();
            let mut extra = got.clone();
            extra.retain(|seq| sent.binary_search(seq).is_err());
            let mut twice = got.clone();
            twice.dedup();
            panic!(
                "producer {producer}: {} sends accepted, {} received; accepted but never \
                 received: {missing:?}; received but never accepted: {extra:?}; received \
                 more than once: {}",
                sent.len(),
                got.len(),
                got.len() - twice.len()
            );
        }
    }
}

/// A small seeded pseudo-random generator (xorshift64*), so a randomized
/// test can be replayed from its seed; or, made with
/// [`XorShift::scripted`], a source of choices read from bytes, so that a
/// fuzzer's input drives the same test.
///
/// # Examples
///
/// ```
/// use asyncband_tests::XorShift;
///
/// let (mut a, mut b) = (XorShift::new(7), XorShift::new(7));
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
///
/// let mut script = XorShift::scripted(&[7, 250]);
/// assert_eq!(script.below(5), 2); // 7 % 5
/// assert_eq!(script.below(300), 250);
/// assert_eq!(script.below(5), 0); // the bytes ran out
/// ```
#[derive(Debug, Clone)]
pub struct XorShift {
    state: u64,
    /// The bytes of a scripted generator and how many were read.
    script: Option<(Vec<u8>, usize)>,
}

impl XorShift {
    /// A generator started from `seed` (any value, zero included).
    #[must_use]
    pub fn new(seed: u64) -> Self {
        // splitmix64 of the seed: nearby seeds give unrelated streams, and
        // the state is never zero.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Self {
            state: (z ^ (z >> 31)) | 1,
            script: None,
        }
    }

    /// A generator whose choices are `bytes`: a choice among at most 256
    /// takes one byte, a larger one (and [`XorShift::next_u64`]) eight, and
    /// every choice is zero once the bytes run out, so each input is one
    /// finite, replayable run. [`XorShift::fork`] gives a seeded generator
    /// whose seed is read from the script.
    #[must_use]
    pub fn scripted(bytes: &[u8]) -> Self {
        Self {
            script: Some((bytes.to_vec(), 0)),
            ..Self::new(0)
        }
    }

    /// The next `count` bytes of the script as a little-endian number.
    fn read(bytes: &[u8], at: &mut usize, count: usize) -> u64 {
        let mut value = 0u64;
        for shift in 0..count {
            let byte = bytes.get(*at).copied().unwrap_or(0);
            *at += 1;
            value |= u64::from(byte) << (8 * shift);
        }
        value
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        if let Some((bytes, at)) = &mut self.script {
            return Self::read(bytes, at, 8);
        }
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n`.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        if let Some((bytes, at)) = &mut self.script {
            let width = if n <= 256 { 1 } else { 8 };
            return Self::read(bytes, at, width) % n;
        }
        self.next_u64() % n
    }

    /// An index in `0..n`.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the result is below `n`, a `usize`"
    )]
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high - low + 1)
    }

    /// True with probability `percent` / 100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A generator for another thread or task, derived from this one.
    #[must_use]
    pub fn fork(&mut self) -> Self {
        Self::new(self.next_u64())
    }
}

/// The seed of a randomized test: `ASYNCBAND_SEED` when set (to replay a
/// failure), else a fresh one from the clock (a fixed one under Miri, which
/// isolates the program from the clock).
#[must_use]
pub fn test_seed() -> u64 {
    std::env::var("ASYNCBAND_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or_else(|| {
            if cfg!(miri) {
                return 0x5eed_1e55;
            }
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            now.as_secs() ^ u64::from(now.subsec_nanos()).rotate_left(32)
        })
}

/// Prints its seed if it is dropped while the thread panics: keep one alive
/// for the length of a randomized test, so a failure says how to replay it.
#[derive(Debug)]
pub struct SeedReport {
    what: String,
    seed: u64,
}

impl SeedReport {
    /// A report of `seed` for the test (or sequence) `what`.
    pub fn new(what: impl Into<String>, seed: u64) -> Self {
        Self {
            what: what.into(),
            seed,
        }
    }
}

impl Drop for SeedReport {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!(
                "{} failed with seed {}: replay with ASYNCBAND_SEED={}",
                self.what, self.seed, self.seed
            );
        }
    }
}

/// The message of the panics tests cause on purpose; see
/// [`silence_planned_panics`].
pub const PLANNED_PANIC: &str = "planned panic in a payload's drop";

/// Installs (once per process) a panic hook that prints nothing for panics
/// whose message is [`PLANNED_PANIC`] and hands every other panic to the
/// hook that was there before, so tests that run in parallel keep their
/// messages.
pub fn silence_planned_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str));
            if message != Some(PLANNED_PANIC) {
                previous(info);
            }
        }));
    });
}
