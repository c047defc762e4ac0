//! The futures of a channel's waiting operations (send, receive, receive
//! many, wait for the close), each owning its waiter node and `registered`
//! flag and driving the channel's `poll_*` method. The node is embedded, so
//! waiting allocates nothing (hence `!Unpin`); [`Send`] and [`Recv`] build
//! theirs when they first wait. Every one is cancel-safe: dropping it loses
//! no value (an unsent send still owns its value; a receive takes one only
//! in the poll that returns it) and no wake-up (grants are passed on).

use std::fmt;
use std::future::Future;
use std::marker::PhantomPinned;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::{Chan, ClosingNode, RxNode, RxWait, TxNode};
use crate::error::{RecvError, SendError};
use crate::slot::is_large;
use crate::storage::Storage;
use crate::wait::WaitSet;

/// Sends one value, waiting for capacity.
///
/// # Cancel safety
///
/// Dropping the future before it completes drops the value it still holds
/// (it was not sent) and passes on any capacity it had been granted.
pub struct Send<'a, S: Storage> {
    chan: &'a Chan<S>,
    cursor: &'a mut S::ProducerCursor,
    value: Option<S::Item>,
    node: LazyNode<TxNode<S>>,
    registered: bool,
    _pinned: PhantomPinned,
}

impl<'a, S: Storage> Send<'a, S> {
    /// A future that sends `value` through `chan` with `cursor`.
    ///
    /// # Safety
    ///
    /// The producer contract of [`Chan`] for `cursor`.
    pub(crate) unsafe fn new(
        chan: &'a Chan<S>,
        cursor: &'a mut S::ProducerCursor,
        value: S::Item,
    ) -> Self {
        Self {
            chan,
            cursor,
            value: Some(value),
            // A large value's send builds its node at once, beside its copy.
            node: if is_large::<S::Item>() {
                LazyNode::built(TxNode::<S>::default())
            } else {
                LazyNode::new()
            },
            registered: false,
            _pinned: PhantomPinned,
        }
    }

    /// Cancels the future and takes back the value if it was not sent.
    #[must_use = "the value that was not sent is handed back; ignoring it drops it"]
    pub(crate) fn take_value(self: Pin<&mut Self>) -> Option<S::Item> {
        // SAFETY: `node` is never moved out of the pinned future.
        let this = unsafe { self.get_unchecked_mut() };
        this.cancel();
        this.value.take()
    }

    /// Withdraws the node, if built, passing on units granted to it.
    fn cancel(&mut self) {
        // SAFETY: pinned (or dropped in place) with the future; this chan's.
        if let Some(node) = unsafe { Pin::new_unchecked(&self.node) }.get() {
            // SAFETY: as above.
            unsafe { self.chan.cancel_send(node, &mut self.registered) };
        }
    }
}

impl<S: Storage> Future for Send<'_, S> {
    type Output = Result<(), SendError<S::Item>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `node` is never moved out of the pinned future.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: the node is pinned with us: it is never moved out.
        let node = unsafe { Pin::new_unchecked(&mut this.node) };
        // SAFETY: the node is pinned, only used with this chan; the producer
        // contract from `new`.
        unsafe {
            this.chan.poll_send(
                this.cursor,
                || node.get_or_build(TxNode::<S>::default),
                &mut this.registered,
                &mut this.value,
                cx,
            )
        }
    }
}

impl<S: Storage> Drop for Send<'_, S> {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Receives one value, waiting for one.
///
/// # Cancel safety
///
/// A value is taken only in the poll that returns it, so dropping the
/// future loses no value; a wake-up it received is passed to the next
/// waiting receiver.
pub struct Recv<'a, S: Storage> {
    chan: &'a Chan<S>,
    cursor: &'a mut S::Cursor,
    node: LazyNode<RxNode<S>>,
    registered: bool,
    _pinned: PhantomPinned,
}

impl<'a, S: Storage> Recv<'a, S> {
    /// A future that receives from `chan` with the consumer's `cursor`.
    ///
    /// # Safety
    ///
    /// The consumer contract of [`Chan`] for `cursor`.
    pub(crate) unsafe fn new(chan: &'a Chan<S>, cursor: &'a mut S::Cursor) -> Self {
        Self {
            chan,
            cursor,
            node: LazyNode::new(),
            registered: false,
            _pinned: PhantomPinned,
        }
    }

    /// A future that receives from `chan` for a thread that parks: its node
    /// always comes back for a notification ([`WaitSet::notify`]).
    ///
    /// # Safety
    ///
    /// As for [`Recv::new`]; the future is driven to completion or dropped
    /// by the thread that parks on it.
    pub(crate) unsafe fn parked(chan: &'a Chan<S>, cursor: &'a mut S::Cursor) -> Self {
        Self {
            chan,
            cursor,
            // Built at once: a thread parks only after spinning, so it waits.
            node: LazyNode::built(RxWait::<S>::parked_node()),
            registered: false,
            _pinned: PhantomPinned,
        }
    }
}

impl<S: Storage> Future for Recv<'_, S> {
    type Output = Result<S::Item, RecvError>;

    #[inline(always)]
    #[allow(clippy::inline_always, reason = "the ready path of every receive")]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `node` is never moved out of the pinned future.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: the node is pinned with us: it is never moved out.
        let node = unsafe { Pin::new_unchecked(&mut this.node) };
        // SAFETY: as in `Send::poll`, with the consumer contract.
        unsafe {
            this.chan.poll_recv(
                this.cursor,
                || node.get_or_build(RxNode::<S>::default),
                &mut this.registered,
                cx,
            )
        }
    }
}

impl<S: Storage> Drop for Recv<'_, S> {
    fn drop(&mut self) {
        // SAFETY: dropped in place, so still pinned; only used with this chan.
        if let Some(node) = unsafe { Pin::new_unchecked(&self.node) }.get() {
            // Dropped: whatever woke it last, it did not look.
            // SAFETY: as above.
            unsafe { self.chan.abandon_recv(node, &mut self.registered) };
        }
    }
}

/// Resolves once the channel is closed or every receiver is gone.
///
/// # Cancel safety
///
/// Holds nothing; dropping it only leaves the wait list.
pub struct Closed<'a, S: Storage> {
    chan: &'a Chan<S>,
    node: ClosingNode<S>,
    registered: bool,
}

impl<'a, S: Storage> Closed<'a, S> {
    /// A future that waits for `chan` to close.
    pub(crate) fn new(chan: &'a Chan<S>) -> Self {
        Self {
            chan,
            node: ClosingNode::<S>::default(),
            registered: false,
        }
    }
}

impl<S: Storage> Future for Closed<'_, S> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: `node` is never moved out of the pinned future.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: the node is pinned with us and only used with this chan.
        unsafe {
            this.chan
                .poll_closed(Pin::new_unchecked(&this.node), &mut this.registered, cx)
        }
    }
}

impl<S: Storage> Drop for Closed<'_, S> {
    fn drop(&mut self) {
        // SAFETY: dropped in place, so still pinned; only used with this chan.
        unsafe {
            self.chan
                .cancel_closed(Pin::new_unchecked(&self.node), &mut self.registered);
        }
    }
}

/// `Debug` for the futures that wait on one node: whether they wait.
macro_rules! debug_waiting {
    ($($future:ident),*) => {$(
        impl<S: Storage> fmt::Debug for $future<'_, S> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($future))
                    .field("waiting", &self.registered)
                    .finish_non_exhaustive()
            }
        }
    )*};
}

debug_waiting!(Send, Recv, Closed);

/// Waits for one value, then takes up to `limit - 1` more that are ready;
/// resolves to how many it appended to the buffer (0 once the channel is
/// closed and drained, or when `limit` is 0).
///
/// # Cancel safety
///
/// As [`Recv`]: values are appended only by the poll that returns.
pub struct RecvMany<'a, 'b, S: Storage> {
    recv: Recv<'a, S>,
    buf: &'b mut Vec<S::Item>,
    limit: usize,
}

impl<'a, 'b, S: Storage> RecvMany<'a, 'b, S> {
    /// A future that receives into `buf` from `chan` with `cursor`.
    ///
    /// # Safety
    ///
    /// As for [`Recv::new`].
    pub(crate) unsafe fn new(
        chan: &'a Chan<S>,
        cursor: &'a mut S::Cursor,
        buf: &'b mut Vec<S::Item>,
        limit: usize,
    ) -> Self {
        Self {
            // SAFETY: forwarded from the caller.
            recv: unsafe { Recv::new(chan, cursor) },
            buf,
            limit,
        }
    }
}

impl<S: Storage> Future for RecvMany<'_, '_, S> {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        // SAFETY: `recv` is structurally pinned: never moved out of `self`;
        // `buf` and `limit` are not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        if this.limit == 0 {
            return Poll::Ready(0);
        }
        // SAFETY: as above.
        let recv = unsafe { Pin::new_unchecked(&mut this.recv) };
        let Ok(first) = std::task::ready!(recv.poll(cx)) else {
            return Poll::Ready(0);
        };
        let before = this.buf.len();
        this.buf.push(first);
        // SAFETY: the consumer contract `new` was made with holds for the
        // future's life.
        let ready =
            std::iter::from_fn(|| unsafe { this.recv.chan.try_recv(this.recv.cursor) }.ok());
        this.buf.extend(ready.take(this.limit - 1));
        Poll::Ready(this.buf.len() - before)
    }
}

impl<S: Storage> fmt::Debug for RecvMany<'_, '_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvMany")
            .field("recv", &self.recv)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

/// A future's waiter node, built when the future first waits and kept in
/// place until it drops. A free node (no bytes, no drop: a single side's
/// cell) is there from the start and its flag never touched: stored beside
/// `registered`, it would merge into a wider store that the later byte load
/// of `registered` cannot be forwarded from.
struct LazyNode<N> {
    node: MaybeUninit<N>,
    /// Whether `node` holds a node; untouched for a free node.
    built: MaybeUninit<bool>,
}

impl<N> LazyNode<N> {
    /// Whether a node costs nothing: no bytes to write, nothing to drop.
    const FREE: bool = size_of::<N>() == 0 && !std::mem::needs_drop::<N>();

    /// Whether `node` holds a node.
    fn is_built(&self) -> bool {
        // SAFETY: `built` is written at construction unless the node is free
        // (`new`, `built`).
        Self::FREE || unsafe { self.built.assume_init() }
    }
}

impl<N: Default> LazyNode<N> {
    /// No node yet, or a free one.
    fn new() -> Self {
        if Self::FREE {
            Self {
                node: MaybeUninit::new(N::default()),
                built: MaybeUninit::uninit(),
            }
        } else {
            Self {
                node: MaybeUninit::uninit(),
                built: MaybeUninit::new(false),
            }
        }
    }

    /// `node`, built already.
    fn built(node: N) -> Self {
        Self {
            node: MaybeUninit::new(node),
            built: MaybeUninit::new(true),
        }
    }

    /// The node, if it was built.
    fn get(self: Pin<&Self>) -> Option<Pin<&N>> {
        let this = self.get_ref();
        // SAFETY: `is_built` says `node` holds a node; it is pinned with us.
        this.is_built()
            .then(|| unsafe { Pin::new_unchecked(this.node.assume_init_ref()) })
    }

    /// The node, built with `build` if it was not yet.
    fn get_or_build(self: Pin<&mut Self>, build: impl FnOnce() -> N) -> Pin<&N> {
        // SAFETY: `node` is written in place, never moved out.
        let this = unsafe { self.get_unchecked_mut() };
        if !this.is_built() {
            this.node.write(build());
            this.built.write(true);
        }
        // SAFETY: built just above, before, or in `new`; pinned with us.
        unsafe { Pin::new_unchecked(this.node.assume_init_ref()) }
    }
}

impl<N> Drop for LazyNode<N> {
    fn drop(&mut self) {
        if self.is_built() {
            // SAFETY: `node` holds a node, dropped only here.
            unsafe { self.node.assume_init_drop() };
        }
    }
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests {
    use std::cell::Cell;
    use std::future::Future;
    use std::task::{Context, Waker};

    use super::{Closed, LazyNode, Recv};
    use crate::arity::{Many, One};
    use crate::chan::Chan;
    use crate::endpoint;
    use crate::ring::Ring;
    use crate::wait::WaitSet;

    type S = Ring<u8, 1, Many, One>;

    thread_local! {
        static DROPS: Cell<u32> = const { Cell::new(0) };
    }

    /// Counts its drops in `DROPS`; `0` is what `default` builds.
    #[derive(Default)]
    struct Counted(u32);

    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.with(|drops| drops.set(drops.get() + 1));
        }
    }

    #[test]
    fn a_lazy_node_is_built_once_when_first_asked_for_and_dropped_once() {
        let unbuilt = Box::pin(LazyNode::<Counted>::new());
        assert!(unbuilt.as_ref().get().is_none());
        drop(unbuilt);
        assert_eq!(DROPS.get(), 0, "nothing was built, so nothing is dropped");

        let mut lazy = Box::pin(LazyNode::new());
        let builds = Cell::new(0);
        let build = || {
            builds.set(builds.get() + 1);
            Counted(7)
        };
        let first: *const Counted = &raw const *lazy.as_mut().get_or_build(build);
        let again: *const Counted = &raw const *lazy.as_mut().get_or_build(|| unreachable!());
        assert_eq!((builds.get(), first), (1, again), "built once, in place");
        assert_eq!(lazy.as_ref().get().map(|node| node.0), Some(7));
        drop(lazy);
        assert_eq!(DROPS.get(), 1);
    }

    #[test]
    fn a_free_node_is_there_from_the_start_and_never_built() {
        let mut lazy = Box::pin(LazyNode::<()>::new());
        assert!(lazy.as_ref().get().is_some());
        lazy.as_mut()
            .get_or_build(|| unreachable!("a free node is never built"));
    }

    #[test]
    fn a_closed_future_withdraws_its_node_when_dropped() {
        let chan = Chan::<S>::new();
        let mut closed = Box::pin(Closed::new(&chan));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(closed.as_mut().poll(&mut cx).is_pending());
        assert!(chan.waiters.closed.is_waiting());
        drop(closed);
        assert!(!chan.waiters.closed.is_waiting(), "the node left");
        // Wakes whatever is still queued: under Miri, a freed node fails.
        // SAFETY: not from a producer.
        unsafe { chan.close(false) };
    }

    #[test]
    fn a_reservation_withdraws_its_node_when_dropped() {
        let (tx, _rx) = endpoint::channel::<S>();
        tx.shared().try_send(1).unwrap();
        let mut reserve = Box::pin(tx.shared().reserve(1));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(
            reserve.as_mut().poll(&mut cx).is_pending(),
            "the ring is full"
        );
        assert!(tx.chan().tx_wait().is_waiting());
        drop(reserve);
        assert!(!tx.chan().tx_wait().is_waiting(), "the node left");
    }

    /// Counts its wakes.
    struct Wakes(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for Wakes {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    impl Wakes {
        fn new() -> (std::sync::Arc<Self>, Waker) {
            let wakes = std::sync::Arc::new(Self(std::sync::atomic::AtomicUsize::new(0)));
            (std::sync::Arc::clone(&wakes), Waker::from(wakes))
        }

        fn count(&self) -> usize {
            self.0.load(std::sync::atomic::Ordering::Relaxed)
        }
    }

    /// A parked receive woken to look for a leaked one, and dropped
    /// without looking (its deadline passed as the value came), passes a
    /// notification on to the receive waiting behind it.
    fn a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on<
        S: crate::storage::Storage<Item = u32, Senders = Many, Receivers = Many>,
    >() {
        use std::pin::pin;

        let chan = Chan::<S>::new();
        let (mut leaked_cursor, mut parked_cursor, mut live_cursor) =
            (chan.cursor(), chan.cursor(), chan.cursor());
        // SAFETY: many consumers: the consumer contract binds nobody, and
        // every cursor is the same empty one.
        let mut leaked = pin!(unsafe { Recv::new(&chan, &mut leaked_cursor) });
        let mut cx = Context::from_waker(Waker::noop());
        // Registered and never polled again: to the queue, as good as
        // leaked (it is dropped when the test ends).
        assert!(leaked.as_mut().poll(&mut cx).is_pending());
        // SAFETY: as above; dropped by this thread, as on a timeout.
        let mut parked = Box::pin(unsafe { Recv::parked(&chan, &mut parked_cursor) });
        assert!(parked.as_mut().poll(&mut cx).is_pending());
        let (woken_behind, live_waker) = Wakes::new();
        // SAFETY: as above.
        let mut live = pin!(unsafe { Recv::new(&chan, &mut live_cursor) });
        assert!(
            live.as_mut()
                .poll(&mut Context::from_waker(&live_waker))
                .is_pending()
        );
        // The notification goes to the leaked receive; the parked one is
        // woken to look for it, and gives up without looking.
        // SAFETY: many producers: the cursor holds nothing.
        unsafe { chan.try_send(crate::storage::conjured(), 7) }.unwrap();
        assert_eq!(woken_behind.count(), 0);
        drop(parked);
        assert!(woken_behind.count() > 0, "the receive behind is woken");
        let polled = live.as_mut().poll(&mut Context::from_waker(&live_waker));
        assert_eq!(polled, std::task::Poll::Ready(Ok(7)));
    }

    /// As above, but the parked receive is also granted the second value's
    /// notification before it gives up: it passes that one on, the receive
    /// it wakes takes a value without using the notification and passes it
    /// on again, so each receive behind is woken and gets a value.
    fn a_parked_receive_granted_after_a_wake_to_look_loses_neither_value<
        S: crate::storage::Storage<Item = u32, Senders = Many, Receivers = Many>,
    >() {
        use std::pin::pin;
        use std::task::Poll;

        let chan = Chan::<S>::new();
        let mut cursors = [chan.cursor(), chan.cursor(), chan.cursor(), chan.cursor()];
        let [leaked_cursor, parked_cursor, first_cursor, second_cursor] = &mut cursors;
        let mut cx = Context::from_waker(Waker::noop());
        let (woken_first, first_waker) = Wakes::new();
        let (woken_second, second_waker) = Wakes::new();
        // SAFETY: many consumers: the consumer contract binds nobody, and
        // every cursor is the same empty one.
        let (mut leaked, mut parked, mut first, mut second) = unsafe {
            (
                pin!(Recv::new(&chan, leaked_cursor)),
                Box::pin(Recv::parked(&chan, parked_cursor)),
                pin!(Recv::parked(&chan, first_cursor)),
                pin!(Recv::parked(&chan, second_cursor)),
            )
        };
        assert!(leaked.as_mut().poll(&mut cx).is_pending());
        assert!(parked.as_mut().poll(&mut cx).is_pending());
        let mut first_cx = Context::from_waker(&first_waker);
        let mut second_cx = Context::from_waker(&second_waker);
        assert!(first.as_mut().poll(&mut first_cx).is_pending());
        assert!(second.as_mut().poll(&mut second_cx).is_pending());
        // 1 is notified to the leaked receive (the parked one is woken to
        // look for it), 2 to the parked one, now at the front.
        // SAFETY: many producers: the cursor holds nothing.
        unsafe {
            chan.try_send(crate::storage::conjured(), 1).unwrap();
            chan.try_send(crate::storage::conjured(), 2).unwrap();
        }
        drop(parked);
        assert!(woken_first.count() > 0, "the first receive behind is woken");
        let Poll::Ready(Ok(one)) = first.as_mut().poll(&mut first_cx) else {
            panic!("a value for the first receive");
        };
        assert!(
            woken_second.count() > 0,
            "so is the second, while a value is queued"
        );
        let Poll::Ready(Ok(other)) = second.as_mut().poll(&mut second_cx) else {
            panic!("a value for the second receive");
        };
        assert_eq!(one + other, 3, "1 and 2, once each");
    }

    #[test]
    fn a_parked_receive_granted_after_a_wake_to_look_loses_neither_value_ring_and_list() {
        a_parked_receive_granted_after_a_wake_to_look_loses_neither_value::<Ring<u32, 4, Many, Many>>(
        );
        a_parked_receive_granted_after_a_wake_to_look_loses_neither_value::<
            crate::list::List<u32, Many, Many>,
        >();
    }

    #[test]
    fn a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on_ring_and_list() {
        a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on::<Ring<u32, 4, Many, Many>>(
        );
        a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on::<
            crate::list::List<u32, Many, Many>,
        >();
    }
}
