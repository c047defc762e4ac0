//! Misuse that safe Rust allows loses nothing: an iterator that panics in
//! the middle of a batch, a future polled again after it completed, a
//! receive future leaked with `mem::forget` or a stream's `next()` dropped
//! while registered, a waker that panics in `wake`. Each scenario holds the
//! channel to its guarantees afterwards: capacity is all there, no value is
//! lost or dropped twice, no waiter is stranded, and the next operations
//! work.
//!
//! Written once per group of flavours, instantiated at the bottom; `F<T>` is
//! the flavour with payload `T` and `topology` its module.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

use asyncband_tests::{Ledger, Tracked, WakeCounter, silence_planned_panics, within};
use futures::executor::block_on;

/// Long enough for a spawned receiver to park.
const SETTLE: Duration = Duration::from_millis(50);
/// A deadline a woken receiver meets easily and a stranded one does not.
const PROMPTLY: Duration = Duration::from_secs(5);
/// How long a stranded receiver would sleep: far past `PROMPTLY`.
const STRANDED: Duration = Duration::from_secs(30);

/// Yields `ok` values, then panics (its size hint asks for a whole batch).
struct PanicsAfter {
    ok: u32,
    hint: usize,
}

impl Iterator for PanicsAfter {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        assert!(
            self.ok > 0,
            "an iterator that panics in the middle of a batch"
        );
        self.ok -= 1;
        Some(self.ok)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.hint, None)
    }
}

/// A waker whose `wake` panics once while armed, and does nothing else.
struct PanicsOnWake {
    armed: std::sync::atomic::AtomicBool,
}

impl PanicsOnWake {
    /// One that is not armed yet, and a waker of it.
    fn disarmed() -> (Arc<Self>, Waker) {
        let this = Arc::new(Self {
            armed: std::sync::atomic::AtomicBool::new(false),
        });
        let waker = Waker::from(Arc::clone(&this));
        (this, waker)
    }

    fn arm(&self) {
        self.armed.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Wake for PanicsOnWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let armed = self.armed.swap(false, std::sync::atomic::Ordering::SeqCst);
        assert!(!armed, "a waker that panics in `wake`");
    }
}

/// A waker whose `drop` panics while armed (the registration's clone is
/// then its last one), and does nothing when woken.
struct PanicsOnDrop {
    armed: Arc<std::sync::atomic::AtomicBool>,
}

impl PanicsOnDrop {
    fn disarmed() -> (Arc<std::sync::atomic::AtomicBool>, Waker) {
        let armed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let waker = Waker::from(Arc::new(Self {
            armed: Arc::clone(&armed),
        }));
        (armed, waker)
    }
}

impl Wake for PanicsOnDrop {
    fn wake(self: Arc<Self>) {}
}

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        let armed = self.armed.swap(false, std::sync::atomic::Ordering::SeqCst);
        assert!(!armed, "a waker that panics when dropped");
    }
}

fn panicking_waker() -> Waker {
    Waker::from(Arc::new(PanicsOnWake {
        armed: std::sync::atomic::AtomicBool::new(true),
    }))
}

/// Polls `future` once with `waker`.
fn poll_with<F: Future + ?Sized>(future: Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(waker))
}

/// A large payload that records its drops (the receive path of a value
/// over 128 bytes differs from that of a small one).
struct Large {
    tracked: Tracked,
    _bulk: [u8; 2048],
}

/// A payload whose ledger id the tests read.
trait HasId {
    fn id(&self) -> usize;
}

impl HasId for Tracked {
    fn id(&self) -> usize {
        Tracked::id(self)
    }
}

impl HasId for Large {
    fn id(&self) -> usize {
        self.tracked.id()
    }
}

macro_rules! bounded {
    () => {
        #[test]
        fn a_panicking_iterator_in_try_send_many_gives_back_every_unit_it_took() {
            silence_planned_panics();
            #[allow(unused_mut)]
            let (mut tx, mut rx) = F::<u32>::channel();
            let mut values = PanicsAfter { ok: 1, hint: 4 };
            let unwound = catch_unwind(AssertUnwindSafe(|| tx.try_send_many(&mut values)));
            assert!(unwound.is_err(), "the iterator's panic propagates");
            assert_eq!(tx.len(), 1, "the value before the panic was sent");
            assert!(
                !tx.is_full(),
                "the units of the values never pulled are back"
            );
            for v in 10..13 {
                tx.try_send(v).unwrap();
            }
            assert!(tx.is_full(), "all four slots are usable again");
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), [0, 10, 11, 12]);
        }

        #[test]
        fn a_panicking_iterator_in_send_many_gives_back_every_unit_it_took() {
            silence_planned_panics();
            #[allow(unused_mut)]
            let (mut tx, mut rx) = F::<u32>::channel();
            // Fill the ring so that the batch also waits for a slot, then
            // panics after the reservation that ended the wait.
            for v in 0..4 {
                tx.try_send(v).unwrap();
            }
            let mut values = PanicsAfter { ok: 0, hint: 4 };
            let unwound = catch_unwind(AssertUnwindSafe(|| {
                let mut send = pin!(tx.send_many(&mut values));
                let counter = WakeCounter::new();
                assert!(counter.poll(send.as_mut()).is_pending());
                assert_eq!(rx.try_recv(), Ok(0));
                let _ = counter.poll(send.as_mut());
            }));
            assert!(unwound.is_err(), "the iterator's panic propagates");
            assert_eq!(tx.len(), 3);
            tx.try_send(4).unwrap();
            assert!(tx.is_full(), "the slot granted to the batch is back");
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2, 3, 4]);

            // The same with room: the batch reserves four and pulls one.
            let mut values = PanicsAfter { ok: 1, hint: 4 };
            let unwound = catch_unwind(AssertUnwindSafe(|| block_on(tx.send_many(&mut values))));
            assert!(unwound.is_err());
            for v in 10..13 {
                tx.try_send(v).unwrap();
            }
            assert!(tx.is_full());
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), [0, 10, 11, 12]);
        }

        #[test]
        fn a_reservation_polled_again_after_it_completed_holds_only_its_permits() {
            #[allow(unused_mut)]
            let (mut tx, mut rx) = F::<u32>::channel();
            {
                let mut reserve = pin!(tx.reserve());
                let counter = WakeCounter::new();
                let Poll::Ready(Ok(first)) = counter.poll(reserve.as_mut()) else {
                    panic!("room for a permit");
                };
                // A second poll is a second reservation, with its own permit.
                let Poll::Ready(Ok(second)) = counter.poll(reserve.as_mut()) else {
                    panic!("room for a second permit");
                };
                first.send(1).unwrap();
                drop(second);
            }
            assert_eq!(rx.try_recv(), Ok(1));
            for v in 0..4 {
                tx.try_send(v).unwrap();
            }
            assert!(tx.is_full(), "no unit is held by anything");
        }

        #[test]
        fn a_send_polled_again_after_it_completed_panics_and_holds_nothing() {
            silence_planned_panics();
            #[allow(unused_mut)]
            let (mut tx, mut rx) = F::<u32>::channel();
            let unwound = catch_unwind(AssertUnwindSafe(|| {
                let mut send = pin!(tx.send(1));
                let counter = WakeCounter::new();
                assert_eq!(counter.poll(send.as_mut()), Poll::Ready(Ok(())));
                let _ = counter.poll(send.as_mut());
            }));
            assert!(unwound.is_err(), "a clear panic, not a second send");
            assert_eq!(rx.try_recv(), Ok(1));
            for v in 0..4 {
                tx.try_send(v).unwrap();
            }
            assert!(tx.is_full());
        }

        #[test]
        fn a_waker_that_panics_when_a_receive_frees_a_slot_drops_a_small_value_once() {
            // The value in flight was neither delivered nor dropped twice:
            // a small one is dropped once, by the unwind.
            let in_flight = waker_panics_in_a_receive(|ledger| ledger.track());
            assert_eq!(in_flight, 1);
        }

        #[test]
        fn a_waker_that_panics_when_a_receive_frees_a_slot_never_drops_a_large_value_twice() {
            // A large value goes straight into the receive's result, which
            // Rust does not drop when a destructor unwinds out of the
            // function: leaked, never dropped twice.
            let in_flight = waker_panics_in_a_receive(|ledger| Large {
                tracked: ledger.track(),
                _bulk: [7; 2048],
            });
            assert!(in_flight <= 1);
        }

        /// Fills a channel of four, lets a send of a fifth value wait with a
        /// waker that panics, and receives once: the receive frees a slot,
        /// grants it to the waiting send and wakes it, which panics. Checks
        /// that the panic propagates, the waiting send got the slot, its
        /// value arrives after the three others, the channel works on, and
        /// every other value is dropped exactly once; returns how often the
        /// value in flight was dropped.
        fn waker_panics_in_a_receive<T: HasId>(make: impl Fn(&Arc<Ledger>) -> T) -> u32 {
            silence_planned_panics();
            let ledger = Ledger::new();
            #[allow(unused_mut)]
            let (mut tx, mut rx) = F::<T>::channel();
            let first = make(&ledger);
            let in_flight = first.id();
            assert!(tx.try_send(first).is_ok());
            for _ in 1..4 {
                assert!(tx.try_send(make(&ledger)).is_ok());
            }
            let waiting = make(&ledger);
            let waiting_id = waiting.id();
            {
                let mut send = pin!(tx.send(waiting));
                assert!(poll_with(send.as_mut(), &panicking_waker()).is_pending());
                let unwound = catch_unwind(AssertUnwindSafe(|| rx.try_recv().map(|_| ())));
                assert!(unwound.is_err(), "the waker's panic propagates");
                // The waiting sender was granted the freed slot.
                let counter = WakeCounter::new();
                assert!(matches!(counter.poll(send.as_mut()), Poll::Ready(Ok(()))));
            }
            let mut ids = Vec::new();
            while let Ok(value) = rx.try_recv() {
                ids.push(value.id());
            }
            assert_eq!(ids.len(), 4);
            assert_eq!(
                ids.last(),
                Some(&waiting_id),
                "the waiting sender's value arrived"
            );
            assert!(
                tx.try_send(make(&ledger)).is_ok(),
                "the channel still works"
            );
            drop((tx, rx));
            for id in (0..ledger.created()).filter(|&id| id != in_flight) {
                assert_eq!(ledger.drops_of(id), 1, "value {id} dropped once");
            }
            ledger.drops_of(in_flight)
        }
    };
}

macro_rules! many_senders_bounded {
    () => {
        #[test]
        fn a_waker_that_panics_does_not_keep_the_other_granted_senders_asleep() {
            silence_planned_panics();
            #[allow(unused_mut)]
            let (tx, mut rx) = topology::bounded::<u32, 4>();
            let permits = tx.try_reserve_many(2).unwrap();
            tx.try_send(1).unwrap();
            tx.try_send(2).unwrap();
            let (a_tx, b_tx) = (tx.clone(), tx.clone());
            let mut a = pin!(a_tx.send(3));
            let mut b = pin!(b_tx.send(4));
            let b_wakes = WakeCounter::new();
            assert!(poll_with(a.as_mut(), &panicking_waker()).is_pending());
            assert!(b_wakes.poll(b.as_mut()).is_pending());
            // Two units come back at once: both waiters are granted one,
            // and the first one's waker panics.
            let unwound = catch_unwind(AssertUnwindSafe(move || drop(permits)));
            assert!(unwound.is_err(), "the waker's panic propagates");
            assert!(
                b_wakes.wakes() > 0,
                "the second granted sender is woken all the same"
            );
            assert_eq!(WakeCounter::new().poll(a.as_mut()), Poll::Ready(Ok(())));
            assert_eq!(b_wakes.poll(b.as_mut()), Poll::Ready(Ok(())));
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2, 3, 4]);
        }

        #[test]
        fn a_reservation_whose_waker_panics_when_dropped_gives_back_its_partial_grant() {
            silence_planned_panics();
            #[allow(unused_mut)]
            let (tx, mut rx) = topology::bounded::<u32, 4>();
            for i in 0..4 {
                tx.try_send(i).unwrap();
            }
            let (armed, waker) = PanicsOnDrop::disarmed();
            let mut reserve = Box::pin(tx.reserve_many(2));
            assert!(poll_with(reserve.as_mut(), &waker).is_pending());
            // The registration's clone is now the waker's last one.
            drop(waker);
            // One of its two units: a partial grant, held with the waker.
            assert_eq!(rx.try_recv(), Ok(0));
            armed.store(true, std::sync::atomic::Ordering::SeqCst);
            let unwound = catch_unwind(AssertUnwindSafe(move || drop(reserve)));
            assert!(unwound.is_err(), "the waker's panic propagates");
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2, 3]);
            assert_eq!(
                tx.try_reserve_many(4).map(|permits| permits.len()),
                Ok(4),
                "the granted unit came back"
            );
        }

        #[test]
        fn a_receivers_waker_that_panics_at_close_keeps_no_sender_or_close_waiter_asleep() {
            silence_planned_panics();
            within(|| {
                #[allow(unused_mut)]
                let (tx, mut rx) = topology::bounded::<u32, 4>();
                // Full, and nothing to receive.
                let permits = tx.try_reserve_many(4).unwrap();
                let blocked = tx.clone();
                let sender = thread::spawn(move || blocked.send_blocking(5));
                thread::sleep(SETTLE);
                let closed_wakes = WakeCounter::new();
                let mut closed = pin!(tx.closed());
                assert!(closed_wakes.poll(closed.as_mut()).is_pending());
                let mut recv = pin!(rx.recv());
                assert!(poll_with(recv.as_mut(), &panicking_waker()).is_pending());
                let unwound = catch_unwind(AssertUnwindSafe(|| tx.close()));
                assert!(unwound.is_err(), "the waker's panic propagates");
                assert!(closed_wakes.wakes() > 0, "the close waiter is woken");
                assert!(sender.join().unwrap().is_err(), "the blocked send fails");
                drop(permits);
            });
        }

        #[test]
        fn an_owned_reservation_polled_again_after_it_completed_panics_and_holds_nothing() {
            silence_planned_panics();
            #[allow(unused_mut)]
            let (tx, mut rx) = topology::bounded::<u32, 1>();
            let spare = tx.clone();
            let unwound = catch_unwind(AssertUnwindSafe(|| {
                let mut reserve = pin!(tx.reserve_owned());
                let counter = WakeCounter::new();
                let Poll::Ready(Ok(permit)) = counter.poll(reserve.as_mut()) else {
                    panic!("room for a permit");
                };
                drop(permit);
                let _ = counter.poll(reserve.as_mut());
            }));
            assert!(unwound.is_err(), "a clear panic");
            spare.try_send(5).expect("the only slot is free");
            assert_eq!(rx.try_recv(), Ok(5));
        }
    };
}

macro_rules! many_receivers {
    () => {
        /// A receiver parks in `recv_timeout` behind registrations that
        /// will never be polled again (what `register_and_abandon` returns is
        /// kept until the end); one send must wake it at once.
        fn a_parked_receiver_is_woken_past<K>(
            register_and_abandon: impl FnOnce(&Rx<u32>) -> K + Send + 'static,
        ) {
            within(move || {
                let (tx, rx) = F::<u32>::channel();
                let parked = rx.clone();
                let _kept = register_and_abandon(&rx);
                let waiter = thread::spawn(move || {
                    let start = Instant::now();
                    (parked.recv_timeout(STRANDED), start.elapsed())
                });
                thread::sleep(SETTLE);
                tx.try_send(1).unwrap();
                let (got, waited) = waiter.join().unwrap();
                assert_eq!(got, Ok(1));
                assert!(
                    waited < PROMPTLY,
                    "woken by the send, not its deadline ({waited:?})"
                );
            });
        }

        #[test]
        fn a_forgotten_recv_future_does_not_keep_a_parked_receiver_asleep() {
            a_parked_receiver_is_woken_past(|rx| {
                let mut recv = Box::pin(rx.recv());
                assert!(WakeCounter::new().poll(recv.as_mut()).is_pending());
                std::mem::forget(recv);
            });
        }

        #[test]
        fn a_forgotten_recv_future_does_not_keep_a_blocked_receiver_asleep() {
            within(|| {
                let (tx, rx) = F::<u32>::channel();
                let blocked = rx.clone();
                let mut recv = Box::pin(rx.recv());
                assert!(WakeCounter::new().poll(recv.as_mut()).is_pending());
                std::mem::forget(recv);
                let waiter = thread::spawn(move || blocked.recv_blocking());
                thread::sleep(SETTLE);
                tx.try_send(1).unwrap();
                assert_eq!(waiter.join().unwrap(), Ok(1));
            });
        }

        #[test]
        fn a_stream_next_dropped_while_registered_does_not_keep_a_parked_receiver_asleep() {
            use futures::StreamExt;
            within(|| {
                let (tx, rx) = F::<u32>::channel();
                let parked = rx.clone();
                let mut stream = rx;
                {
                    // What `timeout(d, stream.next())` does when it fires.
                    let mut next = pin!(stream.next());
                    assert!(WakeCounter::new().poll(next.as_mut()).is_pending());
                }
                let waiter = thread::spawn(move || {
                    let start = Instant::now();
                    (parked.recv_timeout(STRANDED), start.elapsed())
                });
                thread::sleep(SETTLE);
                tx.try_send(1).unwrap();
                let (got, waited) = waiter.join().unwrap();
                assert_eq!(got, Ok(1));
                assert!(waited < PROMPTLY, "woken by the send ({waited:?})");
                // The stream still works, and received nothing twice.
                tx.try_send(2).unwrap();
                assert_eq!(block_on(stream.next()), Some(2));
            });
        }

        #[test]
        fn a_waker_that_panics_while_a_receive_passes_its_notification_on_frees_the_place() {
            silence_planned_panics();
            within(|| {
                let ledger = Ledger::new();
                let (tx, rx) = F::<Tracked>::channel();
                let rx2 = rx.clone();
                let mut first = Box::pin(rx.recv());
                let mut second = Box::pin(rx2.recv());
                let (panics, waker) = PanicsOnWake::disarmed();
                assert!(WakeCounter::new().poll(first.as_mut()).is_pending());
                assert!(poll_with(second.as_mut(), &waker).is_pending());
                // Notifies `first`; `second` is woken to look as well.
                tx.try_send(ledger.track()).unwrap();
                panics.arm();
                // `first` takes the value, then hands the notification it
                // held to `second`, whose waker panics.
                let unwound =
                    catch_unwind(AssertUnwindSafe(|| WakeCounter::new().poll(first.as_mut())));
                assert!(unwound.is_err(), "the waker's panic propagates");
                assert_eq!(ledger.live(), 0, "the value in flight was dropped");
                drop((first, second));
                // Every place is free: values go round more than a block or
                // a lap of the ring.
                for _ in 0..100 {
                    tx.try_send(ledger.track()).unwrap();
                    assert!(rx.try_recv().is_ok());
                }
                drop((tx, rx, rx2));
                ledger.assert_each_dropped_once();
            });
        }

        #[test]
        fn two_forgotten_recv_futures_do_not_keep_a_parked_receiver_asleep() {
            a_parked_receiver_is_woken_past(|rx| {
                for _ in 0..2 {
                    let mut recv = Box::pin(rx.recv());
                    assert!(WakeCounter::new().poll(recv.as_mut()).is_pending());
                    std::mem::forget(recv);
                }
            });
        }

        /// `parked` receivers park in `recv_timeout` behind `abandoned`
        /// registrations left by `poll_recv`; `parked` sends must wake each
        /// of them at once, one value each. A parked receiver woken to look
        /// takes one value, so every send that went to an abandoned
        /// registration needs a parked receiver of its own.
        fn parked_receivers_are_each_woken_past(abandoned: usize, parked: u32) {
            within(move || {
                let (tx, rx) = F::<u32>::channel();
                let mut left = vec![rx.clone(); abandoned];
                for stale in &mut left {
                    assert!(
                        stale
                            .poll_recv(&mut Context::from_waker(Waker::noop()))
                            .is_pending()
                    );
                }
                let waiters: Vec<_> = (0..parked)
                    .map(|_| {
                        let rx = rx.clone();
                        thread::spawn(move || {
                            let start = Instant::now();
                            (rx.recv_timeout(STRANDED), start.elapsed())
                        })
                    })
                    .collect();
                thread::sleep(SETTLE);
                for value in 0..parked {
                    tx.try_send(value).unwrap();
                }
                let mut got: Vec<u32> = waiters
                    .into_iter()
                    .map(|waiter| {
                        let (got, waited) = waiter.join().unwrap();
                        assert!(
                            waited < PROMPTLY,
                            "woken by a send, not its deadline ({waited:?})"
                        );
                        got.expect("a value for every parked receiver")
                    })
                    .collect();
                got.sort_unstable();
                assert_eq!(got, (0..parked).collect::<Vec<_>>());
                drop(left);
            });
        }

        #[test]
        fn abandoned_poll_recv_registrations_do_not_keep_any_of_several_parked_receivers_asleep() {
            for (abandoned, parked) in [(2, 2), (3, 3), (2, 3), (4, 2)] {
                parked_receivers_are_each_woken_past(abandoned, parked);
            }
        }

        /// Clones of `rx` whose stream registration is left behind, as by
        /// `timeout(d, stream.next())` firing, and never polled again.
        fn abandoned_streams(rx: &Rx<u32>, count: usize) -> Vec<Rx<u32>> {
            use futures::StreamExt;
            (0..count)
                .map(|_| {
                    let mut stream = rx.clone();
                    {
                        let mut next = pin!(stream.next());
                        assert!(WakeCounter::new().poll(next.as_mut()).is_pending());
                    }
                    stream
                })
                .collect()
        }

        #[test]
        fn streams_abandoned_while_registered_do_not_keep_a_parked_receiver_asleep() {
            a_parked_receiver_is_woken_past(|rx| abandoned_streams(rx, 3));
        }

        #[test]
        fn streams_abandoned_while_registered_do_not_keep_a_waiting_future_asleep() {
            let (tx, rx) = F::<u32>::channel();
            let abandoned = abandoned_streams(&rx, 3);
            let wakes = WakeCounter::new();
            let mut recv = Box::pin(rx.recv());
            assert!(wakes.poll(recv.as_mut()).is_pending());
            tx.try_send(1).unwrap();
            assert!(wakes.wakes() > 0, "the send wakes the live receiver");
            assert_eq!(wakes.poll(recv.as_mut()), Poll::Ready(Ok(1)));
            drop(abandoned);
        }
    };
}

mod spsc_bounded {
    use super::*;
    type F<T> = asyncband::spsc::Bounded<T, 4>;
    bounded!();
}

mod mpsc_bounded {
    use super::*;
    use asyncband::mpsc as topology;
    type F<T> = asyncband::mpsc::Bounded<T, 4>;
    bounded!();
    many_senders_bounded!();
}

mod mpmc_bounded {
    use super::*;
    use asyncband::mpmc as topology;
    type F<T> = asyncband::mpmc::Bounded<T, 4>;
    type Rx<T> = asyncband::mpmc::Receiver<F<T>>;
    bounded!();
    many_senders_bounded!();
    many_receivers!();
}

mod mpmc_unbounded {
    use super::*;
    type F<T> = asyncband::mpmc::Unbounded<T>;
    type Rx<T> = asyncband::mpmc::Receiver<F<T>>;
    many_receivers!();
}

/// A waker that, once armed, re-queues its task with a blocking send, as an
/// executor's waker over a bounded run queue may.
struct Requeue {
    armed: std::sync::atomic::AtomicBool,
    queue: std::sync::Mutex<Option<asyncband::mpmc::Sender<asyncband::mpmc::Bounded<u32, 1>>>>,
}

impl Wake for Requeue {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.armed.swap(false, std::sync::atomic::Ordering::SeqCst) {
            let queue = self.queue.lock().unwrap().take().unwrap();
            queue.send_blocking(7).unwrap();
        }
    }
}

#[test]
fn a_waker_that_blocks_on_another_channel_does_not_swallow_a_blocking_sends_wake_up() {
    use asyncband::mpmc;
    within(|| {
        let (a_tx, a_rx) = mpmc::bounded::<u32, 1>();
        let (b_tx, b_rx) = mpmc::bounded::<u32, 1>();
        b_tx.try_send(0).unwrap();
        let requeue = Arc::new(Requeue {
            armed: std::sync::atomic::AtomicBool::new(false),
            queue: std::sync::Mutex::new(Some(b_tx)),
        });
        let mut first = pin!(a_rx.recv());
        let mut second = pin!(a_rx.recv());
        assert!(WakeCounter::new().poll(first.as_mut()).is_pending());
        assert!(poll_with(second.as_mut(), &Waker::from(Arc::clone(&requeue))).is_pending());
        a_tx.try_send(1).unwrap();
        requeue
            .armed
            .store(true, std::sync::atomic::Ordering::SeqCst);
        // The blocked send's wait wakes a waiting receiver, `second`, whose
        // waker then blocks the sender's thread on the full channel B, from
        // inside the send's own `block_on`.
        let blocked = a_tx.clone();
        let sender = thread::spawn(move || blocked.send_blocking(2));
        asyncband_tests::wait_until(PROMPTLY, "the waker runs", || {
            !requeue.armed.load(std::sync::atomic::Ordering::SeqCst)
        });
        // Room in A, granted to the blocked send while its thread waits on
        // B; then room in B, which lets the waker return.
        assert_eq!(a_rx.try_recv(), Ok(1));
        thread::sleep(SETTLE);
        assert_eq!(b_rx.recv_blocking(), Ok(0));
        assert_eq!(sender.join().unwrap(), Ok(()), "the send on A completes");
        assert_eq!(a_rx.try_recv(), Ok(2));
        assert_eq!(b_rx.try_recv(), Ok(7));
    });
}
