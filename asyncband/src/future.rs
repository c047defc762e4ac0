//! The futures returned by the async operations of the endpoints.
//!
//! They are runtime-agnostic (any executor, or `futures::executor`), `Send`
//! when the payload is, and `!Unpin`: each embeds its place in the wait list,
//! so waiting allocates nothing. Pin them (`std::pin::pin!`, `Box::pin`, or
//! just `.await` them) to poll by hand.
//!
//! # Cancel safety
//!
//! Every one of them can be dropped at any point without losing a value or
//! a wake-up; see [Cancellation safety](crate#cancellation-safety).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use asyncband_core::chan::{Closed, Recv, RecvMany, Send};
use asyncband_core::endpoint::{ProducerRef, Pusher, Reserve};
use asyncband_core::storage::Capacity;
use pin_project_lite::pin_project;

pub use crate::permit::ReserveOwnedFuture;

use crate::error::{RecvError, SendError};
use crate::flavour::AnyFlavour;
use crate::permit::{Permit, Permits};

/// A future around one of the core's: the struct (`#[must_use]`, its
/// `inner` pinned), a `Future` impl that polls `inner` and maps its output
/// with `$map` if given, with `$poll`'s attributes, and a `Debug` impl.
macro_rules! future {
    (
        $(#[$attr:meta])*
        $name:ident<$($a:lifetime,)? F> where [$($bound:tt)*]
        ($inner:ty) -> $output:ty $(, map $map:expr)?;
        $(#[$poll:meta])* poll
    ) => {
        pin_project! {
            $(#[$attr])*
            #[must_use = "futures do nothing unless polled"]
            pub struct $name<$($a,)? F>
            where
                $($bound)*
            {
                #[pin]
                pub(crate) inner: $inner,
            }
        }

        impl<$($a,)? F> Future for $name<$($a,)? F>
        where
            $($bound)*
        {
            type Output = $output;

            $(#[$poll])*
            fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
                self.project().inner.poll(cx)$(.map($map))?
            }
        }

        opaque_debug!([$($a,)? F] $name<$($a,)? F> where $($bound)*);
    };
}

pub(crate) use future;

future! {
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
    SendFuture<'a, F> where [F: AnyFlavour]
    (Send<'a, F::Storage>) -> Result<(), SendError<F::Item>>;
    #[inline] poll
}

future! {
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
    RecvFuture<'a, F> where [F: AnyFlavour]
    (Recv<'a, F::Storage>) -> Result<F::Item, RecvError>;
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "the receive's ready path; out of line it is a call with six saved registers per message"
    )]
    poll
}

future! {
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
    RecvManyFuture<'a, F> where [F: AnyFlavour]
    (RecvMany<'a, 'a, F::Storage>) -> usize;
    poll
}

future! {
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
    ReserveFuture<'a, F> where [F: AnyFlavour, F::Storage: Capacity]
    (Reserve<Pusher<'a, F::Storage>>) -> Result<Permit<'a, F>, SendError<()>>,
    map |result| result.map(Permit::new).map_err(|_| SendError(()));
    #[inline] poll
}

future! {
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
    ClosedFuture<'a, F> where [F: AnyFlavour]
    (Closed<'a, F::Storage>) -> ();
    poll
}

pin_project! {
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
    pub struct ReserveManyFuture<'a, F>
    where
        F: AnyFlavour,
        F::Storage: Capacity,
    {
        // Waits for `1 <= n <= CAP` units; `None` for any other `n`.
        #[pin]
        inner: Option<Reserve<Pusher<'a, F::Storage>>>,
        // For `n == 0`: the right to check, when polled, that the channel
        // is open.
        now: Option<ProducerRef<'a, F::Storage>>,
    }
}

impl<'a, F: AnyFlavour<Storage: Capacity>> ReserveManyFuture<'a, F> {
    pub(crate) fn new(tx: ProducerRef<'a, F::Storage>, n: usize) -> Self {
        if (1..=<F::Storage as Capacity>::CAP).contains(&n) {
            Self {
                inner: Some(tx.reserve(n)),
                now: None,
            }
        } else {
            Self {
                inner: None,
                now: (n == 0).then_some(tx),
            }
        }
    }
}

impl<'a, F: AnyFlavour<Storage: Capacity>> Future for ReserveManyFuture<'a, F> {
    type Output = Result<Permits<'a, F>, SendError<()>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Some(inner) = this.inner.as_pin_mut() {
            return inner
                .poll(cx)
                .map(|result| result.map(Permits::new).map_err(|_| SendError(())));
        }
        Poll::Ready(match this.now.take() {
            // Nothing to wait for, but a closed channel is still an error.
            Some(tx) => tx
                .try_reserve(0)
                .map(Permits::new)
                .map_err(|_| SendError(())),
            // More than the capacity can never be granted: an error, not a
            // hang.
            None => Err(SendError(())),
        })
    }
}

opaque_debug!([F: AnyFlavour<Storage: Capacity>] ReserveManyFuture<'_, F>);
