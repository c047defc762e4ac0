//! Unwind safety of endpoints, permits and futures.
//!
//! A panic that unwinds through a channel operation leaves the channel
//! consistent: every place where user code runs while the channel holds
//! something for the caller gives it back on unwind.
//!
//! - `Iterator::next` inside `send_many` / `try_send_many`: the units
//!   reserved for values not yet pulled are returned by a guard.
//! - `Waker::wake` when a receive, a returned permit or a close wakes
//!   waiters: every waiter handed units or a notification is woken even if
//!   an earlier waker panics, and the first panic propagates afterwards. A
//!   receive whose wake panics does not deliver the value it had taken: one
//!   of up to 128 bytes is dropped, a larger one (already moved into the
//!   receive's result) is leaked; the slot it freed is granted as usual.
//! - `Waker::clone` and `Waker::drop` while a waiter registers: no lock or
//!   busy flag stays taken (`wait::Cell` releases its slot, `wait::Queue`'s
//!   list is consistent at every point where user code runs under its lock).
//! - `T::drop` while the last receiver drains: the rest are still dropped
//!   and every waiter is woken.
//!
//! So the endpoints, permits and futures are `UnwindSafe` and
//! `RefUnwindSafe`, as tokio's are: observing one after a caught panic shows
//! a channel that keeps every guarantee. (A send future holds its value, so
//! it is unwind-safe when the value is.)

use std::panic::{RefUnwindSafe, UnwindSafe};

use asyncband_core::arity::{Many, One};
use asyncband_core::storage::Capacity;

use crate::flavour::AnyFlavour;
use crate::future::{
    ClosedFuture, RecvFuture, ReserveFuture, ReserveManyFuture, ReserveOwnedFuture, SendFuture,
};
use crate::multi::{self, WeakReceiver, WeakSender};
use crate::permit::{OwnedPermit, Permit, Permits};
use crate::single;

/// Implements both traits for each listed type, under the given bounds.
macro_rules! unwind_safe {
    ($( [$($bounds:tt)*] $ty:ty ;)*) => {
        $(
            impl<$($bounds)*> UnwindSafe for $ty {}
            impl<$($bounds)*> RefUnwindSafe for $ty {}
        )*
    };
}

unwind_safe! {
    [F: AnyFlavour<Senders = One>] single::Sender<F>;
    [F: AnyFlavour<Receivers = One>] single::Receiver<F>;
    [F: AnyFlavour<Senders = Many>] multi::Sender<F>;
    [F: AnyFlavour<Receivers = Many>] multi::Receiver<F>;
    [F: AnyFlavour<Senders = Many>] WeakSender<F>;
    [F: AnyFlavour<Receivers = Many>] WeakReceiver<F>;
    ['a, F: AnyFlavour<Storage: Capacity>] Permit<'a, F>;
    ['a, F: AnyFlavour<Storage: Capacity>] Permits<'a, F>;
    [F: AnyFlavour<Senders = Many, Storage: Capacity>] OwnedPermit<F>;
    ['a, F: AnyFlavour<Item: UnwindSafe>] SendFuture<'a, F>;
    ['a, F: AnyFlavour] RecvFuture<'a, F>;
    ['a, F: AnyFlavour<Storage: Capacity>] ReserveFuture<'a, F>;
    ['a, F: AnyFlavour<Storage: Capacity>] ReserveManyFuture<'a, F>;
    [F: AnyFlavour<Senders = Many, Storage: Capacity>] ReserveOwnedFuture<F>;
    ['a, F: AnyFlavour] ClosedFuture<'a, F>;
}
