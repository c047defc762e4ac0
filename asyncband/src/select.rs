//! Waiting on several channel operations at once, on a thread.
//!
//! Two forms, both blocking (for async code see [Async
//! select](crate#select)):
//!
//! - the [`select!`](crate::select!) and
//!   [`select_biased!`](crate::select_biased!) macros: a fixed set of
//!   operations, written out, of any flavours and payload types:
//!   `recv`, `send` and `reserve` arms and an optional `default`;
//! - [`Select`]: a set of receivers of one type, sized at run time.
//!
//! # Exactly one
//!
//! Exactly one operation completes; the others have no effect. Each arm is
//! one of the channel's cancel-safe futures ([`recv`](crate::mpsc::Receiver::recv),
//! [`reserve`](crate::mpsc::Sender::reserve)); the select polls them in turn
//! with one waker that unparks the thread, takes the first that is ready,
//! and drops the others, which withdraws them ([Cancellation
//! safety](crate#cancellation-safety)). A `send` arm waits for a slot like a
//! `reserve` arm (an unbounded channel always has one) and evaluates its
//! value only when it is chosen, so a send not chosen sent and built nothing.
//!
//! # Fairness
//!
//! `select!` and [`Select::new`] try the arms of each round in a random
//! order (a per-thread xorshift generator), so among arms that are ready
//! together each is equally likely to complete, whatever its position and
//! whichever arms around it are not ready. `select_biased!` and
//! [`Select::biased`] try the arms in the order written.
//!
//! # Waiting
//!
//! A select that finds nothing ready spins briefly, yields, then parks the
//! thread, as the blocking operations do, and wakes when any of its
//! channels has something for one of its arms. With an arm on a
//! `wait = spin` channel it never parks: it polls its arms in rounds with
//! spin hints between them, and with one on a `wait = yield` channel it
//! spins a while, then yields between rounds. `default(timeout)` bounds the
//! wait; `default` alone makes the select a non-blocking try.

use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::fmt;
use std::future::{Future, poll_fn};
use std::hash::BuildHasher;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use asyncband_core::arity::{Many, One};
use asyncband_core::wait::{Backoff, Rounds, block_on};

use crate::error::{RecvError, TryRecvError};
use crate::flavour::AnyFlavour;
use crate::{multi, single};

/// Waits on several channel operations and runs the arm of the one that
/// completes: exactly one completes, the others have no effect.
///
/// ```text
/// select! {
///     recv(RECEIVER) -> PATTERN => BODY,
///     send(SENDER, VALUE) -> PATTERN => BODY,
///     reserve(SENDER) -> PATTERN => BODY,
///     default => BODY,            // or default(TIMEOUT) => BODY; at most one
/// }
/// ```
///
/// - `recv(rx) -> msg`: `msg` is the receive's `Result<T, RecvError>`;
///   `Err` once the channel is closed and drained.
/// - `send(tx, value) -> res`: `res` is `Result<(), SendError<T>>`. The
///   arm waits for room; `value` is evaluated only if this arm is chosen
///   (also when the channel turns out closed: the error hands it back).
/// - `reserve(tx) -> permit` (bounded flavours): `permit` is
///   `Result<Permit<'_, F>, SendError<()>>`. A reservation that is not
///   chosen holds nothing.
/// - `default => body`: runs when no operation is ready now; the select
///   never blocks. `default(timeout) => body`: waits at most `timeout` (a
///   [`Duration`](std::time::Duration)), then runs `body`.
///
/// Without `default`, the select waits until an operation completes. A
/// closed channel completes its arm at once, with the error.
///
/// Endpoints are named by an expression used as the receiver of a method
/// call (`recv(rx)`, `recv(&rx)`, `recv(self.rx)`): a single-endpoint side
/// (the `spsc` endpoints, the `mpsc` receiver) must be a place that can be
/// borrowed mutably (a `mut` binding or a `&mut` reference), a cloneable side
/// is borrowed shared (a binding or a `&` reference). The borrows end
/// before the chosen body runs, so the body may use the endpoints again.
/// Bodies are ordinary code of the enclosing function: `break`, `continue`,
/// `return` and `?` work in them. A body is followed by a comma, which may
/// be left out after a block.
///
/// `select!` is fair (among operations ready together, none is favoured by
/// its position; [`select_biased!`](crate::select_biased!) is not), and the
/// [module docs](mod@crate::select) say how it works; for receivers known
/// only at run time, see [`Select`](crate::Select).
///
/// # Examples
///
/// A worker loop over channels of different flavours and types:
///
/// ```
/// use asyncband::{mpmc, mpsc, select, spsc};
/// use std::time::Duration;
///
/// let (work_tx, work) = mpmc::bounded::<u32, 16>();
/// let (mut stop_tx, mut stop) = spsc::bounded::<(), 1>();
/// let (results, mut results_rx) = mpsc::unbounded::<u32>();
///
/// let worker = std::thread::spawn(move || {
///     let mut ticks = 0;
///     loop {
///         select! {
///             recv(work) -> job => match job {
///                 Ok(n) => results.send_blocking(n * n).unwrap(),
///                 Err(_) => break,
///             },
///             recv(stop) -> _ => break,
///             default(Duration::from_millis(10)) => ticks += 1,
///         }
///     }
///     ticks
/// });
/// for n in 1..=3 {
///     work_tx.send_blocking(n).unwrap();
/// }
/// let squares: Vec<u32> = (0..3).map(|_| results_rx.recv_blocking().unwrap()).collect();
/// assert_eq!(squares, [1, 4, 9]);
/// stop_tx.send_blocking(()).unwrap();
/// worker.join().unwrap();
/// ```
///
/// Sending and reserving; the value of a send arm is built only if it is
/// chosen:
///
/// ```
/// use asyncband::{mpsc, select};
///
/// let (tx, mut rx) = mpsc::bounded::<String, 1>();
/// let (other, _other_rx) = mpsc::bounded::<u8, 1>();
/// other.try_send(0).unwrap(); // full: its arm cannot complete
///
/// let mut built = 0;
/// select! {
///     send(other, { built += 1; 1 }) -> _ => unreachable!(),
///     send(tx, "hello".to_string()) -> res => res.unwrap(),
/// }
/// assert_eq!(built, 0);
/// assert_eq!(rx.try_recv().unwrap(), "hello");
///
/// select! {
///     reserve(tx) -> permit => permit.unwrap().send("world".to_string()).unwrap(),
///     reserve(other) -> _ => unreachable!(),
/// }
/// assert_eq!(rx.try_recv().unwrap(), "world");
/// ```
///
/// A non-blocking try, and a closed channel:
///
/// ```
/// use asyncband::{error::RecvError, select, spsc};
///
/// let (tx, mut rx) = spsc::unbounded::<u8>();
/// let got = select! {
///     recv(rx) -> msg => Some(msg),
///     default => None,
/// };
/// assert_eq!(got, None);
/// drop(tx);
/// select! {
///     recv(rx) -> msg => assert_eq!(msg, Err(RecvError)),
/// }
/// ```
#[macro_export]
macro_rules! select {
    ($($arms:tt)*) => {
        $crate::__select!(@parse false [] [] $($arms)*)
    };
}

/// [`select!`](crate::select!) that tries its operations in the order
/// written: when several are ready, the first of them completes.
///
/// # Examples
///
/// ```
/// use asyncband::{mpsc, select_biased};
///
/// let (urgent_tx, mut urgent) = mpsc::unbounded::<&str>();
/// let (normal_tx, mut normal) = mpsc::unbounded::<&str>();
/// normal_tx.try_send("normal").unwrap();
/// urgent_tx.try_send("urgent").unwrap();
/// let first = select_biased! {
///     recv(urgent) -> msg => msg.unwrap(),
///     recv(normal) -> msg => msg.unwrap(),
/// };
/// assert_eq!(first, "urgent");
/// ```
#[macro_export]
macro_rules! select_biased {
    ($($arms:tt)*) => {
        $crate::__select!(@parse true [] [] $($arms)*)
    };
}

/// The expansion of `select!` and `select_biased!`. Not public API.
///
/// `@parse` reads one arm head at a time and `@body` its body, then `@add`
/// appends `(future output kind [args] pattern => body)` to the arm list:
/// `future` and `output` are made by that `@add` expansion, so each arm's
/// names are distinct by hygiene. `@emit` declares the outputs, then the
/// futures, polls them through `select::rt::run` and drops them; `@chain`
/// runs the body of the arm whose output is set (or the default).
#[doc(hidden)]
#[macro_export]
macro_rules! __select {
    // ---- arm heads -------------------------------------------------------
    (@parse $biased:tt $arms:tt $default:tt) => {
        $crate::__select!(@emit $biased $arms $default)
    };
    (@parse $biased:tt $arms:tt $default:tt
        recv($rx:expr) -> $pat:pat => $($rest:tt)*) => {
        $crate::__select!(@body $biased $arms $default (recv [$rx] $pat) $($rest)*)
    };
    (@parse $biased:tt $arms:tt $default:tt
        send($tx:expr, $value:expr) -> $pat:pat => $($rest:tt)*) => {
        $crate::__select!(@body $biased $arms $default (send [$tx, $value] $pat) $($rest)*)
    };
    (@parse $biased:tt $arms:tt $default:tt
        reserve($tx:expr) -> $pat:pat => $($rest:tt)*) => {
        $crate::__select!(@body $biased $arms $default (reserve [$tx] $pat) $($rest)*)
    };
    (@parse $biased:tt $arms:tt [] default($timeout:expr) => $($rest:tt)*) => {
        $crate::__select!(@body $biased $arms [] (default_for ($timeout)) $($rest)*)
    };
    (@parse $biased:tt $arms:tt [] default => $($rest:tt)*) => {
        $crate::__select!(@body $biased $arms [] (default_now) $($rest)*)
    };
    (@parse $biased:tt $arms:tt [$($default:tt)+] default $($rest:tt)*) => {
        ::core::compile_error!("a select takes at most one `default` arm")
    };
    (@parse $biased:tt $arms:tt $default:tt $($rest:tt)+) => {
        ::core::compile_error!(
            "expected a select arm: `recv(receiver) -> pattern => body`, \
             `send(sender, value) -> pattern => body`, `reserve(sender) -> pattern => body`, \
             `default => body` or `default(timeout) => body`"
        )
    };

    // ---- arm bodies: an expression and a comma, a block, or the last ---
    (@body $biased:tt $arms:tt $default:tt $head:tt $body:expr, $($rest:tt)*) => {
        $crate::__select!(@add $biased $arms $default $head $body; $($rest)*)
    };
    (@body $biased:tt $arms:tt $default:tt $head:tt $body:block $($rest:tt)*) => {
        $crate::__select!(@add $biased $arms $default $head $body; $($rest)*)
    };
    (@body $biased:tt $arms:tt $default:tt $head:tt $body:expr) => {
        $crate::__select!(@add $biased $arms $default $head $body;)
    };

    // ---- collecting the arms ------------------------------------------
    (@add $biased:tt $arms:tt [] (default_now) $body:expr; $($rest:tt)*) => {
        $crate::__select!(@parse $biased $arms [now => $body] $($rest)*)
    };
    (@add $biased:tt $arms:tt [] (default_for $timeout:tt) $body:expr; $($rest:tt)*) => {
        $crate::__select!(@parse $biased $arms [for $timeout => $body] $($rest)*)
    };
    (@add $biased:tt [$($arms:tt)*] $default:tt ($kind:ident $args:tt $pat:pat) $body:expr;
        $($rest:tt)*) => {
        $crate::__select!(@parse $biased
            [$($arms)* (__future __output $kind $args $pat => $body)] $default $($rest)*)
    };

    // ---- the expansion ------------------------------------------------
    (@emit $biased:tt [] $default:tt) => {{
        $crate::__private::select::run(&mut [], $biased, $crate::__select!(@wait $default));
        $crate::__select!(@default $default)
    }};
    (@emit $biased:tt
        [$(($future:ident $output:ident $kind:ident $args:tt $pat:pat => $body:expr))*]
        $default:tt) => {{
        #[allow(unused_imports)]
        use $crate::__private::select::{ArmShared as _, ArmUnique as _};
        // The outputs outlive the futures: a future whose drop unwinds (a
        // slot it passes on reaches a waker that panics) leaves the chosen
        // output to be dropped with the rest, its slot or value given back.
        $(
            let mut $output = ::core::option::Option::None;
        )*
        {
            $(
                let $future = ::core::pin::pin!($crate::__select!(@future $kind $args));
            )*
            $crate::__private::select::run(
                &mut [$(
                    &mut $crate::__private::select::Arm::new($future, &mut $output)
                        as &mut dyn $crate::__private::select::PollArm
                ),*],
                $biased,
                $crate::__select!(@wait $default),
            );
        }
        $crate::__select!(@chain [] $default $(($output $kind $args $pat => $body))*)
    }};

    // ---- running the chosen body ---------------------------------------
    // `[before]` names the outputs of the arms already passed over. Every
    // output but the chosen one is moved out of scope before the body runs,
    // and the chosen one is moved into its pattern: a bounded arm's output
    // holds a permit that borrows its endpoint, so the body may use the
    // endpoints again.
    (@chain [$($before:ident)*] $default:tt
        ($output:ident $kind:ident $args:tt $pat:pat => $body:expr)
        $(($r_output:ident $r_kind:ident $r_args:tt $r_pat:pat => $r_body:expr))*) => {
        if $output.is_some() {
            $( $crate::__private::select::release($before); )*
            $( $crate::__private::select::release($r_output); )*
            let __value = $crate::__private::select::chosen($output);
            let $pat = $crate::__select!(@finish $kind $args __value);
            $body
        } else {
            $crate::__select!(@chain [$($before)* $output] $default
                $(($r_output $r_kind $r_args $r_pat => $r_body))*)
        }
    };
    (@chain [$($before:ident)*] $default:tt) => {{
        $( $crate::__private::select::release($before); )*
        $crate::__select!(@default $default)
    }};

    (@future recv [$rx:expr]) => {
        $rx.__asyncband_recv_arm()
    };
    (@future reserve [$tx:expr]) => {
        $tx.__asyncband_reserve_arm()
    };
    (@future send [$tx:expr, $value:expr]) => {
        $tx.__asyncband_send_arm()
    };

    (@finish send [$tx:expr, $value:expr] $output:ident) => {
        $crate::__private::select::complete_send($output, $value)
    };
    (@finish $kind:ident $args:tt $output:ident) => {
        $output
    };

    (@wait []) => {
        $crate::__private::select::Wait::Forever
    };
    (@wait [now => $body:expr]) => {
        $crate::__private::select::Wait::Never
    };
    (@wait [for $timeout:tt => $body:expr]) => {
        $crate::__private::select::Wait::For $timeout
    };

    (@default []) => {
        ::core::unreachable!("a select without `default` returns only when an arm completed")
    };
    (@default [now => $body:expr]) => {
        $body
    };
    (@default [for $timeout:tt => $body:expr]) => {
        $body
    };
}

/// The run-time support of the macros, reached as
/// `$crate::__private::select`. Not public API.
#[doc(hidden)]
pub mod rt {
    use super::{Future, Pin, Poll, Waker, run_rounds};
    use crate::error::SendError;
    use crate::flavour::AnyFlavour;
    use crate::future::{RecvFuture, ReserveFuture};
    use crate::permit::Permit;
    use crate::{mpmc, mpsc, multi, single, spsc};
    use asyncband_core::arity::{Many, One};
    use asyncband_core::storage::Capacity;
    use asyncband_core::wait::{Rounds, Wait as Policy};
    use std::future::Ready;
    use std::task::Context;
    use std::time::{Duration, Instant};

    /// Ends the output of an arm that was not chosen (`None`), and with it
    /// the borrow of its endpoint.
    #[inline]
    pub fn release<T>(_output: T) {}

    /// The output of the chosen arm.
    #[inline]
    pub fn chosen<T>(output: Option<T>) -> T {
        output.expect("the chosen arm has an output")
    }

    /// How long a select waits for an arm.
    #[derive(Debug, Clone, Copy)]
    pub enum Wait {
        /// Until an arm completes.
        Forever,
        /// Not at all: each arm is tried once.
        Never,
        /// At most this long.
        For(Duration),
    }

    /// One arm of a select, polled through a trait object so that arms of
    /// different types share one loop.
    pub trait PollArm {
        /// Polls the arm's future; on `Ready`, stores its output and
        /// returns true.
        fn poll_arm(&mut self, cx: &mut Context<'_>) -> bool;

        /// How the arm's channel paces a select's rounds.
        fn rounds(&self) -> Rounds;
    }

    /// The futures of a select's arms, by how their channels wait.
    pub trait ArmFuture: Future {
        /// How the channel paces a select's rounds.
        const ROUNDS: Rounds;
    }

    impl<F: AnyFlavour> ArmFuture for RecvFuture<'_, F> {
        const ROUNDS: Rounds = Rounds::of::<F::Wait>();
    }

    impl<F: AnyFlavour<Storage: Capacity>> ArmFuture for ReserveFuture<'_, F> {
        const ROUNDS: Rounds = Rounds::of::<F::Wait>();
    }

    /// An unbounded `send` arm, ready at once.
    impl<T> ArmFuture for Ready<T> {
        const ROUNDS: Rounds = Rounds::Park;
    }

    /// An arm's future and the place its output goes.
    #[derive(Debug)]
    pub struct Arm<'a, F: Future> {
        future: Pin<&'a mut F>,
        output: &'a mut Option<F::Output>,
    }

    impl<'a, F: Future> Arm<'a, F> {
        /// The arm of `future`, whose output goes to `output`.
        pub fn new(future: Pin<&'a mut F>, output: &'a mut Option<F::Output>) -> Self {
            Self { future, output }
        }
    }

    impl<F: ArmFuture> PollArm for Arm<'_, F> {
        fn rounds(&self) -> Rounds {
            F::ROUNDS
        }

        fn poll_arm(&mut self, cx: &mut Context<'_>) -> bool {
            match self.future.as_mut().poll(cx) {
                Poll::Ready(output) => {
                    *self.output = Some(output);
                    true
                }
                Poll::Pending => false,
            }
        }
    }

    /// Polls `arms` until one completes (its output is then set) or the
    /// wait is over; returns whether one completed. A fair select tries
    /// the arms of each round in a random order, a biased one in order.
    pub fn run(arms: &mut [&mut dyn PollArm], biased: bool, wait: Wait) -> bool {
        // Only a select that waits asks how its arms' channels wait.
        let rounds = match wait {
            Wait::Never => Rounds::Park,
            Wait::Forever | Wait::For(_) => arms
                .iter()
                .map(|arm| arm.rounds())
                .max()
                .unwrap_or(Rounds::Park),
        };
        let mut round = |cx: &mut Context<'_>| {
            run_rounds(arms.len(), biased, |index| arms[index].poll_arm(cx)).is_some()
        };
        match wait {
            Wait::Never => round(&mut Context::from_waker(Waker::noop())),
            Wait::Forever => super::block_on_rounds(None, rounds, &mut round),
            Wait::For(timeout) => {
                super::block_on_rounds(Instant::now().checked_add(timeout), rounds, &mut round)
            }
        }
    }

    /// What a `send` arm's future gives when the arm may send: a permit, or
    /// on an unbounded channel the sender itself.
    pub trait SendSlot {
        /// The payload.
        type Item;
        /// Sends `value` through the slot.
        ///
        /// # Errors
        ///
        /// [`SendError`] with the value when the channel is closed.
        fn send(self, value: Self::Item) -> Result<(), SendError<Self::Item>>;
    }

    impl<F: AnyFlavour<Storage: Capacity>> SendSlot for Permit<'_, F> {
        type Item = F::Item;
        fn send(self, value: F::Item) -> Result<(), SendError<F::Item>> {
            Permit::send(self, value)
        }
    }

    /// Completes a chosen `send` arm: sends `value` through the slot, or
    /// hands it back when the arm completed with the channel closed.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the value when the channel is closed.
    pub fn complete_send<S: SendSlot>(
        slot: Result<S, SendError<()>>,
        value: S::Item,
    ) -> Result<(), SendError<S::Item>> {
        match slot {
            Ok(slot) => slot.send(value),
            Err(SendError(())) => Err(SendError(value)),
        }
    }

    /// The arms of an endpoint borrowed mutably (the single sender and
    /// receiver). Each arm is the operation's own future, for a spin or
    /// yield channel too: its futures never sleep (they wake themselves at
    /// once), so a select with such an arm polls in rounds, paced by the
    /// policy (`Rounds`). A `send` arm waits for a slot without taking the
    /// value.
    pub trait ArmUnique {
        /// The `send` arm's future.
        type Send<'a>: Future
        where
            Self: 'a;
        /// Starts a `send` arm.
        fn __asyncband_send_arm(&mut self) -> Self::Send<'_>;
    }

    /// The arms of an endpoint borrowed shared (cloneable endpoints).
    pub trait ArmShared {
        /// The `send` arm's future.
        type Send<'a>: Future
        where
            Self: 'a;
        /// Starts a `send` arm.
        fn __asyncband_send_arm(&self) -> Self::Send<'_>;
    }

    /// The `recv` and `reserve` arms of the endpoints of one arity, and
    /// their senders as `send` slots.
    macro_rules! arms {
        ($module:ident, $arity:ident $(, $mut:tt)?) => {
            impl<F: AnyFlavour<Receivers = $arity>> $module::Receiver<F> {
                #[doc(hidden)]
                pub fn __asyncband_recv_arm(&$($mut)? self) -> RecvFuture<'_, F> {
                    RecvFuture {
                        inner: self.right().recv(),
                    }
                }
            }

            impl<F: AnyFlavour<Senders = $arity, Storage: Capacity>> $module::Sender<F> {
                #[doc(hidden)]
                pub fn __asyncband_reserve_arm(&$($mut)? self) -> ReserveFuture<'_, F> {
                    ReserveFuture {
                        inner: self.right().reserve(1),
                    }
                }
            }

            /// Only unbounded senders are handed out as slots: their
            /// `try_send` is never `Full`.
            impl<F: AnyFlavour<Senders = $arity>> SendSlot for &$($mut)? $module::Sender<F> {
                type Item = F::Item;
                fn send(self, value: F::Item) -> Result<(), SendError<F::Item>> {
                    self.try_send(value).map_err(|err| SendError(err.into_inner()))
                }
            }
        };
    }

    /// The `send` arms of one topology's senders: a reservation when
    /// bounded, the sender itself when not.
    macro_rules! send_arms {
        ($topology:ident, $trait:ident $(, $mut:tt)?) => {
            impl<T, const CAP: usize, const INLINE: usize, W: Policy> $trait
                for $topology::Sender<$topology::Bounded<T, CAP, INLINE, W>>
            {
                type Send<'a>
                    = ReserveFuture<'a, $topology::Bounded<T, CAP, INLINE, W>>
                where
                    Self: 'a;
                fn __asyncband_send_arm(&$($mut)? self) -> Self::Send<'_> {
                    self.__asyncband_reserve_arm()
                }
            }

            impl<T, const INLINE: usize, W: Policy> $trait
                for $topology::Sender<$topology::Unbounded<T, INLINE, W>>
            {
                type Send<'a>
                    = Ready<Result<&'a $($mut)? Self, SendError<()>>>
                where
                    Self: 'a;
                fn __asyncband_send_arm(&$($mut)? self) -> Self::Send<'_> {
                    std::future::ready(Ok(self))
                }
            }
        };
    }

    arms!(single, One, mut);
    arms!(multi, Many);
    send_arms!(spsc, ArmUnique, mut);
    send_arms!(mpsc, ArmShared);
    send_arms!(mpmc, ArmShared);
}

/// Up to this many arms, a fair round draws its order on the stack.
const ORDER_ON_STACK: usize = 64;

/// Tries `n` arms once until `try_arm` says one completed; returns its
/// index. A biased round tries them in order. A fair one tries them in a
/// uniformly random order, drawn as it goes (Fisher-Yates), so each ready
/// arm is equally likely to complete whatever sits around it; a random
/// starting point would favour an arm behind arms that are not ready.
fn run_rounds(n: usize, biased: bool, mut try_arm: impl FnMut(usize) -> bool) -> Option<usize> {
    if biased || n < 2 {
        return (0..n).find(|&index| try_arm(index));
    }
    if n <= ORDER_ON_STACK {
        let mut order = [0u8; ORDER_ON_STACK];
        for (index, at) in (0u8..).zip(&mut order[..n]) {
            *at = index;
        }
        shuffled_find(&mut order[..n], |index| try_arm(usize::from(index))).map(usize::from)
    } else {
        let mut order: Vec<usize> = (0..n).collect();
        shuffled_find(&mut order, try_arm)
    }
}

/// Tries the entries of `order` in a uniformly random order, shuffling it
/// as it goes, until `try_arm` accepts one, which it returns.
fn shuffled_find<I: Copy>(order: &mut [I], mut try_arm: impl FnMut(I) -> bool) -> Option<I> {
    for next in 0..order.len() {
        order.swap(next, next + random_below(order.len() - next));
        if try_arm(order[next]) {
            return Some(order[next]);
        }
    }
    None
}

/// Runs `round` (one pass over the arms; true when one completed) on this
/// thread until it completes or `deadline` passes, parking in between or,
/// over spin or yield channels, waiting as `rounds` says; returns whether
/// it completed.
fn block_on_rounds(
    deadline: Option<Instant>,
    rounds: Rounds,
    round: &mut dyn FnMut(&mut Context<'_>) -> bool,
) -> bool {
    // A busy arm has woken this thread already; one schedule across rounds,
    // so a yield select yields once its spin phase is over.
    let mut pace = rounds.pace();
    let future = pin!(poll_fn(|cx| {
        if round(cx) {
            return Poll::Ready(());
        }
        if let Some(pace) = &mut pace {
            pace.snooze();
        }
        Poll::Pending
    }));
    block_on(future, deadline, Backoff::new).is_some()
}

/// A number below `n` (which is at least 1) from this thread's xorshift
/// generator: cheap, and good enough to order a select's arms.
fn random_below(n: usize) -> usize {
    thread_local! {
        static STATE: Cell<u64> = Cell::new(RandomState::new().hash_one(0u8) | 1);
    }
    STATE.with(|state| {
        let mut x = state.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        state.set(x);
        // The high half, scaled to `n` (Lemire's multiply-shift).
        #[allow(
            clippy::cast_possible_truncation,
            reason = "the product shifted down is below `n`, a usize"
        )]
        let below = (((x >> 32) * n as u64) >> 32) as usize;
        below
    })
}

mod sealed {
    pub trait Sealed {}
}

/// A receiver [`Select`] can wait on: the receiver of any flavour, or a
/// mutable reference to one. Sealed.
pub trait Receive: sealed::Sealed {
    /// The payload.
    type Item;

    /// How the receiver's channel paces the select's rounds.
    #[doc(hidden)]
    const __ROUNDS: Rounds;

    /// Takes a value if one is ready.
    #[doc(hidden)]
    fn __try_recv(&mut self) -> Result<Self::Item, TryRecvError>;

    /// Polls for a value, registering in the receiver's own wait state.
    #[doc(hidden)]
    fn __poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<Self::Item, RecvError>>;

    /// Withdraws a registration left by `__poll_recv`, passing on a wake-up
    /// it held.
    #[doc(hidden)]
    fn __cancel_recv(&mut self);
}

/// The receivers of both arities; the registration `__poll_recv` leaves
/// lives in the receiver and stays only until the select returns, which
/// withdraws it (`Select::wait`).
macro_rules! receive {
    ($($module:ident: $arity:ident),*) => {$(
        impl<F: AnyFlavour<Receivers = $arity>> sealed::Sealed for $module::Receiver<F> {}

        impl<F: AnyFlavour<Receivers = $arity>> Receive for $module::Receiver<F> {
            type Item = F::Item;
            const __ROUNDS: Rounds = Rounds::of::<F::Wait>();

            fn __try_recv(&mut self) -> Result<F::Item, TryRecvError> {
                self.try_recv()
            }

            fn __poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<F::Item, RecvError>> {
                self.inner.poll_recv(cx)
            }

            fn __cancel_recv(&mut self) {
                self.inner.stop_waiting();
            }
        }
    )*};
}

receive!(single: One, multi: Many);

impl<R: Receive + ?Sized> sealed::Sealed for &mut R {}

impl<R: Receive + ?Sized> Receive for &mut R {
    type Item = R::Item;
    const __ROUNDS: Rounds = R::__ROUNDS;

    fn __try_recv(&mut self) -> Result<R::Item, TryRecvError> {
        (**self).__try_recv()
    }

    fn __poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<R::Item, RecvError>> {
        (**self).__poll_recv(cx)
    }

    fn __cancel_recv(&mut self) {
        (**self).__cancel_recv();
    }
}

/// The index of the receiver that completed, and its receive's result.
type Selected<T> = (usize, Result<T, RecvError>);

/// Receives from whichever of a run-time number of receivers of one type
/// has a value first: the run-time-sized form of
/// [`select!`](crate::select!)`{ recv(..) … }`, fair unless
/// [`biased`](Self::biased) (see [Fairness](mod@crate::select#fairness)).
///
/// The receivers are any flavour's [`Receive`]rs (receivers, or `&mut`
/// references to them) in a slice. Each wait returns the index of the
/// receiver that completed and its receive's result: `Ok(value)`, or
/// `Err(RecvError)` when that channel is closed and drained (at once, like
/// a `recv` arm). Exactly one receiver completes; the others are left as
/// they were, holding no registration. Receivers register in their own wait
/// state (the one [`poll_recv`](crate::mpsc::Receiver::poll_recv) uses), so
/// waiting allocates nothing (a cloneable receiver boxes its node once, on
/// its first wait; a fair select over more than 64 receivers draws each
/// round's order into a vector).
///
/// # Examples
///
/// ```
/// use asyncband::{Select, mpsc};
/// use std::time::Duration;
///
/// let mut senders = Vec::new();
/// let mut receivers = Vec::new();
/// for _ in 0..4 {
///     let (tx, rx) = mpsc::bounded::<usize, 8>();
///     senders.push(tx);
///     receivers.push(rx);
/// }
/// senders[2].try_send(20).unwrap();
///
/// let mut select = Select::new(&mut receivers);
/// assert_eq!(select.recv(), (2, Ok(20)));
/// assert_eq!(select.try_recv(), None);
/// assert_eq!(select.recv_timeout(Duration::from_millis(5)), None);
/// drop(senders.remove(0));
/// assert_eq!(select.try_recv(), Some((0, Err(asyncband::error::RecvError))));
/// ```
pub struct Select<'a, R> {
    receivers: &'a mut [R],
    biased: bool,
}

impl<'a, R: Receive> Select<'a, R> {
    /// A fair select over `receivers`.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{Select, spsc};
    ///
    /// let (mut tx, rx) = spsc::unbounded::<u8>();
    /// let mut receivers = [rx];
    /// tx.try_send(1).unwrap();
    /// assert_eq!(Select::new(&mut receivers).recv(), (0, Ok(1)));
    /// ```
    pub fn new(receivers: &'a mut [R]) -> Self {
        Self {
            receivers,
            biased: false,
        }
    }

    /// Makes the select try the receivers in slice order: when several have
    /// a value, the first of them completes.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{Select, mpmc};
    ///
    /// let (a_tx, a) = mpmc::unbounded::<char>();
    /// let (b_tx, b) = mpmc::unbounded::<char>();
    /// a_tx.try_send('a').unwrap();
    /// b_tx.try_send('b').unwrap();
    /// let mut receivers = [b, a];
    /// assert_eq!(Select::new(&mut receivers).biased().recv(), (0, Ok('b')));
    /// ```
    #[must_use]
    pub fn biased(mut self) -> Self {
        self.biased = true;
        self
    }

    /// Takes a value from the first receiver that has one, or reports a
    /// closed and drained one, without waiting; `None` when none is ready.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{Select, mpsc};
    ///
    /// let (tx, rx) = mpsc::bounded::<u8, 2>();
    /// let mut receivers = [rx];
    /// let mut select = Select::new(&mut receivers);
    /// assert_eq!(select.try_recv(), None);
    /// tx.try_send(1).unwrap();
    /// assert_eq!(select.try_recv(), Some((0, Ok(1))));
    /// ```
    pub fn try_recv(&mut self) -> Option<Selected<R::Item>> {
        let receivers = &mut *self.receivers;
        let mut result = None;
        run_rounds(receivers.len(), self.biased, |index| {
            result = match receivers[index].__try_recv() {
                Ok(value) => Some((index, Ok(value))),
                Err(TryRecvError::Disconnected) => Some((index, Err(RecvError))),
                Err(TryRecvError::Empty) => None,
            };
            result.is_some()
        });
        result
    }

    /// Waits for a value from any of the receivers, or for one of them to be
    /// closed and drained, parking the thread.
    ///
    /// # Panics
    ///
    /// If there are no receivers: the wait could never end.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{Select, spsc};
    ///
    /// let (mut a_tx, a) = spsc::bounded::<u8, 2>();
    /// let (_b_tx, b) = spsc::bounded::<u8, 2>();
    /// let producer = std::thread::spawn(move || a_tx.send_blocking(7).unwrap());
    /// let mut receivers = [a, b];
    /// assert_eq!(Select::new(&mut receivers).recv(), (0, Ok(7)));
    /// producer.join().unwrap();
    /// ```
    pub fn recv(&mut self) -> Selected<R::Item> {
        assert!(
            !self.receivers.is_empty(),
            "`Select::recv` over no receivers would wait forever"
        );
        self.wait(None)
            .expect("a wait without a deadline ends with a value")
    }

    /// Waits for at most `timeout` for a value from any of the receivers (or
    /// for one of them to be closed and drained); `None` if none came.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{Select, mpmc};
    /// use std::time::Duration;
    ///
    /// let (_tx, rx) = mpmc::bounded::<u8, 2>();
    /// let mut receivers = [rx];
    /// assert_eq!(Select::new(&mut receivers).recv_timeout(Duration::from_millis(5)), None);
    /// ```
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<Selected<R::Item>> {
        self.wait(crate::deadline::after(timeout))
    }

    /// Waits until `deadline` at the latest for a value from any of the
    /// receivers (or for one of them to be closed and drained); `None` if
    /// none came.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{Select, mpsc};
    /// use std::time::{Duration, Instant};
    ///
    /// let (tx, rx) = mpsc::unbounded::<u8>();
    /// let mut receivers = [rx];
    /// let mut select = Select::new(&mut receivers);
    /// let deadline = Instant::now() + Duration::from_millis(5);
    /// assert_eq!(select.recv_deadline(deadline), None);
    /// tx.try_send(1).unwrap();
    /// assert_eq!(select.recv_deadline(deadline), Some((0, Ok(1))));
    /// ```
    pub fn recv_deadline(&mut self, deadline: Instant) -> Option<Selected<R::Item>> {
        self.wait(Some(deadline))
    }

    /// Polls the receivers in rounds until one completes or `deadline`
    /// passes, then withdraws every registration left.
    fn wait(&mut self, deadline: Option<Instant>) -> Option<Selected<R::Item>> {
        let biased = self.biased;
        let receivers = &mut *self.receivers;
        let mut result = None;
        block_on_rounds(deadline, R::__ROUNDS, &mut |cx| {
            run_rounds(receivers.len(), biased, |index| {
                match receivers[index].__poll_recv(cx) {
                    Poll::Ready(received) => {
                        result = Some((index, received));
                        true
                    }
                    Poll::Pending => false,
                }
            })
            .is_some()
        });
        for receiver in receivers.iter_mut() {
            receiver.__cancel_recv();
        }
        result
    }
}

impl<R> fmt::Debug for Select<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Select")
            .field("receivers", &self.receivers.len())
            .field("biased", &self.biased)
            .finish()
    }
}
