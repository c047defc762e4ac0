//! The futures returned by the async operations of the endpoints.
//!
//! They are runtime-agnostic (any executor, or `futures::executor`), `Send`
//! when the payload is, and `!Unpin`: each embeds its place in the wait list,
//! so waiting allocates nothing. Pin them (`std::pin::pin!`, `Box::pin`, or
//! just `.await` them) to poll by hand.
//!
//! # Cancel safety
//!
//! Every one of them can be dropped at any point (`select!`, timeouts)
//! without losing a value or a wake-up: an unsent value stays in the future
//! and is dropped with it; a value is taken only in the poll that returns it;
//! capacity or a wake-up granted to a dropped future passes to the next
//! waiter.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use asyncband_core::chan::Chan;
use asyncband_core::future::{Closed, Recv, Reserve, Send};
use asyncband_core::storage::Capacity;

use crate::error::{RecvError, SendError};
use crate::flavour::Flavour;
use crate::permit::{Permit, Permits};

pub use crate::owned::ReserveOwnedFuture;

/// Sends one value, waiting for room. Created by `Sender::send`.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
/// use futures::executor::block_on;
///
/// let (tx, mut rx) = mpsc::bounded::<u8, 1>();
/// block_on(tx.send(1)).unwrap();
/// assert_eq!(rx.try_recv(), Ok(1));
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct SendFuture<'a, F: Flavour> {
    pub(crate) inner: Send<F::Storage, &'a Chan<F::Storage>>,
}

/// Receives one value, waiting for one. Created by `Receiver::recv`.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
/// use futures::executor::block_on;
///
/// let (tx, mut rx) = mpsc::bounded::<u8, 1>();
/// tx.try_send(1).unwrap();
/// assert_eq!(block_on(rx.recv()), Ok(1));
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct RecvFuture<'a, F: Flavour> {
    pub(crate) inner: Recv<F::Storage, &'a Chan<F::Storage>>,
}

/// Waits for at least one value, then takes a batch. Created by
/// `Receiver::recv_many`.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
/// use futures::executor::block_on;
///
/// let (tx, mut rx) = mpsc::bounded::<u8, 4>();
/// tx.try_send(1).unwrap();
/// tx.try_send(2).unwrap();
/// let mut buf = Vec::new();
/// assert_eq!(block_on(rx.recv_many(&mut buf, 8)), 2);
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct RecvManyFuture<'a, F: Flavour> {
    pub(crate) inner: Recv<F::Storage, &'a Chan<F::Storage>>,
    pub(crate) chan: &'a Chan<F::Storage>,
    pub(crate) buf: &'a mut Vec<F::Item>,
    pub(crate) limit: usize,
}

/// Reserves one slot, waiting for it. Created by `Sender::reserve`.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
/// use futures::executor::block_on;
///
/// let (tx, mut rx) = mpsc::bounded::<u8, 1>();
/// block_on(tx.reserve()).unwrap().send(1).unwrap();
/// assert_eq!(rx.try_recv(), Ok(1));
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct ReserveFuture<'a, F: Flavour<Storage: Capacity>> {
    pub(crate) inner: Reserve<F::Storage, &'a Chan<F::Storage>>,
}

/// Reserves several slots, waiting for them. Created by
/// `Sender::reserve_many`.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
/// use futures::executor::block_on;
///
/// let (tx, _rx) = mpsc::bounded::<u8, 4>();
/// assert_eq!(block_on(tx.reserve_many(3)).unwrap().len(), 3);
/// assert!(block_on(tx.reserve_many(5)).is_err());
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct ReserveManyFuture<'a, F: Flavour<Storage: Capacity>> {
    chan: &'a Chan<F::Storage>,
    n: usize,
    inner: Option<Reserve<F::Storage, &'a Chan<F::Storage>>>,
}

/// Resolves once the channel is closed or every receiver is gone. Created
/// by `Sender::closed`.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
/// use futures::executor::block_on;
///
/// let (tx, rx) = mpsc::bounded::<u8, 1>();
/// drop(rx);
/// block_on(tx.closed());
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct ClosedFuture<'a, F: Flavour> {
    pub(crate) inner: Closed<F::Storage, &'a Chan<F::Storage>>,
}

impl<F: Flavour> Future for SendFuture<'_, F> {
    type Output = Result<(), SendError<F::Item>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `inner` is structurally pinned: never moved out of `self`.
        unsafe { self.map_unchecked_mut(|this| &mut this.inner) }.poll(cx)
    }
}

impl<F: Flavour> Future for RecvFuture<'_, F> {
    type Output = Result<F::Item, RecvError>;

    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "the receive's ready path; LLVM kept this poll out of line, a call with six saved registers per message"
    )]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `inner` is structurally pinned.
        unsafe { self.map_unchecked_mut(|this| &mut this.inner) }.poll(cx)
    }
}

impl<F: Flavour> Future for RecvManyFuture<'_, F> {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        // SAFETY: `inner` is structurally pinned; the other fields are not
        // and are only used through `&mut`.
        let this = unsafe { self.get_unchecked_mut() };
        if this.limit == 0 {
            return Poll::Ready(0);
        }
        // SAFETY: as above.
        match unsafe { Pin::new_unchecked(&mut this.inner) }.poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(RecvError)) => Poll::Ready(0),
            Poll::Ready(Ok(first)) => {
                this.buf.push(first);
                // SAFETY: the future holds the receiver's borrow (exclusive
                // for a single receiver), the consumer-side contract.
                let more = unsafe { crate::batch::drain_into(this.chan, this.buf, this.limit - 1) };
                Poll::Ready(1 + more)
            }
        }
    }
}

impl<'a, F: Flavour<Storage: Capacity>> Future for ReserveFuture<'a, F> {
    type Output = Result<Permit<'a, F>, SendError<()>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `inner` is structurally pinned.
        let inner = unsafe { self.map_unchecked_mut(|this| &mut this.inner) };
        let chan = inner.handle();
        inner.poll(cx).map_ok(|()| Permit::new(chan))
    }
}

impl<'a, F: Flavour<Storage: Capacity>> ReserveManyFuture<'a, F> {
    pub(crate) fn new(chan: &'a Chan<F::Storage>, n: usize) -> Self {
        let fits = (1..=<F::Storage as Capacity>::CAP).contains(&n);
        // SAFETY: the future is created from the sender's borrow (exclusive
        // for a single sender) and holds it for its whole life.
        let inner = fits.then(|| unsafe { Reserve::new(chan, n) });
        Self { chan, n, inner }
    }
}

impl<'a, F: Flavour<Storage: Capacity>> Future for ReserveManyFuture<'a, F> {
    type Output = Result<Permits<'a, F>, SendError<()>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `inner` is structurally pinned; `chan` and `n` are Copy.
        let this = unsafe { self.get_unchecked_mut() };
        let (chan, n) = (this.chan, this.n);
        if n == 0 {
            // Nothing to wait for, but a closed channel is still an error.
            return Poll::Ready(if chan.is_closed() {
                Err(SendError(()))
            } else {
                Ok(Permits::new(chan, 0))
            });
        }
        // SAFETY: as above.
        match unsafe { Pin::new_unchecked(&mut this.inner) }.as_pin_mut() {
            // More than the capacity can never be granted: an error, not a hang.
            None => Poll::Ready(Err(SendError(()))),
            Some(inner) => inner.poll(cx).map_ok(|()| Permits::new(chan, n)),
        }
    }
}

impl<F: Flavour> Future for ClosedFuture<'_, F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: `inner` is structurally pinned.
        unsafe { self.map_unchecked_mut(|this| &mut this.inner) }.poll(cx)
    }
}

macro_rules! debug_future {
    ($name:ident $(, $bound:path)?) => {
        impl<F: Flavour $(<Storage: $bound>)?> fmt::Debug for $name<'_, F> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).finish_non_exhaustive()
            }
        }
    };
}

debug_future!(SendFuture);
debug_future!(RecvFuture);
debug_future!(RecvManyFuture);
debug_future!(ClosedFuture);
debug_future!(ReserveFuture, Capacity);
debug_future!(ReserveManyFuture, Capacity);
