//! Liveness of waiters, randomized: no receiver or sender that is still
//! being polled waits for what the channel has for it, whatever happened to
//! the registrations in front of it.
//!
//! One thread drives a channel through random steps. Receivers of `mpmc`
//! channels wait in `recv()` futures, `poll_recv` registrations and
//! `Stream::poll_next`; senders of bounded `mpsc` and `mpmc` channels in
//! `send` and `reserve` futures. Each waiter is polled with a waker of its
//! own that counts its wakes, and given up in every way safe code allows:
//! dropped, leaked with `mem::forget`, or left registered and never polled
//! again, also between a wake and the poll it asks for.
//!
//! After each step every live waiter that was woken is polled, until none
//! is woken. Then (API.md: "a registration left behind by a `Pending` poll
//! loses nothing", "no other waiter is stranded", "senders that wait for
//! capacity are served in the order they began to wait"):
//!
//! - with a value queued, no live receiver is pending;
//! - with room in the channel, no live sender is pending, and no live
//!   sender is pending that began to wait before one that got through.
//!
//! At the end every value accepted was received exactly once. A failure
//! prints its seed; `ASYNCBAND_SEED=<seed>` replays it as the first
//! sequence, `ASYNCBAND_STRESS` multiplies the sequences.
//!
//! Waiters that park a thread are not here: their interleavings are the
//! loom models' and the misuse tests'.

use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use asyncband::error::RecvError;
use asyncband::{mpmc, mpsc};
use asyncband_tests::{SeedReport, WakeCounter, XorShift, scale, test_seed, within};
use futures::Stream;

/// Random sequences per flavour, times `ASYNCBAND_STRESS` (a few under
/// Miri, which checks the wait lists' pointers with many waiters linked).
const SEQUENCES: usize = if cfg!(miri) { 4 } else { 400 };
/// Steps per sequence.
const STEPS: usize = 40;

/// A waiting operation, as a boxed future that owns its endpoint.
type Wait<T> = Pin<Box<dyn Future<Output = T>>>;

/// A waiting operation, with the counter its waker counts into and the
/// wakes it has already answered.
struct Waiter<T> {
    wait: Wait<T>,
    wakes: Arc<WakeCounter>,
    answered: usize,
    what: &'static str,
    /// For senders: the value. Values are numbered in the order senders
    /// begin to wait, so it also says which waited longer.
    value: u32,
}

impl<T> Waiter<T> {
    fn new(wait: Wait<T>, what: &'static str) -> Self {
        Self {
            wait,
            wakes: WakeCounter::new(),
            answered: 0,
            what,
            value: 0,
        }
    }

    fn woken(&self) -> bool {
        self.wakes.wakes() > self.answered
    }

    fn poll(&mut self) -> Poll<T> {
        self.answered = self.wakes.wakes();
        self.wakes.poll(self.wait.as_mut())
    }
}

/// How a test gives up a waiter.
#[derive(Clone, Copy, Debug)]
enum GiveUp {
    Drop,
    Forget,
    /// Left registered and never polled again, until the sequence ends.
    Leave,
}

/// Waiters given up so far: those left registered, and the wake counters
/// of those forgotten (the futures themselves are leaked).
struct GivenUp<T> {
    left: Vec<Waiter<T>>,
    forgotten: Vec<(Arc<WakeCounter>, usize)>,
}

impl<T> GivenUp<T> {
    fn new() -> Self {
        Self {
            left: Vec::new(),
            forgotten: Vec::new(),
        }
    }

    /// Gives up a random one of the `live` waiters, if any, in a random way.
    fn give_up(&mut self, live: &mut Vec<Waiter<T>>, rng: &mut XorShift, trace: &mut String) {
        if live.is_empty() {
            return;
        }
        let waiter = live.swap_remove(rng.index(live.len()));
        let how = [GiveUp::Drop, GiveUp::Forget, GiveUp::Leave][rng.index(3)];
        let _ = write!(
            trace,
            "{how:?} a {} waiter (woken: {}); ",
            waiter.what,
            waiter.woken()
        );
        match how {
            GiveUp::Drop => drop(waiter),
            GiveUp::Forget => {
                self.forgotten
                    .push((Arc::clone(&waiter.wakes), waiter.answered));
                std::mem::forget(waiter);
            }
            GiveUp::Leave => self.left.push(waiter),
        }
    }

    /// How many of the forgotten waiters were woken since their last poll.
    fn forgotten_woken(&self) -> usize {
        self.forgotten
            .iter()
            .filter(|(wakes, answered)| wakes.wakes() > *answered)
            .count()
    }

    /// How many of the waiters given up and not dropped were woken since
    /// their last poll.
    fn woken(&self) -> usize {
        self.left.iter().filter(|waiter| waiter.woken()).count() + self.forgotten_woken()
    }
}

/// Polls every live waiter that was woken, until none is, and hands the
/// ones that finish to `done`.
fn settle<T>(live: &mut Vec<Waiter<T>>, mut done: impl FnMut(&Waiter<T>, T)) {
    while let Some(i) = live.iter().position(Waiter::woken) {
        if let Poll::Ready(output) = live[i].poll() {
            let waiter = live.swap_remove(i);
            done(&waiter, output);
        }
    }
}

/// Panics unless `received` holds each of `accepted` exactly once.
fn assert_received_once(mut received: Vec<u32>, mut accepted: Vec<u32>, trace: &str) {
    received.sort_unstable();
    accepted.sort_unstable();
    assert_eq!(
        received, accepted,
        "each value accepted is received once\n{trace}"
    );
}

/// A channel, as a sequence uses it.
struct Channel<S, R, L, W> {
    /// The bound, for the senders' sequences.
    capacity: usize,
    /// `try_send`; whether the value was sent.
    send: S,
    /// `try_recv`; the value, if one was there.
    recv: R,
    /// How many values are queued.
    len: L,
    /// A new waiter of a random kind on a clone of an endpoint; a sender
    /// sends the value given, and its output says whether it did.
    wait: W,
}

/// One random sequence of waiting receivers on a fresh `channel`.
fn receivers_sequence<S, R, L, W>(mut channel: Channel<S, R, L, W>, seed: u64)
where
    S: FnMut(u32) -> bool,
    R: FnMut() -> Option<u32>,
    L: Fn() -> usize,
    W: FnMut(&mut XorShift, u32) -> Waiter<Result<u32, RecvError>>,
{
    let mut rng = XorShift::new(seed);
    let mut trace = String::new();
    let (mut live, mut given_up) = (Vec::new(), GivenUp::new());
    let (mut accepted, mut received) = (Vec::new(), Vec::new());
    for step in 0..STEPS {
        let _ = write!(trace, "\n{step}: ");
        // A few operations with no polling between them, so a waiter can be
        // given up between its wake and the poll that wake asks for.
        for _ in 0..rng.between(1, 4) {
            match rng.below(10) {
                0..=3 => {
                    let mut waiter = (channel.wait)(&mut rng, 0);
                    let _ = write!(trace, "wait {}; ", waiter.what);
                    match waiter.poll() {
                        Poll::Ready(got) => received.push(got.expect("the channel stays open")),
                        Poll::Pending => live.push(waiter),
                    }
                }
                4..=6 => {
                    let value = u32::try_from(accepted.len()).expect("a short sequence");
                    if (channel.send)(value) {
                        let _ = write!(trace, "send {value}; ");
                        accepted.push(value);
                    }
                }
                7 => {
                    if let Some(value) = (channel.recv)() {
                        let _ = write!(trace, "try_recv {value}; ");
                        received.push(value);
                    }
                }
                _ => given_up.give_up(&mut live, &mut rng, &mut trace),
            }
        }
        settle(&mut live, |_, got| {
            received.push(got.expect("the channel stays open"));
        });
        let queued = (channel.len)();
        if queued > 0 {
            let asleep: Vec<_> = live.iter().map(|waiter| waiter.what).collect();
            assert!(
                asleep.is_empty(),
                "{queued} value(s) queued while live receivers sleep: {asleep:?}{trace}"
            );
        }
    }
    drop(live);
    drop(given_up);
    while let Some(value) = (channel.recv)() {
        received.push(value);
    }
    assert_received_once(received, accepted, &trace);
}

/// One random sequence of waiting senders on a fresh `channel`.
///
/// A waiting sender is woken only when it is granted a unit of capacity,
/// so a sender given up after a wake and not dropped holds one unit: the
/// room left is the capacity less the values queued and those units.
fn senders_sequence<S, R, L, W>(mut channel: Channel<S, R, L, W>, seed: u64)
where
    S: FnMut(u32) -> bool,
    R: FnMut() -> Option<u32>,
    L: Fn() -> usize,
    W: FnMut(&mut XorShift, u32) -> Waiter<bool>,
{
    let mut rng = XorShift::new(seed);
    let mut trace = String::new();
    let (mut live, mut given_up) = (Vec::new(), GivenUp::new());
    let (mut accepted, mut received) = (Vec::new(), Vec::new());
    let mut next = 0u32;
    for step in 0..STEPS {
        let _ = write!(trace, "\n{step}: ");
        // The latest value of a sender that got through after waiting.
        let mut served = None;
        for _ in 0..rng.between(1, 4) {
            match rng.below(10) {
                0..=3 => {
                    let mut waiter = (channel.wait)(&mut rng, next);
                    waiter.value = next;
                    let _ = write!(trace, "{} {next}; ", waiter.what);
                    next += 1;
                    match waiter.poll() {
                        Poll::Ready(sent) => {
                            assert!(sent, "the channel stays open");
                            accepted.push(waiter.value);
                        }
                        Poll::Pending => live.push(waiter),
                    }
                }
                4 | 5 => {
                    if (channel.send)(next) {
                        let _ = write!(trace, "try_send {next}; ");
                        accepted.push(next);
                    }
                    next += 1;
                }
                6 | 7 => {
                    if let Some(value) = (channel.recv)() {
                        let _ = write!(trace, "try_recv {value}; ");
                        received.push(value);
                    }
                }
                _ => given_up.give_up(&mut live, &mut rng, &mut trace),
            }
        }
        settle(&mut live, |waiter, sent| {
            assert!(sent, "the channel stays open");
            accepted.push(waiter.value);
            served = served.max(Some(waiter.value));
        });
        let taken = (channel.len)() + given_up.woken();
        let asleep: Vec<_> = live.iter().map(|waiter| waiter.what).collect();
        assert!(
            taken >= channel.capacity || asleep.is_empty(),
            "room for {} while live senders sleep: {asleep:?}{trace}",
            channel.capacity.saturating_sub(taken)
        );
        if let Some(served) = served {
            assert!(
                live.iter().all(|waiter| waiter.value > served),
                "a sender got through ahead of a live one that waited longer{trace}"
            );
        }
    }
    drop(live);
    given_up.left.clear();
    while let Some(value) = (channel.recv)() {
        received.push(value);
    }
    assert_received_once(received, accepted, &trace);
    // What the drain freed went to forgotten senders still waiting, in
    // order; the rest of the capacity is free.
    let kept = given_up.forgotten_woken();
    let room = (0..channel.capacity)
        .take_while(|&value| (channel.send)(u32::try_from(value).expect("a small capacity")))
        .count();
    assert_eq!(
        room,
        channel.capacity - kept,
        "capacity left after every sender but the forgotten is gone{trace}"
    );
}

/// Runs `sequence` `SEQUENCES` times (times `ASYNCBAND_STRESS`) from the
/// test's seed, under the watchdog.
fn sequences(what: &'static str, sequence: fn(u64)) {
    let base = test_seed();
    within(move || {
        for k in 0..scale(SEQUENCES) {
            let seed = base.wrapping_add(k as u64);
            let _report = SeedReport::new(what, seed);
            sequence(seed);
        }
    });
}

/// The receivers' test of one `mpmc` flavour, in a module of its own.
macro_rules! receivers {
    ($module:ident, $flavour:ty) => {
        mod $module {
            use super::*;

            /// A waiter of a random kind on a clone of `rx`: a `recv()`
            /// future, `poll_recv` or `Stream::poll_next`.
            fn wait_on(
                rx: &mpmc::Receiver<$flavour>,
                rng: &mut XorShift,
            ) -> Waiter<Result<u32, RecvError>> {
                let mut rx = rx.clone();
                match rng.below(3) {
                    0 => Waiter::new(Box::pin(async move { rx.recv().await }), "recv"),
                    1 => Waiter::new(
                        Box::pin(std::future::poll_fn(move |cx| rx.poll_recv(cx))),
                        "poll_recv",
                    ),
                    _ => Waiter::new(
                        Box::pin(std::future::poll_fn(move |cx| {
                            Pin::new(&mut rx)
                                .poll_next(cx)
                                .map(|got| got.ok_or(RecvError))
                        })),
                        "stream",
                    ),
                }
            }

            fn sequence(seed: u64) {
                let (tx, rx) = <$flavour>::channel();
                let channel = Channel {
                    capacity: tx.capacity().unwrap_or(usize::MAX),
                    send: |value| tx.try_send(value).is_ok(),
                    recv: || rx.try_recv().ok(),
                    len: || tx.len(),
                    wait: |rng: &mut XorShift, _| wait_on(&rx, rng),
                };
                receivers_sequence(channel, seed);
            }

            #[test]
            fn no_live_receiver_sleeps_while_a_value_is_queued() {
                sequences(concat!(stringify!($module), " receivers"), sequence);
            }
        }
    };
}

/// The senders' test of one bounded flavour with many senders, in a module
/// of its own.
macro_rules! senders {
    ($module:ident, $topology:ident, $flavour:ty) => {
        mod $module {
            use super::*;

            /// A waiter of a random kind on a clone of `tx`, sending
            /// `value`: a `send` future or a `reserve` future whose permit
            /// sends it.
            fn wait_on(
                tx: &$topology::Sender<$flavour>,
                rng: &mut XorShift,
                value: u32,
            ) -> Waiter<bool> {
                let tx = tx.clone();
                if rng.percent(50) {
                    Waiter::new(
                        Box::pin(async move { tx.send(value).await.is_ok() }),
                        "send",
                    )
                } else {
                    Waiter::new(
                        Box::pin(async move {
                            match tx.reserve().await {
                                Ok(permit) => permit.send(value).is_ok(),
                                Err(_) => false,
                            }
                        }),
                        "reserve",
                    )
                }
            }

            fn sequence(seed: u64) {
                #[allow(
                    unused_mut,
                    reason = "an mpsc receiver receives through `&mut self`, an mpmc one through `&self`"
                )]
                let (tx, mut rx) = <$flavour>::channel();
                let channel = Channel {
                    capacity: tx.capacity().expect("bounded"),
                    send: |value| tx.try_send(value).is_ok(),
                    recv: || rx.try_recv().ok(),
                    len: || tx.len(),
                    wait: |rng: &mut XorShift, value| wait_on(&tx, rng, value),
                };
                senders_sequence(channel, seed);
            }

            #[test]
            fn no_live_sender_sleeps_while_there_is_room_and_they_are_served_in_order() {
                sequences(concat!(stringify!($module), " senders"), sequence);
            }
        }
    };
}

receivers!(mpmc_bounded_1, mpmc::Bounded<u32, 1>);
receivers!(mpmc_bounded_4, mpmc::Bounded<u32, 4>);
receivers!(mpmc_unbounded, mpmc::Unbounded<u32>);
senders!(mpsc_bounded_1_senders, mpsc, mpsc::Bounded<u32, 1>);
senders!(mpsc_bounded_4_senders, mpsc, mpsc::Bounded<u32, 4>);
senders!(mpmc_bounded_1_senders, mpmc, mpmc::Bounded<u32, 1>);
senders!(mpmc_bounded_4_senders, mpmc, mpmc::Bounded<u32, 4>);
