//! The auto-trait matrix, in the style of tokio's `tests/async_send_sync.rs`:
//! compile-time checks that endpoints, futures and permits are `Send`,
//! `Sync` and `Unpin` exactly as API.md says.
//!
//! - Endpoints are `Send + Sync + Unpin` when `T: Send` (even when `T` is not
//!   `Sync`), and neither `Send` nor `Sync` when `T` is not `Send`.
//! - The futures of send, receive, reserve and close are `Send` when
//!   `T: Send`, not `Send` otherwise, and never `Unpin`: each embeds its
//!   intrusive wait node.
//! - Every kind of permit (`Permit`, `Permits`, `OwnedPermit`) is `Send`
//!   when `T: Send`, and not otherwise.
//! - Every public type is `Debug` without `T: Debug`.
//! - Endpoints, weak endpoints, permits and futures are `UnwindSafe` and
//!   `RefUnwindSafe` (a send future when its value is): the channel keeps
//!   its invariants across an unwind.
//!
//! The checks run when this file compiles; the one test below only gives the
//! target something to run.

use std::cell::Cell;
use std::error::Error;
use std::fmt::{Debug, Display};
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::rc::Rc;

use asyncband::error::{
    RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
};
use asyncband::future::{
    ClosedFuture, RecvFuture, RecvManyFuture, ReserveFuture, ReserveManyFuture, ReserveOwnedFuture,
    SendFuture,
};
use static_assertions::{assert_impl_all, assert_not_impl_any};

/// `Send + Sync`, and not `Debug`.
struct Opaque(#[allow(dead_code)] u8);
/// `Send` but not `Sync`.
type SendOnly = Cell<u8>;
/// Neither `Send` nor `Sync`.
type Local = Rc<u8>;

/// Payload-independent facts and the `Send` payloads, for every flavour.
macro_rules! every_flavour {
    () => {
        // Endpoints: Send + Sync + Unpin + Debug when T: Send.
        assert_impl_all!(Sender<F<u8>>: Send, Sync, Unpin, Debug);
        assert_impl_all!(Receiver<F<u8>>: Send, Sync, Unpin, Debug);
        assert_impl_all!(Sender<F<Opaque>>: Send, Sync, Unpin, Debug);
        assert_impl_all!(Receiver<F<Opaque>>: Send, Sync, Unpin, Debug);
        assert_impl_all!(Sender<F<SendOnly>>: Send, Sync, Unpin);
        assert_impl_all!(Receiver<F<SendOnly>>: Send, Sync, Unpin);
        // ... and neither Send nor Sync when T is not Send; still Unpin.
        assert_not_impl_any!(Sender<F<Local>>: Send, Sync);
        assert_not_impl_any!(Receiver<F<Local>>: Send, Sync);
        assert_impl_all!(Sender<F<Local>>: Unpin);
        assert_impl_all!(Receiver<F<Local>>: Unpin);

        // Futures: Send when T: Send, never Unpin, Debug without T: Debug.
        assert_impl_all!(SendFuture<'static, F<Opaque>>: Send, Debug);
        assert_impl_all!(RecvFuture<'static, F<Opaque>>: Send, Debug);
        assert_impl_all!(RecvManyFuture<'static, F<Opaque>>: Send, Debug);
        assert_impl_all!(ClosedFuture<'static, F<Opaque>>: Send, Debug);
        assert_impl_all!(SendFuture<'static, F<SendOnly>>: Send);
        assert_impl_all!(RecvFuture<'static, F<SendOnly>>: Send);
        assert_impl_all!(RecvManyFuture<'static, F<SendOnly>>: Send);
        assert_impl_all!(ClosedFuture<'static, F<SendOnly>>: Send);
        assert_not_impl_any!(SendFuture<'static, F<u8>>: Unpin);
        assert_not_impl_any!(RecvFuture<'static, F<u8>>: Unpin);
        assert_not_impl_any!(RecvManyFuture<'static, F<u8>>: Unpin);
        assert_not_impl_any!(ClosedFuture<'static, F<u8>>: Unpin);
        assert_not_impl_any!(SendFuture<'static, F<Local>>: Send, Unpin);
        assert_not_impl_any!(RecvFuture<'static, F<Local>>: Send, Unpin);
        assert_not_impl_any!(RecvManyFuture<'static, F<Local>>: Send, Unpin);
        assert_not_impl_any!(ClosedFuture<'static, F<Local>>: Send, Unpin);

        // Unwind safety, whatever the payload (a send future holds one).
        assert_impl_all!(Sender<F<SendOnly>>: UnwindSafe, RefUnwindSafe);
        assert_impl_all!(Receiver<F<SendOnly>>: UnwindSafe, RefUnwindSafe);
        assert_impl_all!(RecvFuture<'static, F<SendOnly>>: UnwindSafe, RefUnwindSafe);
        assert_impl_all!(ClosedFuture<'static, F<SendOnly>>: UnwindSafe, RefUnwindSafe);
        assert_impl_all!(SendFuture<'static, F<u8>>: UnwindSafe, RefUnwindSafe);
        assert_not_impl_any!(SendFuture<'static, F<&'static mut u8>>: UnwindSafe);
    };
}

/// Reservations and permits of the bounded flavours.
macro_rules! bounded {
    () => {
        assert_impl_all!(ReserveFuture<'static, F<Opaque>>: Send, Debug);
        assert_impl_all!(ReserveManyFuture<'static, F<Opaque>>: Send, Debug);
        assert_impl_all!(ReserveFuture<'static, F<SendOnly>>: Send);
        assert_impl_all!(ReserveManyFuture<'static, F<SendOnly>>: Send);
        assert_not_impl_any!(ReserveFuture<'static, F<u8>>: Unpin);
        assert_not_impl_any!(ReserveManyFuture<'static, F<u8>>: Unpin);
        assert_not_impl_any!(ReserveFuture<'static, F<Local>>: Send, Unpin);
        assert_not_impl_any!(ReserveManyFuture<'static, F<Local>>: Send, Unpin);

        assert_impl_all!(Permit<'static, F<Opaque>>: Send, Debug);
        assert_impl_all!(Permits<'static, F<Opaque>>: Send, Debug);
        assert_impl_all!(Permit<'static, F<SendOnly>>: Send);
        assert_impl_all!(Permits<'static, F<SendOnly>>: Send);
        assert_not_impl_any!(Permit<'static, F<Local>>: Send, Sync);
        assert_not_impl_any!(Permits<'static, F<Local>>: Send, Sync);

        assert_impl_all!(Permit<'static, F<SendOnly>>: UnwindSafe, RefUnwindSafe);
        assert_impl_all!(Permits<'static, F<SendOnly>>: UnwindSafe, RefUnwindSafe);
        assert_impl_all!(ReserveFuture<'static, F<SendOnly>>: UnwindSafe, RefUnwindSafe);
        assert_impl_all!(ReserveManyFuture<'static, F<SendOnly>>: UnwindSafe, RefUnwindSafe);
    };
}

/// Weak senders, of the flavours with cloneable senders.
macro_rules! many_senders {
    () => {
        assert_impl_all!(WeakSender<F<Opaque>>: Send, Sync, Unpin, Clone, Debug);
        assert_impl_all!(WeakSender<F<SendOnly>>: Send, Sync);
        assert_not_impl_any!(WeakSender<F<Local>>: Send, Sync);
        assert_impl_all!(Sender<F<Opaque>>: Clone);
        assert_impl_all!(WeakSender<F<SendOnly>>: UnwindSafe, RefUnwindSafe);
    };
}

/// Weak receivers, of the flavours with cloneable receivers.
macro_rules! many_receivers {
    () => {
        assert_impl_all!(WeakReceiver<F<Opaque>>: Send, Sync, Unpin, Clone, Debug);
        assert_impl_all!(WeakReceiver<F<SendOnly>>: Send, Sync, UnwindSafe, RefUnwindSafe);
        assert_not_impl_any!(WeakReceiver<F<Local>>: Send, Sync);
        assert_impl_all!(Receiver<F<Opaque>>: Clone);
    };
}

/// Owned permits, of the bounded flavours with cloneable senders.
macro_rules! many_senders_bounded {
    () => {
        assert_impl_all!(OwnedPermit<F<Opaque>>: Send, Unpin, Debug);
        assert_impl_all!(OwnedPermit<F<SendOnly>>: Send);
        assert_not_impl_any!(OwnedPermit<F<Local>>: Send, Sync);
        assert_impl_all!(ReserveOwnedFuture<F<Opaque>>: Send, Debug);
        assert_impl_all!(ReserveOwnedFuture<F<SendOnly>>: Send);
        assert_not_impl_any!(ReserveOwnedFuture<F<u8>>: Unpin);
        assert_not_impl_any!(ReserveOwnedFuture<F<Local>>: Send, Unpin);
        assert_impl_all!(OwnedPermit<F<SendOnly>>: UnwindSafe, RefUnwindSafe);
        assert_impl_all!(ReserveOwnedFuture<F<SendOnly>>: UnwindSafe, RefUnwindSafe);
    };
}

mod spsc_bounded {
    use super::*;
    use asyncband::spsc::{Permit, Permits, Receiver, Sender};
    type F<T> = asyncband::spsc::Bounded<T, 4>;
    every_flavour!();
    bounded!();
    // The single sides are not Clone: one endpoint each, by type.
    assert_not_impl_any!(Sender<F<u8>>: Clone);
    assert_not_impl_any!(Receiver<F<u8>>: Clone);
}

mod spsc_unbounded {
    use super::*;
    use asyncband::spsc::{Receiver, Sender};
    type F<T> = asyncband::spsc::Unbounded<T>;
    every_flavour!();
    assert_not_impl_any!(Sender<F<u8>>: Clone);
    assert_not_impl_any!(Receiver<F<u8>>: Clone);
}

mod mpsc_bounded {
    use super::*;
    use asyncband::mpsc::{OwnedPermit, Permit, Permits, Receiver, Sender, WeakSender};
    type F<T> = asyncband::mpsc::Bounded<T, 4>;
    every_flavour!();
    bounded!();
    many_senders!();
    many_senders_bounded!();
    assert_not_impl_any!(Receiver<F<u8>>: Clone);
}

mod mpsc_unbounded {
    use super::*;
    use asyncband::mpsc::{Receiver, Sender, WeakSender};
    type F<T> = asyncband::mpsc::Unbounded<T>;
    every_flavour!();
    many_senders!();
    assert_not_impl_any!(Receiver<F<u8>>: Clone);
}

mod mpmc_bounded {
    use super::*;
    use asyncband::mpmc::{
        OwnedPermit, Permit, Permits, Receiver, Sender, WeakReceiver, WeakSender,
    };
    type F<T> = asyncband::mpmc::Bounded<T, 4>;
    every_flavour!();
    bounded!();
    many_senders!();
    many_receivers!();
    many_senders_bounded!();
    assert_impl_all!(Receiver<F<Opaque>>: Clone);
}

mod mpmc_unbounded {
    use super::*;
    use asyncband::mpmc::{Receiver, Sender, WeakReceiver, WeakSender};
    type F<T> = asyncband::mpmc::Unbounded<T>;
    every_flavour!();
    many_senders!();
    many_receivers!();
    assert_impl_all!(Receiver<F<Opaque>>: Clone);
}

// The errors: Debug, Display and Error without `T: Debug`; Send and Sync
// when `T` is; `PartialEq`, `Eq`, `Clone`, and `Copy` where no `T` is held.
assert_impl_all!(SendError<Opaque>: Debug, Display, Error, Send, Sync, Unpin);
assert_impl_all!(TrySendError<Opaque>: Debug, Display, Error, Send, Sync, Unpin);
assert_impl_all!(SendTimeoutError<Opaque>: Debug, Display, Error, Send, Sync, Unpin);
assert_impl_all!(SendError<u8>: PartialEq, Eq, Clone, Copy);
assert_impl_all!(TrySendError<u8>: PartialEq, Eq, Clone, Copy);
assert_impl_all!(SendTimeoutError<u8>: PartialEq, Eq, Clone, Copy);
assert_impl_all!(SendError<String>: PartialEq, Eq, Clone);
assert_impl_all!(RecvError: Debug, Display, Error, Send, Sync, PartialEq, Eq, Clone, Copy);
assert_impl_all!(TryRecvError: Debug, Display, Error, Send, Sync, PartialEq, Eq, Clone, Copy);
assert_impl_all!(RecvTimeoutError: Debug, Display, Error, Send, Sync, PartialEq, Eq, Clone, Copy);
assert_not_impl_any!(SendError<Local>: Send, Sync);

#[test]
fn the_auto_trait_matrix_compiles() {
    // Every assertion in this file is checked at compile time.
}

/// Code generic over flavours, with bounds that name only `asyncband`'s
/// documented items: a receiver moved into a thread and into a task, a
/// sender into a task, a spin receiver into a thread.
mod generic_code {
    use asyncband::arity::{Many, One};
    use asyncband::wait::Spin;
    use asyncband::{AnyFlavour, Flavour, mpmc, mpsc, spsc};

    fn drain_on_a_thread<F>(mut rx: mpsc::Receiver<F>) -> std::thread::JoinHandle<usize>
    where
        F: Flavour<Item = u64, Senders = Many, Receivers = One> + 'static,
    {
        std::thread::spawn(move || rx.iter().count())
    }

    fn drain_in_a_task<F>(mut rx: mpsc::Receiver<F>) -> tokio::task::JoinHandle<usize>
    where
        F: Flavour<Item = u64, Senders = Many, Receivers = One> + 'static,
    {
        tokio::spawn(async move {
            let mut count = 0;
            while rx.recv().await.is_ok() {
                count += 1;
            }
            count
        })
    }

    fn send_in_a_task<F>(tx: mpmc::Sender<F>, values: u64) -> tokio::task::JoinHandle<()>
    where
        F: Flavour<Item = u64, Senders = Many, Receivers = Many> + 'static,
    {
        tokio::spawn(async move {
            for value in 0..values {
                tx.send(value).await.unwrap();
            }
        })
    }

    fn spin_on_a_thread<F>(mut rx: spsc::Receiver<F>) -> std::thread::JoinHandle<u64>
    where
        F: AnyFlavour<Item = u64, Senders = One, Receivers = One> + 'static,
    {
        std::thread::spawn(move || rx.iter().sum())
    }

    #[test]
    fn generic_workers_move_endpoints_into_threads_and_tasks() {
        let runtime = asyncband_tests::multi_thread(2);
        let (tx, rx) = mpsc::bounded::<u64, 4>();
        let thread = drain_on_a_thread(rx);
        for value in 0..10 {
            tx.send_blocking(value).unwrap();
        }
        drop(tx);
        assert_eq!(thread.join().unwrap(), 10);

        let (tx, rx) = mpsc::unbounded::<u64>();
        let (all_tx, all_rx) = mpmc::bounded::<u64, 2>();
        runtime.block_on(async move {
            let task = drain_in_a_task(rx);
            let sender = send_in_a_task(all_tx, 5);
            for _ in 0..5 {
                tx.send(all_rx.recv().await.unwrap()).await.unwrap();
            }
            sender.await.unwrap();
            drop(tx);
            assert_eq!(task.await.unwrap(), 5);
        });

        let (mut tx, rx) = spsc::Bounded::<u64, 8, { usize::MAX }, Spin>::channel();
        let thread = spin_on_a_thread(rx);
        for value in 1..=4 {
            tx.send_blocking(value).unwrap();
        }
        drop(tx);
        assert_eq!(thread.join().unwrap(), 10);
    }
}
