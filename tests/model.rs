//! Model-based tests: random operation sequences run against a channel and
//! against a reference model (a `VecDeque` of value ids, the held permits,
//! the endpoint counts and a closed flag), comparing every result.
//!
//! `every_flavour!` holds the single-threaded sequences and the
//! two-thread variant; `permits_one!`/`permits_many!`/`no_permits!` the
//! reservation phase of the bounded flavours, whose permits borrow a
//! sender (mutably for a single sender, so nothing else can be sent through
//! it while they live); `one_sender!`/`many_senders!` and
//! `one_receiver!`/`many_receivers!` what each arity allows (cloning,
//! `peek`). The modules at the bottom instantiate them for the six flavours,
//! bounded at capacities 1, 2 and 4.
//!
//! Every payload is a [`Tracked`] value, so after each operation the test
//! also checks that exactly the values the model holds are alive: values
//! handed back in errors, received, or dropped with a cancelled future or
//! the last receiver are gone at once. Each sequence prints its seed and its
//! last operations when it fails; `ASYNCBAND_SEED=<seed>` replays it as the
//! first sequence. `ASYNCBAND_STRESS` multiplies the number of sequences.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::Duration;

use asyncband::error::{
    RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
};
use asyncband_tests::{
    Ledger, SeedReport, Tracked, XorShift, assert_received_exactly_the_accepted, scale, test_seed,
    within,
};

/// Random sequences per flavour, times `ASYNCBAND_STRESS`.
const SEQUENCES: usize = 300;
/// Operations per sequence, at most.
const OPERATIONS: u64 = 120;
/// Rounds of the two-thread variant per flavour, times `ASYNCBAND_STRESS`.
const THREADED_ROUNDS: usize = 6;
/// Values each producer offers per round of the two-thread variant.
const THREADED_VALUES: u64 = 300;

/// The outcome of a send as the model predicts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    Ok,
    Full,
    Disconnected,
}

/// The reference: what the channel should hold and report.
#[derive(Debug)]
struct Model {
    /// The bound, `None` when unbounded.
    cap: Option<usize>,
    /// Ids of the queued values, oldest first.
    queue: VecDeque<usize>,
    /// Slots held by permits (single permits and unused slots of batches).
    held: usize,
    /// `close()` was called.
    closed_explicitly: bool,
    senders: usize,
    receivers: usize,
}

impl Model {
    fn new(cap: Option<usize>) -> Self {
        Self {
            cap,
            queue: VecDeque::new(),
            held: 0,
            closed_explicitly: false,
            senders: 1,
            receivers: 1,
        }
    }

    fn is_closed(&self) -> bool {
        self.closed_explicitly || self.senders == 0 || self.receivers == 0
    }

    fn is_full(&self) -> bool {
        self.cap
            .is_some_and(|cap| self.queue.len() + self.held == cap)
    }

    /// What a send would return now, without sending.
    fn would_send(&self) -> Sent {
        if self.is_closed() {
            Sent::Disconnected
        } else if self
            .cap
            .is_some_and(|cap| self.queue.len() + self.held >= cap)
        {
            Sent::Full
        } else {
            Sent::Ok
        }
    }

    /// A send of value `id`.
    fn send(&mut self, id: usize) -> Sent {
        let sent = self.would_send();
        if sent == Sent::Ok {
            self.queue.push_back(id);
        }
        sent
    }

    /// A reservation of `n` slots.
    fn reserve(&mut self, n: usize) -> Sent {
        let cap = self.cap.expect("only bounded channels reserve");
        if self.is_closed() {
            // For any count, zero and more than the capacity included: a
            // closed channel has room for nothing.
            Sent::Disconnected
        } else if n > cap {
            // Could never succeed: an error at once, never a wait.
            Sent::Full
        } else if n == 0 {
            Sent::Ok
        } else if self.queue.len() + self.held + n > cap {
            Sent::Full
        } else {
            self.held += n;
            Sent::Ok
        }
    }

    /// A permit sends value `id`: true if it was queued.
    fn permit_send(&mut self, id: usize) -> bool {
        self.held -= 1;
        if self.is_closed() {
            false
        } else {
            self.queue.push_back(id);
            true
        }
    }

    /// What a receive would return now, without receiving.
    fn would_recv(&self) -> Result<usize, TryRecvError> {
        match self.queue.front() {
            Some(&id) => Ok(id),
            None if self.is_closed() => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        }
    }

    fn recv(&mut self) -> Result<usize, TryRecvError> {
        let result = self.would_recv();
        if result.is_ok() {
            self.queue.pop_front();
        }
        result
    }

    /// `close()`: true if this call closed the channel.
    fn close(&mut self) -> bool {
        let was_closed = self.is_closed();
        self.closed_explicitly = true;
        !was_closed
    }

    fn drop_receiver(&mut self) {
        self.receivers -= 1;
        if self.receivers == 0 {
            // The values still queued are dropped now, not later.
            self.queue.clear();
        }
    }
}

/// The last operations of a sequence, printed if it fails.
#[derive(Default)]
struct Trace {
    ops: VecDeque<String>,
}

impl Trace {
    fn push(&mut self, op: impl Into<String>) {
        if self.ops.len() == 40 {
            self.ops.pop_front();
        }
        self.ops.push_back(op.into());
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        if thread::panicking() {
            let mut text = String::from("last operations, oldest first:\n");
            for op in &self.ops {
                let _ = writeln!(text, "  {op}");
            }
            eprint!("{text}");
        }
    }
}

/// Polls `future` once with a waker that does nothing.
fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// Panics unless `what` went the way the model said, with the value
/// handed back when it failed.
fn assert_sent(got: Result<(), (Sent, Tracked)>, expected: Sent, id: usize, what: &str) {
    match got {
        Ok(()) => assert_eq!(expected, Sent::Ok, "{what}: returned Ok"),
        Err((sent, back)) => {
            assert_eq!(expected, sent, "{what}: returned {sent:?}");
            assert_eq!(back.id(), id, "{what}: handed back another value");
        }
    }
}

/// Checks every query of an endpoint (`Sender` or `Receiver`) against the
/// model.
macro_rules! check_queries {
    ($endpoint:expr, $model:expr, $what:expr) => {{
        let endpoint = $endpoint;
        let model: &Model = $model;
        let what = $what;
        assert_eq!(endpoint.len(), model.queue.len(), "{what}: len()");
        assert_eq!(
            endpoint.is_empty(),
            model.queue.is_empty(),
            "{what}: is_empty()"
        );
        assert_eq!(endpoint.is_full(), model.is_full(), "{what}: is_full()");
        assert_eq!(endpoint.capacity(), model.cap, "{what}: capacity()");
        assert_eq!(
            endpoint.is_closed(),
            model.is_closed(),
            "{what}: is_closed()"
        );
        assert_eq!(
            endpoint.sender_count(),
            model.senders,
            "{what}: sender_count()"
        );
        assert_eq!(
            endpoint.receiver_count(),
            model.receivers,
            "{what}: receiver_count()"
        );
    }};
}

/// One random operation through sender `$tx` (a `&mut Sender`, or a
/// `&Sender` of a multi-producer channel).
macro_rules! sender_op {
    ($tx:expr, $model:expr, $ledger:expr, $rng:expr, $trace:expr) => {{
        let tx = $tx;
        let model: &mut Model = $model;
        let value = $ledger.track();
        let id = value.id();
        match $rng.below(9) {
            0..=3 => {
                $trace.push(format!("try_send({id})"));
                let expected = model.send(id);
                let got = tx.try_send(value).map_err(|err| match err {
                    TrySendError::Full(v) => (Sent::Full, v),
                    TrySendError::Disconnected(v) => (Sent::Disconnected, v),
                });
                assert_sent(got, expected, id, "try_send");
            }
            4 => {
                $trace.push(format!("send_timeout({id}, 0)"));
                let expected = model.send(id);
                let got = tx
                    .send_timeout(value, Duration::ZERO)
                    .map_err(|err| match err {
                        SendTimeoutError::Timeout(v) => (Sent::Full, v),
                        SendTimeoutError::Disconnected(v) => (Sent::Disconnected, v),
                    });
                assert_sent(got, expected, id, "send_timeout");
            }
            5 => {
                // Pending means full: the future is dropped with its value,
                // which the model never held.
                $trace.push(format!("poll send({id}) once, then drop it"));
                let expected = model.send(id);
                let mut future = pin!(tx.send(value));
                match poll_once(future.as_mut()) {
                    Poll::Ready(Ok(())) => assert_eq!(expected, Sent::Ok, "send: Ready(Ok)"),
                    Poll::Ready(Err(SendError(back))) => {
                        assert_eq!(expected, Sent::Disconnected, "send: Ready(Err)");
                        assert_eq!(back.id(), id);
                    }
                    Poll::Pending => assert_eq!(expected, Sent::Full, "send: Pending"),
                }
            }
            6 if model.would_send() != Sent::Full => {
                $trace.push(format!("send_blocking({id}) (does not wait)"));
                let expected = model.send(id);
                let got = tx
                    .send_blocking(value)
                    .map_err(|SendError(v)| (Sent::Disconnected, v));
                assert_sent(got, expected, id, "send_blocking");
            }
            7 if $rng.percent(25) => {
                drop(value);
                $trace.push("close() from a sender");
                let expected = model.close();
                assert_eq!(tx.close(), expected, "close() from a sender");
            }
            _ => {
                $trace.push(format!("block_on(send({id})) (does not wait)"));
                if model.would_send() == Sent::Full {
                    drop(value);
                } else {
                    let expected = model.send(id);
                    let got = futures::executor::block_on(tx.send(value))
                        .map_err(|SendError(v)| (Sent::Disconnected, v));
                    assert_sent(got, expected, id, "send");
                }
            }
        }
    }};
}

macro_rules! every_flavour {
    () => {
        type Tx = topology::Sender<F<Tracked>>;
        type Rx = topology::Receiver<F<Tracked>>;

        /// The channel under test, its endpoints and its model.
        struct Channel {
            senders: Vec<Tx>,
            receivers: Vec<Rx>,
            model: Model,
            ledger: Arc<Ledger>,
            trace: Trace,
        }

        impl Channel {
            fn new() -> Self {
                let (tx, rx) = F::<Tracked>::channel();
                Self {
                    senders: vec![tx],
                    receivers: vec![rx],
                    model: Model::new(CAPACITY),
                    ledger: Ledger::new(),
                    trace: Trace::default(),
                }
            }

            /// Every query of every endpoint, and the values alive.
            fn check(&self) {
                check_all(&self.senders, &self.receivers, &self.model, &self.ledger);
            }
        }

        fn check_all(senders: &[Tx], receivers: &[Rx], model: &Model, ledger: &Ledger) {
            for (i, tx) in senders.iter().enumerate() {
                check_queries!(tx, model, format!("sender {i}"));
            }
            check_receivers(receivers, model, ledger);
        }

        fn check_receivers(receivers: &[Rx], model: &Model, ledger: &Ledger) {
            for (j, rx) in receivers.iter().enumerate() {
                check_queries!(rx, model, format!("receiver {j}"));
            }
            assert_eq!(
                ledger.live(),
                model.queue.len(),
                "values alive besides the queued ones (or queued ones dropped)"
            );
        }

        /// One random operation on a receiver: receives of every kind,
        /// `peek`, `close`, cloning and dropping.
        fn receiver_op(
            receivers: &mut Vec<Rx>,
            model: &mut Model,
            rng: &mut XorShift,
            trace: &mut Trace,
        ) {
            if receivers.is_empty() {
                return;
            }
            let j = rng.index(receivers.len());
            match rng.below(12) {
                0..=3 => {
                    trace.push(format!("receiver {j}: try_recv()"));
                    let expected = model.recv();
                    let got = receivers[j].try_recv().map(|v| v.id());
                    assert_eq!(got, expected, "try_recv");
                }
                4 => {
                    trace.push(format!("receiver {j}: recv_timeout(0)"));
                    let expected = model.recv().map_err(|err| match err {
                        TryRecvError::Empty => RecvTimeoutError::Timeout,
                        TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
                    });
                    let got = receivers[j].recv_timeout(Duration::ZERO).map(|v| v.id());
                    assert_eq!(got, expected, "recv_timeout");
                }
                5 => {
                    trace.push(format!("receiver {j}: poll recv() once, then drop it"));
                    let expected = match model.recv() {
                        Ok(id) => Poll::Ready(Ok(id)),
                        Err(TryRecvError::Empty) => Poll::Pending,
                        Err(TryRecvError::Disconnected) => Poll::Ready(Err(RecvError)),
                    };
                    let mut future = pin!(receivers[j].recv());
                    let got = poll_once(future.as_mut()).map(|r| r.map(|v| v.id()));
                    assert_eq!(got, expected, "recv");
                }
                6 => {
                    let limit = rng.index(6);
                    trace.push(format!("receiver {j}: try_recv_many(_, {limit})"));
                    let mut expected = Vec::new();
                    while expected.len() < limit {
                        match model.recv() {
                            Ok(id) => expected.push(id),
                            Err(_) => break,
                        }
                    }
                    let mut buf = Vec::new();
                    let n = receivers[j].try_recv_many(&mut buf, limit);
                    assert_eq!(n, buf.len(), "try_recv_many's count");
                    let got: Vec<usize> = buf.iter().map(Tracked::id).collect();
                    assert_eq!(got, expected, "try_recv_many");
                }
                7 if model.would_recv() != Err(TryRecvError::Empty) => {
                    trace.push(format!("receiver {j}: recv_blocking() (does not wait)"));
                    let expected = model.recv().map_err(|_| RecvError);
                    let got = receivers[j].recv_blocking().map(|v| v.id());
                    assert_eq!(got, expected, "recv_blocking");
                }
                8 => {
                    trace.push(format!("receiver {j}: peek()"));
                    if let Some(got) = peek_id(&mut receivers[j]) {
                        assert_eq!(got, model.queue.front().copied(), "peek");
                    }
                }
                9 if rng.percent(25) => {
                    trace.push(format!("receiver {j}: close()"));
                    let expected = model.close();
                    assert_eq!(receivers[j].close(), expected, "close() from a receiver");
                }
                10 if rng.percent(30) => {
                    if let Some(clone) = clone_receiver(&receivers[j]) {
                        trace.push(format!("receiver {j}: clone()"));
                        receivers.push(clone);
                        model.receivers += 1;
                    }
                }
                11 if rng.percent(20) => {
                    trace.push(format!("drop receiver {j}"));
                    drop(receivers.swap_remove(j));
                    model.drop_receiver();
                }
                _ => {}
            }
        }

        /// One random step of a sequence.
        fn step(ch: &mut Channel, rng: &mut XorShift) {
            match rng.below(20) {
                0..=7 if !ch.senders.is_empty() => {
                    let i = rng.index(ch.senders.len());
                    ch.trace.push(format!("sender {i}:"));
                    sender_op!(&mut ch.senders[i], &mut ch.model, ch.ledger, rng, ch.trace);
                }
                8..=14 => receiver_op(&mut ch.receivers, &mut ch.model, rng, &mut ch.trace),
                15 | 16 => permit_phase(ch, rng),
                17 if !ch.senders.is_empty() && rng.percent(40) => {
                    let i = rng.index(ch.senders.len());
                    if let Some(clone) = clone_sender(&ch.senders[i]) {
                        ch.trace.push(format!("sender {i}: clone()"));
                        ch.senders.push(clone);
                        ch.model.senders += 1;
                    }
                }
                18 if !ch.senders.is_empty() && rng.percent(20) => {
                    let i = rng.index(ch.senders.len());
                    ch.trace.push(format!("drop sender {i}"));
                    drop(ch.senders.swap_remove(i));
                    ch.model.senders -= 1;
                }
                _ => {}
            }
        }

        /// Runs one random sequence from `seed`.
        fn run_sequence(seed: u64) {
            let _report = SeedReport::new(format!("{} sequence", module_path!()), seed);
            run_with(&mut XorShift::new(seed));
        }

        /// Runs the sequence that `rng` chooses; the fuzz target
        /// (`fuzz/fuzz_targets/model.rs`) calls it with a scripted `rng`.
        pub(crate) fn run_with(rng: &mut XorShift) {
            let mut ch = Channel::new();
            ch.check();
            for _ in 0..rng.between(1, OPERATIONS) {
                if ch.senders.is_empty() && ch.receivers.is_empty() {
                    break;
                }
                step(&mut ch, rng);
                ch.check();
            }
            let Channel {
                senders,
                receivers,
                ledger,
                trace,
                ..
            } = ch;
            drop((senders, receivers));
            assert_eq!(ledger.live(), 0, "values outlived the channel");
            ledger.assert_each_dropped_once();
            drop(trace);
        }

        #[test]
        fn random_sequences_match_the_model() {
            let base = test_seed();
            // Under the watchdog: if the channel disagreed with the model
            // about room, a send the model thought immediate would wait.
            within(move || {
                for k in 0..scale(SEQUENCES) {
                    run_sequence(base.wrapping_add(k as u64));
                }
            })
        }

        // ---- with a second thread -------------------------------------

        /// A value of the two-thread variant.
        struct Item {
            producer: usize,
            seq: u64,
            _tracked: Tracked,
        }

        /// Offers `THREADED_VALUES` values through random sending APIs,
        /// maybe closing part-way; returns the sequences that were
        /// accepted, in order.
        fn produce(
            mut tx: Tx2,
            producer: usize,
            ledger: Arc<Ledger>,
            mut rng: XorShift,
        ) -> Vec<u64> {
            let close_at = if rng.percent(20) {
                rng.below(THREADED_VALUES)
            } else {
                u64::MAX
            };
            let mut accepted = Vec::new();
            for seq in 0..THREADED_VALUES {
                if seq == close_at {
                    tx.close();
                }
                let item = Item {
                    producer,
                    seq,
                    _tracked: ledger.track(),
                };
                let result = match rng.below(4) {
                    0 => match tx.try_send(item) {
                        Ok(()) => Ok(()),
                        Err(TrySendError::Full(back)) => {
                            assert_eq!((back.producer, back.seq), (producer, seq));
                            continue;
                        }
                        Err(TrySendError::Disconnected(back)) => Err(back),
                    },
                    1 => tx.send_blocking(item).map_err(SendError::into_inner),
                    2 => match tx.send_timeout(item, Duration::from_micros(rng.below(200))) {
                        Ok(()) => Ok(()),
                        Err(SendTimeoutError::Timeout(back)) => {
                            assert_eq!((back.producer, back.seq), (producer, seq));
                            continue;
                        }
                        Err(SendTimeoutError::Disconnected(back)) => Err(back),
                    },
                    _ => match reserve_and_send(&mut tx, item, &mut rng) {
                        Some(result) => result,
                        None => continue,
                    },
                };
                match result {
                    Ok(()) => accepted.push(seq),
                    Err(back) => {
                        assert_eq!((back.producer, back.seq), (producer, seq), "handed back");
                        assert!(tx.is_closed(), "a send failed on an open channel");
                        break;
                    }
                }
            }
            accepted
        }

        /// Receives through random APIs until the channel is closed and
        /// empty, checking the capacity bound on the way.
        fn consume(mut rx: Rx2, mut rng: XorShift) -> Vec<(usize, u64)> {
            let mut got = Vec::new();
            let mut seen_closed = false;
            loop {
                if let Some(cap) = CAPACITY {
                    assert!(rx.len() <= cap, "more than CAP values queued");
                }
                let closed = rx.is_closed();
                assert!(closed || !seen_closed, "a closed channel reopened");
                seen_closed = closed;
                let item = match rng.below(5) {
                    0 => match rx.try_recv() {
                        Ok(item) => item,
                        Err(TryRecvError::Empty) => {
                            thread::yield_now();
                            continue;
                        }
                        Err(TryRecvError::Disconnected) => break,
                    },
                    1 => match rx.recv_blocking() {
                        Ok(item) => item,
                        Err(RecvError) => break,
                    },
                    2 => match rx.recv_timeout(Duration::from_micros(rng.below(200))) {
                        Ok(item) => item,
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => break,
                    },
                    3 => {
                        let mut buf = Vec::new();
                        if rx.try_recv_many(&mut buf, 1 + rng.index(4)) == 0 {
                            // Only `Disconnected` says nothing more will come.
                            match rx.try_recv() {
                                Ok(item) => buf.push(item),
                                Err(TryRecvError::Empty) => thread::yield_now(),
                                Err(TryRecvError::Disconnected) => break,
                            }
                        }
                        got.extend(buf.iter().map(|item| (item.producer, item.seq)));
                        continue;
                    }
                    _ => {
                        let mut future = pin!(rx.recv());
                        match poll_once(future.as_mut()) {
                            Poll::Ready(Ok(item)) => item,
                            Poll::Ready(Err(RecvError)) => break,
                            Poll::Pending => continue,
                        }
                    }
                };
                got.push((item.producer, item.seq));
            }
            got
        }

        #[test]
        fn a_second_thread_receives_exactly_the_accepted_values_in_order() {
            let base = test_seed();
            let _report = SeedReport::new(module_path!(), base);
            within(move || {
                let mut rng = XorShift::new(base);
                for _ in 0..scale(THREADED_ROUNDS) {
                    let ledger = Ledger::new();
                    let (tx, rx) = F::<Item>::channel();
                    // Up to two producers and two consumers, the main thread
                    // being one consumer.
                    let producers: Vec<_> = two_senders(tx)
                        .into_iter()
                        .enumerate()
                        .map(|(producer, tx)| {
                            let (ledger, rng) = (Arc::clone(&ledger), rng.fork());
                            thread::spawn(move || produce(tx, producer, ledger, rng))
                        })
                        .collect();
                    let mut receivers = two_receivers(rx);
                    let main_rx = receivers.remove(0);
                    let helper = receivers.pop().map(|rx| {
                        let rng = rng.fork();
                        thread::spawn(move || consume(rx, rng))
                    });
                    let mut received = vec![consume(main_rx, rng.fork())];
                    received.extend(helper.map(|h| h.join().unwrap()));
                    let accepted: Vec<Vec<u64>> =
                        producers.into_iter().map(|p| p.join().unwrap()).collect();
                    assert_received_exactly_the_accepted(&received, &accepted);
                    assert_eq!(ledger.live(), 0);
                    ledger.assert_each_dropped_once();
                }
            })
        }

        type Tx2 = topology::Sender<F<Item>>;
        type Rx2 = topology::Receiver<F<Item>>;
    };
}

macro_rules! no_permits {
    () => {
        const CAPACITY: Option<usize> = None;

        /// Unbounded channels have no permits.
        fn permit_phase(_ch: &mut Channel, _rng: &mut XorShift) {}

        /// `try_send`, the closest an unbounded channel has.
        fn reserve_and_send(
            tx: &mut Tx2,
            item: Item,
            _rng: &mut XorShift,
        ) -> Option<Result<(), Item>> {
            match tx.try_send(item) {
                Ok(()) => Some(Ok(())),
                Err(TrySendError::Full(_)) => unreachable!("unbounded channels are never full"),
                Err(TrySendError::Disconnected(back)) => Some(Err(back)),
            }
        }
    };
}

/// What the permit phases of both arities share.
macro_rules! permits_common {
    () => {
        const CAPACITY: Option<usize> = Some(CAP);

        /// Reserves one slot and sends through it, or (sometimes) reserves
        /// a batch and sends through its first permit, dropping the rest.
        /// `None` when the channel was full.
        fn reserve_and_send(
            tx: &mut Tx2,
            item: Item,
            rng: &mut XorShift,
        ) -> Option<Result<(), Item>> {
            let n = if rng.percent(30) {
                1 + rng.index(CAP)
            } else {
                1
            };
            match tx.try_reserve_many(n) {
                Ok(mut permits) => {
                    let permit = permits.next().expect("n >= 1");
                    Some(permit.send(item).map_err(SendError::into_inner))
                }
                Err(TrySendError::Full(())) => None,
                Err(TrySendError::Disconnected(())) => Some(Err(item)),
            }
        }

        /// Reports an attempted reservation of `n` to the model and checks
        /// the result; true if it succeeded.
        fn check_reserve<P>(
            got: &Result<P, TrySendError<()>>,
            model: &mut Model,
            n: usize,
        ) -> bool {
            let expected = model.reserve(n);
            let got_as = match got {
                Ok(_) => Sent::Ok,
                Err(TrySendError::Full(())) => Sent::Full,
                Err(TrySendError::Disconnected(())) => Sent::Disconnected,
            };
            assert_eq!(got_as, expected, "try_reserve_many({n}) / try_reserve()");
            got.is_ok()
        }

        /// A permit's send of a new value, checked against the model.
        fn send_permit(
            permit: topology::Permit<'_, F<Tracked>>,
            model: &mut Model,
            ledger: &Arc<Ledger>,
            trace: &mut Trace,
        ) {
            let value = ledger.track();
            let id = value.id();
            trace.push(format!("permit.send({id})"));
            let queued = model.permit_send(id);
            match permit.send(value) {
                Ok(()) => assert!(queued, "permit.send returned Ok on a closed channel"),
                Err(SendError(back)) => {
                    assert!(!queued, "permit.send failed on an open channel");
                    assert_eq!(back.id(), id, "permit.send handed back another value");
                }
            }
        }

        /// Sends a random permit of `permits`, drops one, or takes one out
        /// of a batch.
        fn permit_op<'a>(
            permits: &mut Vec<topology::Permit<'a, F<Tracked>>>,
            batches: &mut Vec<topology::Permits<'a, F<Tracked>>>,
            model: &mut Model,
            ledger: &Arc<Ledger>,
            rng: &mut XorShift,
            trace: &mut Trace,
        ) {
            match rng.below(4) {
                0 | 1 if !permits.is_empty() => {
                    let k = rng.index(permits.len());
                    send_permit(permits.swap_remove(k), model, ledger, trace);
                }
                2 if !permits.is_empty() => {
                    trace.push("drop a permit");
                    drop(permits.swap_remove(rng.index(permits.len())));
                    model.held -= 1;
                }
                3 if !batches.is_empty() => {
                    let b = rng.index(batches.len());
                    if rng.percent(30) {
                        let batch = batches.swap_remove(b);
                        trace.push(format!("drop a batch of {} unused permits", batch.len()));
                        model.held -= batch.len();
                        drop(batch);
                    } else {
                        let before = batches[b].len();
                        trace.push(format!("take a permit out of a batch of {before}"));
                        match batches[b].next() {
                            Some(permit) => {
                                assert!(before > 0, "a batch of 0 gave a permit");
                                assert_eq!(batches[b].len(), before - 1, "Permits::len()");
                                permits.push(permit);
                            }
                            None => assert_eq!(before, 0, "a batch of {before} gave no permit"),
                        }
                    }
                }
                _ => {}
            }
        }

        /// Drops what a phase still holds, in a random order.
        fn end_phase<'a>(
            mut permits: Vec<topology::Permit<'a, F<Tracked>>>,
            mut batches: Vec<topology::Permits<'a, F<Tracked>>>,
            model: &mut Model,
            rng: &mut XorShift,
            trace: &mut Trace,
        ) {
            trace.push("end of the permit phase: drop the rest");
            while !permits.is_empty() {
                drop(permits.swap_remove(rng.index(permits.len())));
                model.held -= 1;
            }
            while !batches.is_empty() {
                let batch = batches.swap_remove(rng.index(batches.len()));
                model.held -= batch.len();
            }
        }
    };
}

macro_rules! permits_one {
    () => {
        permits_common!();

        /// A phase with the single sender borrowed by its reservation:
        /// only the permits and the receivers can act meanwhile.
        fn permit_phase(ch: &mut Channel, rng: &mut XorShift) {
            let Channel {
                senders,
                receivers,
                model,
                ledger,
                trace,
            } = ch;
            let Some(tx) = senders.first_mut() else {
                return;
            };
            let mut permits = Vec::new();
            let mut batches = Vec::new();
            if rng.percent(50) {
                trace.push("try_reserve()");
                let got = tx.try_reserve();
                if check_reserve(&got, model, 1) {
                    permits.push(got.unwrap());
                }
            } else {
                let n = rng.index(CAP + 2);
                trace.push(format!("try_reserve_many({n})"));
                let got = tx.try_reserve_many(n);
                if check_reserve(&got, model, n) {
                    let batch = got.unwrap();
                    assert_eq!(batch.len(), n, "Permits::len()");
                    batches.push(batch);
                }
            }
            for _ in 0..rng.between(1, 10) {
                if rng.percent(50) {
                    permit_op(&mut permits, &mut batches, model, ledger, rng, trace);
                } else {
                    receiver_op(receivers, model, rng, trace);
                }
                check_receivers(receivers, model, ledger);
            }
            end_phase(permits, batches, model, rng, trace);
        }
    };
}

macro_rules! permits_many {
    () => {
        permits_common!();

        /// A phase where permits of any sender are held while the other
        /// senders and the receivers carry on.
        fn permit_phase(ch: &mut Channel, rng: &mut XorShift) {
            let Channel {
                senders,
                receivers,
                model,
                ledger,
                trace,
            } = ch;
            if senders.is_empty() {
                return;
            }
            let senders: &Vec<Tx> = senders;
            let mut permits = Vec::new();
            let mut batches = Vec::new();
            for _ in 0..rng.between(1, 12) {
                let i = rng.index(senders.len());
                match rng.below(10) {
                    0 | 1 => {
                        trace.push(format!("sender {i}: try_reserve()"));
                        let got = senders[i].try_reserve();
                        if check_reserve(&got, model, 1) {
                            permits.push(got.unwrap());
                        }
                    }
                    2 => {
                        let n = rng.index(CAP + 2);
                        trace.push(format!("sender {i}: try_reserve_many({n})"));
                        let got = senders[i].try_reserve_many(n);
                        if check_reserve(&got, model, n) {
                            let batch = got.unwrap();
                            assert_eq!(batch.len(), n, "Permits::len()");
                            batches.push(batch);
                        }
                    }
                    3 => {
                        // A reservation polled once: ready with a permit,
                        // or pending (full) and dropped, taking nothing.
                        trace.push(format!("sender {i}: poll reserve() once"));
                        let mut future = pin!(senders[i].reserve());
                        let got = match poll_once(future.as_mut()) {
                            Poll::Ready(Ok(permit)) => Ok(permit),
                            Poll::Ready(Err(SendError(()))) => Err(TrySendError::Disconnected(())),
                            Poll::Pending => Err(TrySendError::Full(())),
                        };
                        if check_reserve(&got, model, 1) {
                            permits.push(got.unwrap());
                        }
                    }
                    4..=6 => permit_op(&mut permits, &mut batches, model, ledger, rng, trace),
                    7 | 8 => receiver_op(receivers, model, rng, trace),
                    _ => {
                        trace.push(format!("sender {i} (permits held):"));
                        sender_op!(&senders[i], model, ledger, rng, trace);
                    }
                }
                check_all(senders, receivers, model, ledger);
            }
            end_phase(permits, batches, model, rng, trace);
        }
    };
}

macro_rules! one_sender {
    () => {
        /// A single sender cannot be cloned.
        fn clone_sender(_tx: &Tx) -> Option<Tx> {
            None
        }

        /// The only sender, as a list.
        fn two_senders(tx: Tx2) -> Vec<Tx2> {
            vec![tx]
        }
    };
}

macro_rules! many_senders {
    () => {
        /// A clone, while there are fewer than four senders.
        fn clone_sender(tx: &Tx) -> Option<Tx> {
            (tx.sender_count() < 4).then(|| tx.clone())
        }

        /// Two senders of one channel.
        fn two_senders(tx: Tx2) -> Vec<Tx2> {
            vec![tx.clone(), tx]
        }
    };
}

macro_rules! one_receiver {
    () => {
        /// A single receiver cannot be cloned.
        fn clone_receiver(_rx: &Rx) -> Option<Rx> {
            None
        }

        /// The id of the value `peek` shows.
        fn peek_id(rx: &mut Rx) -> Option<Option<usize>> {
            Some(rx.peek().map(Tracked::id))
        }

        /// The only receiver, as a list.
        fn two_receivers(rx: Rx2) -> Vec<Rx2> {
            vec![rx]
        }
    };
}

macro_rules! many_receivers {
    () => {
        /// A clone, while there are fewer than four receivers.
        fn clone_receiver(rx: &Rx) -> Option<Rx> {
            (rx.receiver_count() < 4).then(|| rx.clone())
        }

        /// Many receivers have no `peek`.
        fn peek_id(_rx: &mut Rx) -> Option<Option<usize>> {
            None
        }

        /// Two receivers of one channel.
        fn two_receivers(rx: Rx2) -> Vec<Rx2> {
            vec![rx.clone(), rx]
        }
    };
}

macro_rules! flavour {
    ($name:ident, $topology:ident, bounded = $cap:literal, $permits:ident, $senders:ident, $receivers:ident) => {
        #[allow(unused_mut)]
        pub(crate) mod $name {
            use super::*;
            use asyncband::$topology as topology;
            const CAP: usize = $cap;
            type F<T> = topology::Bounded<T, CAP>;
            every_flavour!();
            $permits!();
            $senders!();
            $receivers!();
        }
    };
    ($name:ident, $topology:ident, unbounded, $senders:ident, $receivers:ident) => {
        #[allow(unused_mut)]
        pub(crate) mod $name {
            use super::*;
            use asyncband::$topology as topology;
            type F<T> = topology::Unbounded<T>;
            every_flavour!();
            no_permits!();
            $senders!();
            $receivers!();
        }
    };
}

flavour!(
    spsc_bounded_1,
    spsc,
    bounded = 1,
    permits_one,
    one_sender,
    one_receiver
);
flavour!(
    spsc_bounded_2,
    spsc,
    bounded = 2,
    permits_one,
    one_sender,
    one_receiver
);
flavour!(
    spsc_bounded_4,
    spsc,
    bounded = 4,
    permits_one,
    one_sender,
    one_receiver
);
flavour!(spsc_unbounded, spsc, unbounded, one_sender, one_receiver);
flavour!(
    mpsc_bounded_1,
    mpsc,
    bounded = 1,
    permits_many,
    many_senders,
    one_receiver
);
flavour!(
    mpsc_bounded_2,
    mpsc,
    bounded = 2,
    permits_many,
    many_senders,
    one_receiver
);
flavour!(
    mpsc_bounded_4,
    mpsc,
    bounded = 4,
    permits_many,
    many_senders,
    one_receiver
);
flavour!(mpsc_unbounded, mpsc, unbounded, many_senders, one_receiver);
flavour!(
    mpmc_bounded_1,
    mpmc,
    bounded = 1,
    permits_many,
    many_senders,
    many_receivers
);
flavour!(
    mpmc_bounded_2,
    mpmc,
    bounded = 2,
    permits_many,
    many_senders,
    many_receivers
);
flavour!(
    mpmc_bounded_4,
    mpmc,
    bounded = 4,
    permits_many,
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
