//! Stress tests: every flavour under contention, closes, drops and
//! cancellations, checking that no message is lost, duplicated, reordered
//! within its producer or dropped twice.
//!
//! Short by default (a few seconds for the whole file in a debug build);
//! `ASYNCBAND_STRESS=N` multiplies every message count and round count by
//! `N` for long runs (`cargo x stress [N]`, see TESTING.md). Built with
//! `RUSTFLAGS="--cfg asyncband_small"` the unbounded channels use 3-slot
//! blocks, so block transitions and recycling happen on nearly every send.
//!
//! Each macro holds the tests of a group of flavours: `every_flavour!` for
//! all, `bounded!` and `unbounded!` by storage. The modules at the bottom
//! instantiate them for spsc, mpsc and mpmc, bounded at capacities 1, 2 and
//! 64 and unbounded. Inside a module `F<T>` is the flavour, `topology` its
//! module, `CAPACITY` its bound, `ROOM` how many values fit without
//! receiving, and `senders`/`receivers` split an endpoint into as many as
//! the flavour allows (`PRODUCERS`, `CONSUMERS`). Randomized tests print
//! their seed when they fail; `ASYNCBAND_SEED` replays it. Everything that
//! could hang runs under [`within`], so a lost wake-up fails the test.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

use asyncband::error::{RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError};
use asyncband_tests::{
    Ledger, PLANNED_PANIC, SeedReport, Tracked, WakeCounter, XorShift,
    assert_received_exactly_the_accepted, multi_thread, scale, silence_planned_panics, test_seed,
    within,
};
use futures::executor::block_on;

/// Values an unbounded channel is given at once: more than two full-size blocks (31 slots)
/// (dozens of 3-slot blocks under `asyncband_small`).
const UNBOUNDED_ROOM: usize = 70;
/// A timeout that must not elapse on a healthy machine.
const LONG: Duration = Duration::from_secs(10);
/// How long a woken thread may take to notice, far above any scheduling delay.
const WAKE_LIMIT: Duration = Duration::from_secs(1);
/// Time for another thread to reach its wait (not needed for correctness).
const SETTLE: Duration = Duration::from_millis(20);

/// A payload that knows who sent it and records its drop in a [`Ledger`].
struct Msg {
    producer: usize,
    seq: u64,
    _tracked: Tracked,
}

impl Msg {
    fn new(ledger: &Arc<Ledger>, producer: usize, seq: u64) -> Self {
        Self {
            producer,
            seq,
            _tracked: ledger.track(),
        }
    }

    fn key(&self) -> (usize, u64) {
        (self.producer, self.seq)
    }
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Msg({}, {})", self.producer, self.seq)
    }
}

/// A payload over 128 bytes (a "large" value to the core) that knows who
/// sent it; every word of it is derived from its key, so a value torn by a
/// racing write or read fails [`Wide::key`].
struct Wide {
    producer: usize,
    seq: u64,
    words: [u64; 18],
}

impl Wide {
    fn new(producer: usize, seq: u64) -> Self {
        let mut words = [0; 18];
        for (i, word) in (0..).zip(&mut words) {
            *word = (producer as u64) << 48 ^ seq << 8 ^ i;
        }
        Self {
            producer,
            seq,
            words,
        }
    }

    /// The key, after checking that the value arrived whole.
    fn key(&self) -> (usize, u64) {
        let whole = Self::new(self.producer, self.seq);
        assert!(
            self.words == whole.words,
            "value {}:{} torn",
            self.producer,
            self.seq
        );
        (self.producer, self.seq)
    }
}

/// A payload whose drop panics (with [`PLANNED_PANIC`]) when it is armed.
/// Its [`Tracked`] field is still dropped, and recorded, while unwinding.
struct Bomb {
    armed: bool,
    _tracked: Tracked,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        if std::mem::take(&mut self.armed) {
            std::panic::panic_any(PLANNED_PANIC);
        }
    }
}

/// How a cancellable operation of the storms is cut short.
#[derive(Debug, Clone, Copy)]
enum Cancel {
    /// `tokio::time::sleep` for this long.
    After(Duration),
    /// After the operation was polled this many times more.
    Yields(u64),
    /// Never: the operation is awaited to completion, so a lost wake-up
    /// hangs it (and the watchdog fails the test).
    Never,
}

impl Cancel {
    /// 1 µs to 1 ms timers half the time, a few polls or never otherwise.
    fn pick(rng: &mut XorShift) -> Self {
        match rng.below(10) {
            0..=4 => Self::After(Duration::from_micros(rng.between(1, 1_000))),
            5..=7 => Self::Yields(rng.below(4)),
            _ => Self::Never,
        }
    }

    /// A short pause of a task, so that the other side waits now and then
    /// (and its waits get cancelled): a few yields, sometimes a timer.
    async fn pause(rng: &mut XorShift) {
        if rng.percent(10) {
            tokio::time::sleep(Duration::from_micros(rng.between(1, 300))).await;
        } else {
            for _ in 0..rng.between(1, 8) {
                tokio::task::yield_now().await;
            }
        }
    }

    async fn wait(self) {
        match self {
            Self::After(duration) => tokio::time::sleep(duration).await,
            Self::Yields(n) => {
                for _ in 0..n {
                    tokio::task::yield_now().await;
                }
            }
            Self::Never => std::future::pending().await,
        }
    }
}

/// Polls `future` once with a waker that does nothing.
fn poll_once<F: Future + ?Sized>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// Panics unless everything received was accepted, at most once, in each
/// producer's order: the check when receivers may have dropped values.
/// Spawns a thread per receiver that takes values with `recv` until it
/// gives `None`, and returns what each took.
fn receive_on_threads<R: Send + 'static, T: Send + 'static>(
    receivers: impl IntoIterator<Item = R>,
    recv: fn(&mut R) -> Option<T>,
) -> Vec<thread::JoinHandle<Vec<T>>> {
    receivers
        .into_iter()
        .map(|mut rx| {
            thread::spawn(move || {
                let mut got = Vec::new();
                while let Some(value) = recv(&mut rx) {
                    got.push(value);
                }
                got
            })
        })
        .collect()
}

fn assert_received_only_accepted_values(received: &[Vec<(usize, u64)>], accepted: &[Vec<u64>]) {
    let mut got: Vec<Vec<u64>> = vec![Vec::new(); accepted.len()];
    for (consumer, values) in received.iter().enumerate() {
        let mut last = vec![None; accepted.len()];
        for &(producer, seq) in values {
            assert!(
                last[producer].is_none_or(|previous| previous < seq),
                "consumer {consumer} got producer {producer}'s {seq} after {:?}",
                last[producer]
            );
            last[producer] = Some(seq);
            got[producer].push(seq);
        }
    }
    for (producer, got) in got.iter_mut().enumerate() {
        got.sort_unstable();
        let len = got.len();
        got.dedup();
        assert_eq!(
            len,
            got.len(),
            "producer {producer}: a value was received twice"
        );
        for seq in got.iter() {
            assert!(
                accepted[producer].binary_search(seq).is_ok(),
                "producer {producer}'s {seq} was received but its send did not return Ok"
            );
        }
    }
}

macro_rules! every_flavour {
    () => {
        // ---- one operation through a random API ---------------------------

        /// Sends `value` from a thread through a random API, retrying while
        /// full or timed out; hands the value back if the channel is closed.
        fn send_any<T>(
            tx: &mut topology::Sender<F<T>>,
            value: T,
            rng: &mut XorShift,
        ) -> Result<(), T> {
            let mut value = value;
            match rng.below(4) {
                0 => tx.send_blocking(value).map_err(SendError::into_inner),
                // A few tries, then wait: spinning endpoints starve the
                // others on a small machine.
                1 => {
                    for _ in 0..8 {
                        match tx.try_send(value) {
                            Ok(()) => return Ok(()),
                            Err(TrySendError::Full(back)) => value = back,
                            Err(TrySendError::Disconnected(back)) => return Err(back),
                        }
                        thread::yield_now();
                    }
                    tx.send_blocking(value).map_err(SendError::into_inner)
                }
                2 => loop {
                    let timeout = Duration::from_micros(rng.between(1, 500));
                    match tx.send_timeout(value, timeout) {
                        Ok(()) => return Ok(()),
                        Err(SendTimeoutError::Timeout(back)) => value = back,
                        Err(SendTimeoutError::Disconnected(back)) => return Err(back),
                    }
                },
                _ => block_on(tx.send(value)).map_err(SendError::into_inner),
            }
        }

        /// Receives at least one value on a thread through a random API,
        /// appending to `got`; false once the channel is closed and empty.
        fn recv_any<T>(
            rx: &mut topology::Receiver<F<T>>,
            got: &mut Vec<T>,
            rng: &mut XorShift,
        ) -> bool {
            match rng.below(6) {
                0 => rx.recv_blocking().map(|value| got.push(value)).is_ok(),
                1 => {
                    for _ in 0..8 {
                        match rx.try_recv() {
                            Ok(value) => {
                                got.push(value);
                                return true;
                            }
                            Err(TryRecvError::Empty) => thread::yield_now(),
                            Err(TryRecvError::Disconnected) => return false,
                        }
                    }
                    rx.recv_blocking().map(|value| got.push(value)).is_ok()
                }
                2 => loop {
                    match rx.recv_timeout(Duration::from_micros(rng.between(1, 500))) {
                        Ok(value) => {
                            got.push(value);
                            return true;
                        }
                        Err(RecvTimeoutError::Timeout) => {}
                        Err(RecvTimeoutError::Disconnected) => return false,
                    }
                },
                3 => rx.recv_many_blocking(got, 1 + rng.index(8)) > 0,
                4 => {
                    for _ in 0..8 {
                        if rx.try_recv_many(got, 1 + rng.index(8)) > 0 {
                            return true;
                        }
                        thread::yield_now();
                    }
                    rx.recv_many_blocking(got, 8) > 0
                }
                _ => block_on(rx.recv()).map(|value| got.push(value)).is_ok(),
            }
        }

        /// Sends `value` from a task through a random API.
        async fn send_any_async<T: Send>(
            tx: &mut topology::Sender<F<T>>,
            value: T,
            rng: &mut XorShift,
        ) -> Result<(), T> {
            let mut value = value;
            match rng.below(3) {
                0 => tx.send(value).await.map_err(SendError::into_inner),
                1 => {
                    for _ in 0..4 {
                        match tx.try_send(value) {
                            Ok(()) => return Ok(()),
                            Err(TrySendError::Full(back)) => value = back,
                            Err(TrySendError::Disconnected(back)) => return Err(back),
                        }
                        tokio::task::yield_now().await;
                    }
                    tx.send(value).await.map_err(SendError::into_inner)
                }
                _ => {
                    let result = tx.send(value).await.map_err(SendError::into_inner);
                    tokio::task::yield_now().await;
                    result
                }
            }
        }

        /// Receives at least one value in a task through a random API.
        async fn recv_any_async<T: Send>(
            rx: &mut topology::Receiver<F<T>>,
            got: &mut Vec<T>,
            rng: &mut XorShift,
        ) -> bool {
            match rng.below(3) {
                0 => rx.recv().await.map(|value| got.push(value)).is_ok(),
                1 => rx.recv_many(got, 1 + rng.index(8)).await > 0,
                _ => {
                    for _ in 0..4 {
                        match rx.try_recv() {
                            Ok(value) => {
                                got.push(value);
                                return true;
                            }
                            Err(TryRecvError::Empty) => tokio::task::yield_now().await,
                            Err(TryRecvError::Disconnected) => return false,
                        }
                    }
                    rx.recv().await.map(|value| got.push(value)).is_ok()
                }
            }
        }

        /// Checks the capacity bound while values flow.
        fn assert_within_capacity<T>(rx: &topology::Receiver<F<T>>) {
            if let Some(cap) = CAPACITY {
                let len = rx.len();
                assert!(
                    len <= cap,
                    "{len} values queued in a channel of capacity {cap}"
                );
            }
        }

        // ---- exactly once, in producer order ------------------------------

        /// Producer threads send `make(producer, seq)` through random APIs
        /// to consumer threads; checks that the consumers received every
        /// key once, in producer order.
        fn threads_deliver<P: Send + 'static>(
            per_producer: u64,
            make: fn(usize, u64) -> P,
            key: fn(&P) -> (usize, u64),
        ) {
            let seed = test_seed();
            let _report = SeedReport::new(module_path!(), seed);
            let received = within(move || {
                let mut rng = XorShift::new(seed);
                let (tx, rx) = F::<P>::channel();
                let producers: Vec<_> = senders(tx)
                    .into_iter()
                    .enumerate()
                    .map(|(producer, mut tx)| {
                        let mut rng = rng.fork();
                        thread::spawn(move || {
                            for seq in 0..per_producer {
                                let value = make(producer, seq);
                                assert!(send_any(&mut tx, value, &mut rng).is_ok(), "closed");
                            }
                        })
                    })
                    .collect();
                let consumers: Vec<_> = receivers(rx)
                    .into_iter()
                    .map(|mut rx| {
                        let mut rng = rng.fork();
                        thread::spawn(move || {
                            let mut got = Vec::new();
                            while recv_any(&mut rx, &mut got, &mut rng) {
                                assert_within_capacity(&rx);
                            }
                            got.iter().map(key).collect::<Vec<_>>()
                        })
                    })
                    .collect();
                for producer in producers {
                    producer.join().unwrap();
                }
                consumers
                    .into_iter()
                    .map(|c| c.join().unwrap())
                    .collect::<Vec<_>>()
            });
            let accepted = vec![(0..per_producer).collect::<Vec<u64>>(); PRODUCERS];
            assert_received_exactly_the_accepted(&received, &accepted);
        }

        /// As [`threads_deliver`], with tasks on two tokio workers.
        fn tasks_deliver<P: Send + 'static>(
            per_producer: u64,
            make: fn(usize, u64) -> P,
            key: fn(&P) -> (usize, u64),
        ) {
            let seed = test_seed();
            let _report = SeedReport::new(module_path!(), seed);
            let received = within(move || {
                multi_thread(2).block_on(async move {
                    let mut rng = XorShift::new(seed);
                    let (tx, rx) = F::<P>::channel();
                    let producers: Vec<_> = senders(tx)
                        .into_iter()
                        .enumerate()
                        .map(|(producer, mut tx)| {
                            let mut rng = rng.fork();
                            tokio::spawn(async move {
                                for seq in 0..per_producer {
                                    let value = make(producer, seq);
                                    let sent = send_any_async(&mut tx, value, &mut rng).await;
                                    assert!(sent.is_ok(), "closed");
                                }
                            })
                        })
                        .collect();
                    let consumers: Vec<_> = receivers(rx)
                        .into_iter()
                        .map(|mut rx| {
                            let mut rng = rng.fork();
                            tokio::spawn(async move {
                                let mut got = Vec::new();
                                while recv_any_async(&mut rx, &mut got, &mut rng).await {
                                    assert_within_capacity(&rx);
                                }
                                got.iter().map(key).collect::<Vec<_>>()
                            })
                        })
                        .collect();
                    for producer in producers {
                        producer.await.unwrap();
                    }
                    let mut received = Vec::new();
                    for consumer in consumers {
                        received.push(consumer.await.unwrap());
                    }
                    received
                })
            });
            let accepted = vec![(0..per_producer).collect::<Vec<u64>>(); PRODUCERS];
            assert_received_exactly_the_accepted(&received, &accepted);
        }

        #[test]
        fn threads_deliver_every_value_once_in_producer_order() {
            threads_deliver(scale(1_500) as u64, |p, s| (p, s), |&key| key);
        }

        #[test]
        fn tasks_deliver_every_value_once_in_producer_order() {
            tasks_deliver(scale(1_500) as u64, |p, s| (p, s), |&key| key);
        }

        /// One sender and one receiver that keep moving, each leg of the
        /// stream on other threads: two tasks sharing one thread, two
        /// tasks on two workers, and a thread of their own each. A single
        /// endpoint's fence then goes plain and is asked to fence again on
        /// whichever thread it is; a lost wake-up hangs a leg.
        #[test]
        fn endpoints_moving_between_a_shared_thread_and_threads_of_their_own_lose_nothing() {
            type Ends = (
                topology::Sender<F<u64>>,
                topology::Receiver<F<u64>>,
                Vec<u64>,
            );

            /// One leg in two tasks of the runtime that polls it.
            async fn in_tasks(
                (mut tx, mut rx, mut got): Ends,
                values: std::ops::Range<u64>,
            ) -> Ends {
                let count = values.end - values.start;
                let producer = tokio::spawn(async move {
                    for value in values {
                        tx.send(value).await.unwrap();
                    }
                    tx
                });
                let consumer = tokio::spawn(async move {
                    for _ in 0..count {
                        got.push(rx.recv().await.unwrap());
                    }
                    (rx, got)
                });
                let tx = producer.await.unwrap();
                let (rx, got) = consumer.await.unwrap();
                (tx, rx, got)
            }

            /// One leg on two threads of their own.
            fn on_threads((mut tx, mut rx, mut got): Ends, values: std::ops::Range<u64>) -> Ends {
                let count = values.end - values.start;
                let producer = thread::spawn(move || {
                    for value in values {
                        tx.send_blocking(value).unwrap();
                    }
                    tx
                });
                let consumer = thread::spawn(move || {
                    for _ in 0..count {
                        got.push(rx.recv_blocking().unwrap());
                    }
                    (rx, got)
                });
                let tx = producer.join().unwrap();
                let (rx, got) = consumer.join().unwrap();
                (tx, rx, got)
            }

            const LEGS: u64 = 9;
            let per_leg = scale(2_000) as u64;
            let received = within(move || {
                let shared = asyncband_tests::current_thread();
                let workers = multi_thread(2);
                let (tx, rx) = F::<u64>::channel();
                let mut ends = (tx, rx, Vec::new());
                for leg in 0..LEGS {
                    let values = leg * per_leg..(leg + 1) * per_leg;
                    ends = match leg % 3 {
                        0 => shared.block_on(in_tasks(ends, values)),
                        1 => workers.block_on(in_tasks(ends, values)),
                        _ => on_threads(ends, values),
                    };
                }
                ends.2
            });
            assert_eq!(received, (0..LEGS * per_leg).collect::<Vec<_>>());
        }

        // Large values: with many producers a receiver sleeps on one that is
        // still being written (`PopError::Writing`); each must arrive whole,
        // once and in order.

        #[test]
        fn threads_deliver_large_values_whole_once_in_producer_order() {
            threads_deliver(scale(500) as u64, Wide::new, Wide::key);
        }

        #[test]
        fn tasks_deliver_large_values_whole_once_in_producer_order() {
            tasks_deliver(scale(500) as u64, Wide::new, Wide::key);
        }

        #[test]
        fn threads_and_tasks_mixed_on_one_channel_deliver_every_value_once() {
            let per_producer = scale(1_000) as u64;
            let seed = test_seed();
            let _report = SeedReport::new(module_path!(), seed);
            // Variant 0 puts the first producer on a thread and the first
            // consumer in a task, variant 1 the other way round; further
            // endpoints alternate.
            for variant in 0..2usize {
                let received = within(move || {
                    let mut rng = XorShift::new(seed ^ variant as u64);
                    let runtime = multi_thread(2);
                    let (tx, rx) = F::<(usize, u64)>::channel();
                    let mut threads = Vec::new();
                    let mut tasks = Vec::new();
                    for (producer, mut tx) in senders(tx).into_iter().enumerate() {
                        let mut rng = rng.fork();
                        if (producer + variant) % 2 == 0 {
                            threads.push(thread::spawn(move || {
                                for seq in 0..per_producer {
                                    send_any(&mut tx, (producer, seq), &mut rng).unwrap();
                                }
                                Vec::new()
                            }));
                        } else {
                            tasks.push(runtime.spawn(async move {
                                for seq in 0..per_producer {
                                    send_any_async(&mut tx, (producer, seq), &mut rng)
                                        .await
                                        .unwrap();
                                }
                                Vec::new()
                            }));
                        }
                    }
                    for (consumer, mut rx) in receivers(rx).into_iter().enumerate() {
                        let mut rng = rng.fork();
                        if (consumer + variant) % 2 == 1 {
                            threads.push(thread::spawn(move || {
                                let mut got = Vec::new();
                                while recv_any(&mut rx, &mut got, &mut rng) {}
                                got
                            }));
                        } else {
                            tasks.push(runtime.spawn(async move {
                                let mut got = Vec::new();
                                while recv_any_async(&mut rx, &mut got, &mut rng).await {}
                                got
                            }));
                        }
                    }
                    let mut received: Vec<Vec<(usize, u64)>> = runtime.block_on(async {
                        let mut received = Vec::new();
                        for task in tasks {
                            received.push(task.await.unwrap());
                        }
                        received
                    });
                    received.extend(threads.into_iter().map(|t| t.join().unwrap()));
                    received
                });
                let accepted = vec![(0..per_producer).collect::<Vec<u64>>(); PRODUCERS];
                assert_received_exactly_the_accepted(&received, &accepted);
            }
        }

        // ---- close and drop racing with sends -------------------------------

        #[test]
        #[allow(
            clippy::too_many_lines,
            reason = "one race scenario with its checks, best read top to bottom"
        )]
        fn every_send_that_returned_ok_is_received_when_close_races_with_sends() {
            let per_producer = 400u64;
            let rounds = scale(6);
            let seed = test_seed();
            let _report = SeedReport::new(module_path!(), seed);
            // A watchdog per round: at high scales the rounds add up.
            for round in 0..rounds {
                within(move || {
                    let mut rng = XorShift::new(seed.wrapping_add(round as u64));
                    let runtime = multi_thread(2);
                    let ledger = Ledger::new();
                    let (tx, rx) = F::<Msg>::channel();
                    // Even rounds close from the receiving side, odd rounds
                    // from the first producer, after a random number of
                    // values; the other endpoints keep going meanwhile.
                    let close_after = rng.below(per_producer);
                    let receiver_closes = round % 2 == 0;
                    let mut producers = Vec::new();
                    let mut tasks = Vec::new();
                    for (producer, mut tx) in senders(tx).into_iter().enumerate() {
                        let mut rng = rng.fork();
                        let ledger = Arc::clone(&ledger);
                        let closes = !receiver_closes && producer == 0;
                        if (producer + round) % 2 == 0 {
                            producers.push(thread::spawn(move || {
                                let mut accepted = Vec::new();
                                for seq in 0..per_producer {
                                    if closes && seq == close_after {
                                        tx.close();
                                    }
                                    match send_any(
                                        &mut tx,
                                        Msg::new(&ledger, producer, seq),
                                        &mut rng,
                                    ) {
                                        Ok(()) => accepted.push(seq),
                                        Err(back) => {
                                            assert_eq!(
                                                back.key(),
                                                (producer, seq),
                                                "the value handed back"
                                            );
                                            break;
                                        }
                                    }
                                }
                                (producer, accepted)
                            }));
                        } else {
                            tasks.push(runtime.spawn(async move {
                                let mut accepted = Vec::new();
                                for seq in 0..per_producer {
                                    if closes && seq == close_after {
                                        tx.close();
                                    }
                                    let msg = Msg::new(&ledger, producer, seq);
                                    match send_any_async(&mut tx, msg, &mut rng).await {
                                        Ok(()) => accepted.push(seq),
                                        Err(back) => {
                                            assert_eq!(
                                                back.key(),
                                                (producer, seq),
                                                "the value handed back"
                                            );
                                            break;
                                        }
                                    }
                                }
                                (producer, accepted)
                            }));
                        }
                    }
                    let consumers: Vec<_> = receivers(rx)
                        .into_iter()
                        .enumerate()
                        .map(|(consumer, mut rx)| {
                            let mut rng = rng.fork();
                            thread::spawn(move || {
                                let mut got = Vec::new();
                                loop {
                                    if receiver_closes
                                        && consumer == 0
                                        && got.len() as u64 >= close_after
                                    {
                                        rx.close();
                                    }
                                    if !recv_any(&mut rx, &mut got, &mut rng) {
                                        break;
                                    }
                                }
                                got.iter().map(Msg::key).collect::<Vec<_>>()
                            })
                        })
                        .collect();
                    let mut accepted = vec![Vec::new(); PRODUCERS];
                    for producer in producers {
                        let (p, seqs) = producer.join().unwrap();
                        accepted[p] = seqs;
                    }
                    runtime.block_on(async {
                        for task in tasks {
                            let (p, seqs) = task.await.unwrap();
                            accepted[p] = seqs;
                        }
                    });
                    let received: Vec<_> =
                        consumers.into_iter().map(|c| c.join().unwrap()).collect();
                    assert_received_exactly_the_accepted(&received, &accepted);
                    assert_eq!(
                        ledger.live(),
                        0,
                        "round {round}: values outlived the channel"
                    );
                    ledger.assert_each_dropped_once();
                })
            }
        }

        #[test]
        fn receivers_dropped_mid_stream_lose_nothing_and_drop_every_value_once() {
            let per_producer = 400u64;
            let rounds = scale(6);
            let seed = test_seed();
            let _report = SeedReport::new(module_path!(), seed);
            // A watchdog per round: at high scales the rounds add up.
            for round in 0..rounds {
                within(move || {
                    let mut rng = XorShift::new(seed.wrapping_add(round as u64));
                    let ledger = Ledger::new();
                    let (tx, rx) = F::<Msg>::channel();
                    // With several receivers, even rounds keep the last one
                    // receiving to the end: it must get everything the
                    // others did not. Otherwise every receiver drops out.
                    let survivor = CONSUMERS > 1 && round % 2 == 0;
                    // Without a survivor, producers offer more than the
                    // receivers' quotas add up to, so every receiver reaches
                    // its quota and the channel closes under the producers.
                    let offered = if survivor {
                        per_producer
                    } else {
                        4 * per_producer
                    };
                    let producers: Vec<_> = senders(tx)
                        .into_iter()
                        .enumerate()
                        .map(|(producer, mut tx)| {
                            let mut rng = rng.fork();
                            let ledger = Arc::clone(&ledger);
                            thread::spawn(move || {
                                let mut accepted = Vec::new();
                                for seq in 0..offered {
                                    match send_any(
                                        &mut tx,
                                        Msg::new(&ledger, producer, seq),
                                        &mut rng,
                                    ) {
                                        Ok(()) => accepted.push(seq),
                                        Err(back) => {
                                            assert_eq!(back.key(), (producer, seq));
                                            break;
                                        }
                                    }
                                }
                                // The sender comes back alive, so the test
                                // can check nothing waited for it to drop.
                                (accepted, tx)
                            })
                        })
                        .collect();
                    let consumers: Vec<_> = receivers(rx)
                        .into_iter()
                        .enumerate()
                        .map(|(consumer, mut rx)| {
                            let mut rng = rng.fork();
                            let keep = survivor && consumer == CONSUMERS - 1;
                            let quota =
                                usize::try_from(rng.below(per_producer * PRODUCERS as u64 / 2))
                                    .expect("quota fits in usize");
                            thread::spawn(move || {
                                let mut got = Vec::new();
                                while (keep || got.len() < quota)
                                    && recv_any(&mut rx, &mut got, &mut rng)
                                {
                                }
                                drop(rx);
                                got.iter().map(Msg::key).collect::<Vec<_>>()
                            })
                        })
                        .collect();
                    let mut accepted = Vec::new();
                    let mut alive_senders = Vec::new();
                    for producer in producers {
                        let (seqs, tx) = producer.join().unwrap();
                        accepted.push(seqs);
                        alive_senders.push(tx);
                    }
                    if survivor {
                        // The survivor receives until the senders are gone.
                        alive_senders.clear();
                    }
                    let received: Vec<_> =
                        consumers.into_iter().map(|c| c.join().unwrap()).collect();
                    if survivor {
                        // Nothing can be left: the survivor saw the close.
                        assert_received_exactly_the_accepted(&received, &accepted);
                    } else {
                        assert_received_only_accepted_values(&received, &accepted);
                        assert_eq!(
                            ledger.live(),
                            0,
                            "round {round}: values queued when the last receiver went were \
                             not dropped then"
                        );
                    }
                    drop(alive_senders);
                    ledger.assert_each_dropped_once();
                })
            }
        }

        // ---- cancellation storms ------------------------------------------

        #[test]
        fn a_cancellation_storm_on_send_recv_and_reserve_loses_nothing_and_no_wake_up() {
            let per_producer = scale(600) as u64;
            let seed = test_seed();
            let _report = SeedReport::new(module_path!(), seed);
            let ledger = Ledger::new();
            let ledger_in = Arc::clone(&ledger);
            let (received, accepted) = within(move || {
                let ledger = ledger_in;
                multi_thread(2).block_on(async move {
                    let mut rng = XorShift::new(seed);
                    let (tx, rx) = F::<Msg>::channel();
                    let producers: Vec<_> = senders(tx)
                        .into_iter()
                        .enumerate()
                        .map(|(producer, mut tx)| {
                            let mut rng = rng.fork();
                            let ledger = Arc::clone(&ledger);
                            tokio::spawn(async move {
                                let mut accepted = Vec::new();
                                for seq in 0..per_producer {
                                    if rng.percent(25) {
                                        Cancel::pause(&mut rng).await;
                                    }
                                    let msg = Msg::new(&ledger, producer, seq);
                                    let cancel = Cancel::pick(&mut rng);
                                    match cancellable_send(&mut tx, msg, cancel, &mut rng).await {
                                        Some(Ok(())) => accepted.push(seq),
                                        Some(Err(_)) => panic!("the channel closed under a sender"),
                                        None => {}
                                    }
                                }
                                accepted
                            })
                        })
                        .collect();
                    let consumers: Vec<_> = receivers(rx)
                        .into_iter()
                        .map(|mut rx| {
                            let mut rng = rng.fork();
                            tokio::spawn(async move {
                                let mut got: Vec<Msg> = Vec::new();
                                loop {
                                    if rng.percent(25) {
                                        Cancel::pause(&mut rng).await;
                                    }
                                    let cancel = Cancel::pick(&mut rng);
                                    let many = rng.percent(30);
                                    let open = tokio::select! {
                                        biased;
                                        open = async {
                                            if many {
                                                rx.recv_many(&mut got, 4).await > 0
                                            } else {
                                                rx.recv().await.map(|msg| got.push(msg)).is_ok()
                                            }
                                        } => open,
                                        () = cancel.wait() => true,
                                    };
                                    if !open {
                                        break;
                                    }
                                }
                                got.iter().map(Msg::key).collect::<Vec<_>>()
                            })
                        })
                        .collect();
                    let mut accepted = Vec::new();
                    for producer in producers {
                        accepted.push(producer.await.unwrap());
                    }
                    let mut received = Vec::new();
                    for consumer in consumers {
                        received.push(consumer.await.unwrap());
                    }
                    (received, accepted)
                })
            });
            assert_received_exactly_the_accepted(&received, &accepted);
            ledger.assert_each_dropped_once();
        }

        #[test]
        fn a_storm_of_timeouts_on_threads_loses_nothing() {
            let per_producer = scale(250) as u64;
            let seed = test_seed();
            let _report = SeedReport::new(module_path!(), seed);
            let ledger = Ledger::new();
            let ledger_in = Arc::clone(&ledger);
            let (received, accepted) = within(move || {
                let ledger = ledger_in;
                let mut rng = XorShift::new(seed);
                let (tx, rx) = F::<Msg>::channel();
                let producers: Vec<_> = senders(tx)
                    .into_iter()
                    .enumerate()
                    .map(|(producer, mut tx)| {
                        let mut rng = rng.fork();
                        let ledger = Arc::clone(&ledger);
                        thread::spawn(move || {
                            let mut accepted = Vec::new();
                            for seq in 0..per_producer {
                                let msg = Msg::new(&ledger, producer, seq);
                                let timeout = Duration::from_micros(rng.between(1, 1_000));
                                match timed_send(&mut tx, msg, timeout, &mut rng) {
                                    Ok(()) => accepted.push(seq),
                                    Err(SendTimeoutError::Timeout(back)) => {
                                        assert_eq!(
                                            back.key(),
                                            (producer, seq),
                                            "the value timed out"
                                        );
                                    }
                                    Err(SendTimeoutError::Disconnected(_)) => {
                                        panic!("the channel closed under a sender")
                                    }
                                }
                            }
                            accepted
                        })
                    })
                    .collect();
                let consumers: Vec<_> = receivers(rx)
                    .into_iter()
                    .map(|mut rx| {
                        let mut rng = rng.fork();
                        thread::spawn(move || {
                            let mut got = Vec::new();
                            loop {
                                let timeout = Duration::from_micros(rng.between(1, 1_000));
                                match rx.recv_timeout(timeout) {
                                    Ok(msg) => got.push(msg.key()),
                                    Err(RecvTimeoutError::Timeout) => {}
                                    Err(RecvTimeoutError::Disconnected) => break,
                                }
                            }
                            got
                        })
                    })
                    .collect();
                let accepted: Vec<_> = producers.into_iter().map(|p| p.join().unwrap()).collect();
                let received: Vec<_> = consumers.into_iter().map(|c| c.join().unwrap()).collect();
                (received, accepted)
            });
            assert_received_exactly_the_accepted(&received, &accepted);
            ledger.assert_each_dropped_once();
        }

        // ---- payloads whose drop panics ---------------------------------------

        #[test]
        fn dropping_the_last_receiver_with_a_panicking_value_queued_drops_every_other_once() {
            silence_planned_panics();
            for armed in [0, ROOM / 2, ROOM - 1] {
                let ledger = Ledger::new();
                let (mut tx, rx) = F::<Bomb>::channel();
                for k in 0..ROOM {
                    let bomb = Bomb {
                        armed: k == armed,
                        _tracked: ledger.track(),
                    };
                    assert!(tx.try_send(bomb).is_ok());
                }
                let waker = WakeCounter::new();
                let mut closed = Box::pin(tx.closed());
                assert!(waker.poll(closed.as_mut()).is_pending());
                assert!(waker.poll(closed.as_mut()).is_pending());
                let before = waker.wakes();
                // Other receivers going first keep the values queued.
                let mut others = receivers(rx);
                let last = others.pop().unwrap();
                drop(others);
                assert_eq!(
                    ledger.live(),
                    ROOM,
                    "values dropped while a receiver remains"
                );
                let outcome = catch_unwind(AssertUnwindSafe(move || drop(last)));
                assert!(
                    outcome.is_err(),
                    "the panic of the value's drop reaches the caller"
                );
                assert_eq!(
                    ledger.live(),
                    0,
                    "value {armed} panicked: the others must still go"
                );
                ledger.assert_each_dropped_once();
                // Regression: a panic in a queued value's drop used to unwind
                // out of `storage.drain()` in `Chan::drop_receiver` past
                // `wake_all`, so `closed()` futures were never woken.
                assert!(waker.wakes() > before, "`closed()` was not woken");
                assert!(waker.poll(closed.as_mut()).is_ready());
                drop(closed);
                assert!(tx.is_closed());
                let back = tx.try_send(Bomb {
                    armed: false,
                    _tracked: ledger.track(),
                });
                assert!(matches!(back, Err(TrySendError::Disconnected(_))));
                drop(back);
                drop(tx);
                ledger.assert_each_dropped_once();
            }
        }

        #[test]
        fn dropping_the_last_receiver_with_two_panicking_values_queued_drops_every_other_once() {
            silence_planned_panics();
            // A second panic in one drain used to abort the process: the
            // rest were dropped while the first one unwound.
            let ledger = Ledger::new();
            let (mut tx, rx) = F::<Bomb>::channel();
            for k in 0..ROOM {
                let bomb = Bomb {
                    armed: k == 0 || k == ROOM - 1,
                    _tracked: ledger.track(),
                };
                assert!(tx.try_send(bomb).is_ok());
            }
            let mut all = receivers(rx);
            let last = all.pop().unwrap();
            drop(all);
            let outcome = catch_unwind(AssertUnwindSafe(move || drop(last)));
            assert!(outcome.is_err(), "the first panic reaches the caller");
            ledger.assert_each_dropped_once();
            assert!(tx.is_closed());
            drop(tx);
        }

        #[test]
        fn values_whose_drop_panics_leave_the_channel_working_for_the_rest() {
            silence_planned_panics();
            // Receiving and dropping a panicking value is the user's panic;
            // the channel must carry on for everything sent after it.
            within(|| {
                let ledger = Ledger::new();
                let (tx, rx) = F::<Bomb>::channel();
                let n = scale(200);
                let ledger_in = Arc::clone(&ledger);
                let mut tx = senders(tx).pop().unwrap();
                let producer = thread::spawn(move || {
                    for k in 0..n {
                        let bomb = Bomb {
                            armed: k % 7 == 3,
                            _tracked: ledger_in.track(),
                        };
                        assert!(tx.send_blocking(bomb).is_ok());
                    }
                });
                let mut rx = receivers(rx).pop().unwrap();
                let mut panics = 0;
                for _ in 0..n {
                    let bomb = rx.recv_blocking().unwrap();
                    if catch_unwind(AssertUnwindSafe(move || drop(bomb))).is_err() {
                        panics += 1;
                    }
                }
                producer.join().unwrap();
                assert_eq!(panics, (0..n).filter(|k| k % 7 == 3).count());
                assert!(rx.try_recv().is_err());
                drop(rx);
                ledger.assert_each_dropped_once();
            })
        }

        // ---- forgotten futures ----------------------------------------------

        /// Registers a `recv` future on the first receiver and forgets it
        /// (its node stays registered, and allocated, forever), then streams
        /// `per_producer` values from every sender to every receiver on
        /// threads. With `park_consumers_first` the consumers are given time
        /// to spin out and park before the first send. Checks that exactly
        /// the sent values arrive, each producer's in order.
        fn stream_past_a_forgotten_recv(per_producer: u64, park_consumers_first: bool) {
            let received = within(move || {
                let (tx, rx) = F::<(usize, u64)>::channel();
                let mut receivers = receivers(rx);
                {
                    let mut future = Box::pin(receivers[0].recv());
                    assert!(poll_once(future.as_mut()).is_pending());
                    std::mem::forget(future);
                }
                let spawn_producers = move || -> Vec<_> {
                    senders(tx)
                        .into_iter()
                        .enumerate()
                        .map(|(producer, mut tx)| {
                            thread::spawn(move || {
                                for seq in 0..per_producer {
                                    tx.send_blocking((producer, seq)).unwrap();
                                }
                            })
                        })
                        .collect()
                };
                let spawn_consumers = move || -> Vec<_> {
                    receivers
                        .into_iter()
                        .map(|mut rx| {
                            thread::spawn(move || {
                                let mut got = Vec::new();
                                while let Ok(value) = rx.recv_blocking() {
                                    got.push(value);
                                }
                                got
                            })
                        })
                        .collect()
                };
                let (producers, consumers) = if park_consumers_first {
                    let consumers = spawn_consumers();
                    thread::sleep(Duration::from_millis(50));
                    (spawn_producers(), consumers)
                } else {
                    (spawn_producers(), spawn_consumers())
                };
                for producer in producers {
                    producer.join().unwrap();
                }
                consumers
                    .into_iter()
                    .map(|c| c.join().unwrap())
                    .collect::<Vec<_>>()
            });
            let accepted = vec![(0..per_producer).collect::<Vec<u64>>(); PRODUCERS];
            assert_received_exactly_the_accepted(&received, &accepted);
        }

        #[test]
        fn a_forgotten_waiting_recv_future_does_not_stop_the_other_receives() {
            stream_past_a_forgotten_recv(scale(500) as u64, false);
        }

        /// The consumers are parked before anything is sent, so the first
        /// notification goes to the forgotten future and is lost; at
        /// capacity 1 every producer then finds the channel full. A sender
        /// that starts to wait wakes a waiting receiver, so the stream goes
        /// on instead of stalling with a value queued and everyone asleep.
        #[test]
        fn a_notification_absorbed_by_a_forgotten_recv_future_does_not_strand_parked_receivers() {
            stream_past_a_forgotten_recv(scale(200) as u64, true);
        }
    };
}

macro_rules! bounded {
    () => {
        const ROOM: usize = CAP;
        const CAPACITY: Option<usize> = Some(CAP);

        /// A send that `cancel` may cut short, through `send`, `reserve`
        /// or `reserve_many`: `None` when it was cancelled (the value is
        /// dropped then), otherwise what the send returned.
        async fn cancellable_send<T: Send>(
            tx: &mut topology::Sender<F<T>>,
            value: T,
            cancel: Cancel,
            rng: &mut XorShift,
        ) -> Option<Result<(), T>> {
            match rng.below(3) {
                0 => tokio::select! {
                    biased;
                    result = tx.send(value) => Some(result.map_err(SendError::into_inner)),
                    () = cancel.wait() => None,
                },
                1 => tokio::select! {
                    biased;
                    permit = tx.reserve() => Some(match permit {
                        Ok(permit) => permit.send(value).map_err(SendError::into_inner),
                        Err(SendError(())) => Err(value),
                    }),
                    () = cancel.wait() => None,
                },
                _ => {
                    let n = 1 + rng.index(CAP);
                    tokio::select! {
                        biased;
                        permits = tx.reserve_many(n) => Some(match permits {
                            // The unused slots go back when the batch drops.
                            Ok(mut permits) => permits
                                .next()
                                .expect("n >= 1 permits")
                                .send(value)
                                .map_err(SendError::into_inner),
                            Err(SendError(())) => Err(value),
                        }),
                        () = cancel.wait() => None,
                    }
                }
            }
        }

        /// A send from a thread that gives up after `timeout`, through
        /// `send_timeout` or `reserve_timeout`.
        fn timed_send<T>(
            tx: &mut topology::Sender<F<T>>,
            value: T,
            timeout: Duration,
            rng: &mut XorShift,
        ) -> Result<(), SendTimeoutError<T>> {
            if rng.percent(50) {
                return tx.send_timeout(value, timeout);
            }
            match tx.reserve_timeout(timeout) {
                Ok(permit) => permit
                    .send(value)
                    .map_err(|SendError(value)| SendTimeoutError::Disconnected(value)),
                Err(SendTimeoutError::Timeout(())) => Err(SendTimeoutError::Timeout(value)),
                Err(SendTimeoutError::Disconnected(())) => {
                    Err(SendTimeoutError::Disconnected(value))
                }
            }
        }

        /// Fills a drained channel with `try_send` and counts how many fit.
        fn room_left(
            tx: &mut topology::Sender<F<u64>>,
            rx: &mut topology::Receiver<F<u64>>,
        ) -> usize {
            while rx.try_recv().is_ok() {}
            let mut fitted = 0;
            while tx.try_send(0).is_ok() {
                fitted += 1;
                assert!(fitted <= CAP, "more than CAP values fitted");
            }
            while rx.try_recv().is_ok() {}
            fitted
        }

        #[test]
        fn a_sender_waiting_when_the_last_receiver_drops_a_panicking_value_is_woken() {
            silence_planned_panics();
            within(|| {
                let ledger = Ledger::new();
                let (tx, rx) = F::<Bomb>::channel();
                let mut tx = senders(tx).pop().unwrap();
                let ledger_in = Arc::clone(&ledger);
                let waiter = thread::spawn(move || {
                    for k in 0..CAP {
                        let bomb = Bomb {
                            armed: k == 0,
                            _tracked: ledger_in.track(),
                        };
                        assert!(tx.try_send(bomb).is_ok());
                    }
                    let last = Bomb {
                        armed: false,
                        _tracked: ledger_in.track(),
                    };
                    // Full: this waits until the receiver goes.
                    let start = Instant::now();
                    let result = tx.send_timeout(last, WAKE_LIMIT);
                    matches!(result, Err(SendTimeoutError::Disconnected(_)))
                        && start.elapsed() < WAKE_LIMIT
                });
                thread::sleep(SETTLE);
                let last = receivers(rx).pop().unwrap();
                assert!(catch_unwind(AssertUnwindSafe(move || drop(last))).is_err());
                // Regression: a panic in a queued value's drop used to unwind
                // out of `drain` past `wake_all`, so the waiting sender only
                // found out when its own timeout expired.
                assert!(
                    waiter.join().unwrap(),
                    "a sender waiting on a full channel must wake with Disconnected when the \
                     last receiver goes, even if a queued value's drop panicked"
                );
                ledger.assert_each_dropped_once();
            })
        }

        #[test]
        fn a_send_future_waiting_when_the_last_receiver_drops_a_panicking_value_is_woken() {
            silence_planned_panics();
            let ledger = Ledger::new();
            let (mut tx, rx) = F::<Bomb>::channel();
            for k in 0..CAP {
                let bomb = Bomb {
                    armed: k == CAP - 1,
                    _tracked: ledger.track(),
                };
                assert!(tx.try_send(bomb).is_ok());
            }
            let waker = WakeCounter::new();
            let mut send = Box::pin(tx.send(Bomb {
                armed: false,
                _tracked: ledger.track(),
            }));
            assert!(waker.poll(send.as_mut()).is_pending());
            // A second poll, so a spurious wake of the first (a single
            // sender's cell may ask for one) does not count.
            assert!(waker.poll(send.as_mut()).is_pending());
            let before = waker.wakes();
            assert!(catch_unwind(AssertUnwindSafe(move || drop(rx))).is_err());
            // Regression: `wake_all` used to be skipped, see above.
            assert!(
                waker.wakes() > before,
                "the waiting send was not woken when the last receiver went"
            );
            assert!(matches!(waker.poll(send.as_mut()), Poll::Ready(Err(_))));
            drop(send);
            ledger.assert_each_dropped_once();
        }

        #[test]
        fn permits_of_one_batch_sent_from_several_threads_arrive_exactly_once() {
            let rounds = scale(100) as u64;
            let received = within(move || {
                let (mut tx, mut rx) = F::<(usize, u64)>::channel();
                let consumer = thread::spawn(move || {
                    let mut got = Vec::new();
                    while let Ok(value) = rx.recv_blocking() {
                        got.push(value);
                    }
                    got
                });
                for round in 0..rounds {
                    // Up to four threads, each sending a share of the batch.
                    let mut shares: Vec<Vec<_>> = (0..CAP.min(4)).map(|_| Vec::new()).collect();
                    let permits = block_on(tx.reserve_many(CAP)).unwrap();
                    for (k, permit) in permits.enumerate() {
                        shares[k % 4.min(CAP)].push((k, permit));
                    }
                    thread::scope(|scope| {
                        for share in shares {
                            scope.spawn(move || {
                                for (k, permit) in share {
                                    permit.send((k, round)).unwrap();
                                }
                            });
                        }
                    });
                }
                drop(tx);
                consumer.join().unwrap()
            });
            let accepted = vec![(0..rounds).collect::<Vec<u64>>(); CAP];
            assert_received_exactly_the_accepted(&[received], &accepted);
        }

        #[test]
        fn forgotten_permits_leak_exactly_their_slots_under_load() {
            let per_producer = scale(500) as u64;
            within(move || {
                let (mut tx, mut rx) = F::<u64>::channel();
                // Two slots, or the only one at CAP 1.
                let leaked = if CAP == 1 { 1 } else { (CAP - 1).min(2) };
                for _ in 0..leaked {
                    std::mem::forget(tx.try_reserve().unwrap());
                }
                assert_eq!(room_left(&mut tx, &mut rx), CAP - leaked);
                if leaked < CAP {
                    let (tx, rx) = (senders(tx), receivers(rx));
                    let consumers: Vec<_> = rx
                        .into_iter()
                        .map(|mut rx| {
                            thread::spawn(move || {
                                let mut n = 0u64;
                                while rx.recv_blocking().is_ok() {
                                    assert_within_capacity(&rx);
                                    n += 1;
                                }
                                n
                            })
                        })
                        .collect();
                    let producers: Vec<_> = tx
                        .into_iter()
                        .map(|mut tx| {
                            thread::spawn(move || {
                                for i in 0..per_producer {
                                    tx.send_blocking(i).unwrap();
                                }
                            })
                        })
                        .collect();
                    for producer in producers {
                        producer.join().unwrap();
                    }
                    let n: u64 = consumers.into_iter().map(|c| c.join().unwrap()).sum();
                    assert_eq!(n, per_producer * PRODUCERS as u64);
                } else {
                    // CAP 1: the only slot is gone. Nothing fits, and a
                    // waiting sender still learns when the receiver goes.
                    assert_eq!(tx.try_send(1), Err(TrySendError::Full(1)));
                    let waiter = thread::spawn(move || tx.send_timeout(2, LONG));
                    thread::sleep(SETTLE);
                    drop(rx);
                    assert_eq!(
                        waiter.join().unwrap(),
                        Err(SendTimeoutError::Disconnected(2))
                    );
                }
            })
        }

        #[test]
        fn forgotten_permits_leak_exactly_one_slot_each_on_a_single_thread() {
            let (mut tx, mut rx) = F::<u64>::channel();
            for leaked in 1..=CAP {
                std::mem::forget(tx.try_reserve().unwrap());
                assert!(rx.is_empty());
                assert_eq!(room_left(&mut tx, &mut rx), CAP - leaked);
            }
            assert!(tx.is_full() && rx.is_full());
            assert_eq!(tx.try_reserve().unwrap_err(), TrySendError::Full(()));
            drop(rx);
            assert_eq!(tx.try_send(1), Err(TrySendError::Disconnected(1)));
        }

        #[test]
        fn a_forgotten_waiting_send_future_costs_at_most_its_own_slot() {
            forgotten_waiting_sender_costs_at_most_one_slot(false);
        }

        #[test]
        fn a_forgotten_waiting_reserve_future_costs_at_most_its_own_slot() {
            forgotten_waiting_sender_costs_at_most_one_slot(true);
        }

        /// Registers a send (or reservation) on a full channel, forgets its
        /// future, and checks that the others still exchange everything
        /// with at most one slot lost.
        fn forgotten_waiting_sender_costs_at_most_one_slot(reserve: bool) {
            let per_producer = scale(500) as u64;
            within(move || {
                let (mut tx, mut rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                if reserve {
                    let mut future = Box::pin(tx.reserve());
                    assert!(poll_once(future.as_mut()).is_pending());
                    std::mem::forget(future);
                } else {
                    let mut future = Box::pin(tx.send(u64::MAX));
                    assert!(poll_once(future.as_mut()).is_pending());
                    std::mem::forget(future);
                }
                // Make room: the first slot freed may go to the forgotten
                // waiter, which will never use it.
                for i in 0..CAP as u64 {
                    assert_eq!(rx.try_recv(), Ok(i));
                }
                let room = room_left(&mut tx, &mut rx);
                assert!(
                    room + 1 >= CAP,
                    "a forgotten waiter cost {} slots of {CAP}",
                    CAP - room
                );
                if room == 0 {
                    return; // CAP 1 and the slot went to the forgotten one.
                }
                let (tx, rx) = (senders(tx), receivers(rx));
                let consumers = receive_on_threads(rx, |rx| rx.recv_blocking().ok());
                let producers: Vec<_> = tx
                    .into_iter()
                    .map(|mut tx| {
                        thread::spawn(move || {
                            for i in 0..per_producer {
                                tx.send_blocking(i).unwrap();
                            }
                        })
                    })
                    .collect();
                for producer in producers {
                    producer.join().unwrap();
                }
                let mut got: Vec<u64> = consumers
                    .into_iter()
                    .flat_map(|c| c.join().unwrap())
                    .collect();
                assert!(
                    !got.contains(&u64::MAX),
                    "the forgotten send's value arrived"
                );
                got.sort_unstable();
                let mut expected: Vec<u64> =
                    (0..per_producer).flat_map(|i| [i; PRODUCERS]).collect();
                expected.sort_unstable();
                assert_eq!(got, expected);
            })
        }
    };
}

macro_rules! unbounded {
    () => {
        const ROOM: usize = UNBOUNDED_ROOM;
        const CAPACITY: Option<usize> = None;

        /// An unbounded send is ready at once; `cancel` can only lose to it.
        async fn cancellable_send<T: Send>(
            tx: &mut topology::Sender<F<T>>,
            value: T,
            cancel: Cancel,
            _rng: &mut XorShift,
        ) -> Option<Result<(), T>> {
            tokio::select! {
                biased;
                result = tx.send(value) => Some(result.map_err(SendError::into_inner)),
                () = cancel.wait() => None,
            }
        }

        /// `send_timeout` (which never times out when unbounded).
        fn timed_send<T>(
            tx: &mut topology::Sender<F<T>>,
            value: T,
            timeout: Duration,
            _rng: &mut XorShift,
        ) -> Result<(), SendTimeoutError<T>> {
            tx.send_timeout(value, timeout)
        }
    };
}

macro_rules! one_sender {
    () => {
        const PRODUCERS: usize = 1;

        /// The only sender, as a list.
        fn senders<T>(tx: topology::Sender<F<T>>) -> Vec<topology::Sender<F<T>>> {
            vec![tx]
        }
    };
}

macro_rules! many_senders {
    () => {
        const PRODUCERS: usize = 3;

        /// `PRODUCERS` senders of one channel.
        fn senders<T>(tx: topology::Sender<F<T>>) -> Vec<topology::Sender<F<T>>> {
            let mut all: Vec<_> = (1..PRODUCERS).map(|_| tx.clone()).collect();
            all.push(tx);
            all
        }
    };
}

macro_rules! one_receiver {
    () => {
        const CONSUMERS: usize = 1;

        /// The only receiver, as a list.
        fn receivers<T>(rx: topology::Receiver<F<T>>) -> Vec<topology::Receiver<F<T>>> {
            vec![rx]
        }
    };
}

macro_rules! many_receivers {
    () => {
        const CONSUMERS: usize = 3;

        /// `CONSUMERS` receivers of one channel.
        fn receivers<T>(rx: topology::Receiver<F<T>>) -> Vec<topology::Receiver<F<T>>> {
            let mut all: Vec<_> = (1..CONSUMERS).map(|_| rx.clone()).collect();
            all.push(rx);
            all
        }
    };
}

macro_rules! flavour {
    ($name:ident, $topology:ident, bounded = $cap:literal, $senders:ident, $receivers:ident) => {
        #[allow(unused_mut)]
        mod $name {
            use super::*;
            use asyncband::$topology as topology;
            const CAP: usize = $cap;
            type F<T> = topology::Bounded<T, CAP>;
            $senders!();
            $receivers!();
            every_flavour!();
            bounded!();
        }
    };
    ($name:ident, $topology:ident, unbounded, $senders:ident, $receivers:ident) => {
        #[allow(unused_mut)]
        mod $name {
            use super::*;
            use asyncband::$topology as topology;
            type F<T> = topology::Unbounded<T>;
            $senders!();
            $receivers!();
            every_flavour!();
            unbounded!();
        }
    };
}

flavour!(spsc_bounded_1, spsc, bounded = 1, one_sender, one_receiver);
flavour!(spsc_bounded_2, spsc, bounded = 2, one_sender, one_receiver);
flavour!(
    spsc_bounded_64,
    spsc,
    bounded = 64,
    one_sender,
    one_receiver
);
flavour!(spsc_unbounded, spsc, unbounded, one_sender, one_receiver);
flavour!(
    mpsc_bounded_1,
    mpsc,
    bounded = 1,
    many_senders,
    one_receiver
);
flavour!(
    mpsc_bounded_2,
    mpsc,
    bounded = 2,
    many_senders,
    one_receiver
);
flavour!(
    mpsc_bounded_64,
    mpsc,
    bounded = 64,
    many_senders,
    one_receiver
);
flavour!(mpsc_unbounded, mpsc, unbounded, many_senders, one_receiver);
flavour!(
    mpmc_bounded_1,
    mpmc,
    bounded = 1,
    many_senders,
    many_receivers
);
flavour!(
    mpmc_bounded_2,
    mpmc,
    bounded = 2,
    many_senders,
    many_receivers
);
flavour!(
    mpmc_bounded_64,
    mpmc,
    bounded = 64,
    many_senders,
    many_receivers
);
flavour!(
    mpmc_unbounded,
    mpmc,
    unbounded,
    many_senders,
    many_receivers
);

/// The busy-waiting policies (`wait = spin`, `wait = yield`) with more
/// threads than cores: four producers and two consumers in blocking calls
/// stream through a bounded and an unbounded `mpmc` channel; every value
/// arrives once and in its producer's order, and a consumer blocked on an
/// empty channel sees the close when the producers are gone.
mod busy_policies {
    use super::*;
    use asyncband::arity::Many;
    use asyncband::mpmc;
    use asyncband::wait::{Spin, Yield};

    const PRODUCERS: usize = 4;
    const CONSUMERS: usize = 2;

    fn stream<F>((tx, rx): (mpmc::Sender<F>, mpmc::Receiver<F>))
    where
        F: asyncband::AnyFlavour<Item = (usize, u64), Senders = Many, Receivers = Many> + 'static,
    {
        let per_producer = scale(2_000) as u64;
        let accepted: Vec<Vec<u64>> = (0..PRODUCERS)
            .map(|_| (0..per_producer).collect())
            .collect();
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let tx = tx.clone();
                thread::spawn(move || {
                    for seq in 0..per_producer {
                        tx.send_blocking((p, seq)).expect("the consumers are there");
                    }
                })
            })
            .collect();
        drop(tx);
        let mut receivers: Vec<_> = (1..CONSUMERS).map(|_| rx.clone()).collect();
        receivers.push(rx);
        let consumers = receive_on_threads(receivers, |rx| rx.recv_blocking().ok());
        for producer in producers {
            producer.join().expect("a producer panicked");
        }
        let received: Vec<_> = consumers
            .into_iter()
            .map(|consumer| consumer.join().expect("a consumer panicked"))
            .collect();
        assert_received_exactly_the_accepted(&received, &accepted);
    }

    #[test]
    fn spin_channels_stream_with_more_threads_than_cores() {
        within(|| {
            stream(mpmc::Bounded::<(usize, u64), 4, { usize::MAX }, Spin>::channel());
            stream(mpmc::Unbounded::<(usize, u64), { usize::MAX }, Spin>::channel());
        });
    }

    #[test]
    fn yield_channels_stream_with_more_threads_than_cores() {
        within(|| {
            stream(mpmc::Bounded::<(usize, u64), 4, { usize::MAX }, Yield>::channel());
            stream(mpmc::Unbounded::<(usize, u64), { usize::MAX }, Yield>::channel());
        });
    }

    #[test]
    fn a_yield_channel_times_out_and_sees_a_close_while_blocked() {
        within(|| {
            let (tx, rx) = mpmc::Bounded::<u8, 1, { usize::MAX }, Yield>::channel();
            assert_eq!(
                rx.recv_timeout(Duration::from_millis(5)),
                Err(RecvTimeoutError::Timeout)
            );
            tx.try_send(1).unwrap();
            assert_eq!(
                tx.send_timeout(2, Duration::from_millis(5)),
                Err(SendTimeoutError::Timeout(2))
            );
            let blocked = thread::spawn(move || (rx.recv_blocking(), rx.recv_blocking()));
            thread::sleep(Duration::from_millis(5));
            drop(tx);
            let (first, second) = blocked.join().expect("the receiver panicked");
            assert_eq!(first, Ok(1));
            assert!(second.is_err(), "a disconnect after the queue drained");
        });
    }
}
