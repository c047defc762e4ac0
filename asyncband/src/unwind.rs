//! Unwind safety of endpoints, permits and futures.
//!
//! Every place where user code runs while the channel holds something for
//! the caller (an iterator in `send_many`, `Waker::wake`, `clone` and `drop`,
//! `T::drop` in the last receiver's drain) gives it back on unwind, as the
//! crate docs' Panics and misuse say; no lock or busy flag stays taken
//! (`wait::Cell` releases its slot, `wait::Queue`'s list is consistent
//! wherever user code runs under its lock).
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
