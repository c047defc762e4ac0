//! The `channel!` macro: a thin `macro_rules!` front that hands `$crate` to
//! the procedural macro in `asyncband-macros`, so the expansion names this
//! crate correctly even when the dependency is renamed, and keeps the spans
//! of the user's tokens for its errors.

/// Creates a channel in one line, its flavour fixed at compile time.
///
/// ```text
/// channel!(TOPOLOGY, bounded = CAP | unbounded, TYPE [, inline = BYTES] [, wait = spin | yield | park])
/// ```
///
/// - `TOPOLOGY`: `spsc`, `mpsc` or `mpmc`, the module of the flavour.
/// - `bounded = CAP`: a bounded channel of `CAP` slots, a power of two from
///   1 to 2^20 (1048576); or `unbounded`.
/// - `TYPE`: the payload type.
/// - `inline = BYTES` (optional): the largest payload, in bytes, that the
///   channel accepts: its `INLINE` parameter. Without it, any size.
/// - `wait = spin`, `wait = yield` or `wait = park` (optional): the
///   [wait policy](crate::wait), its `W` parameter. Without it, `park`.
///
/// `CAP` and `BYTES` are integer literals, checked as the macro expands, or
/// const expressions and paths, checked by the const-generic rules of the
/// constructor when it is instantiated.
///
/// The expansion is the const-generic constructor, so the macro and the
/// constructor give values of exactly the same type:
///
/// | macro | the same as |
/// | --- | --- |
/// | `channel!(mpsc, bounded = 64, T)` | [`mpsc::Bounded::<T, 64>::channel()`](crate::mpsc::Bounded::channel) |
/// | `channel!(spsc, unbounded, T)` | [`spsc::Unbounded::<T>::channel()`](crate::spsc::Unbounded::channel) |
/// | `channel!(mpmc, bounded = 64, T, inline = 1024)` | [`mpmc::Bounded::<T, 64, 1024>::channel()`](crate::mpmc::Bounded::channel) |
/// | `channel!(mpmc, unbounded, T, inline = 1024)` | [`mpmc::Unbounded::<T, 1024>::channel()`](crate::mpmc::Unbounded::channel) |
/// | `channel!(spsc, bounded = 1024, T, wait = spin)` | [`spsc::Bounded::<T, 1024, { usize::MAX }, Spin>::channel()`](crate::spsc::Bounded::channel) |
/// | `channel!(mpsc, unbounded, T, wait = yield)` | [`mpsc::Unbounded::<T, { usize::MAX }, Yield>::channel()`](crate::mpsc::Unbounded::channel) |
///
/// # Examples
///
/// A bounded channel with many producers:
///
/// ```
/// use asyncband::{channel, mpsc};
///
/// let (tx, mut rx) = channel!(mpsc, bounded = 4096, u64);
/// tx.clone().try_send(1).unwrap();
/// assert_eq!(rx.try_recv(), Ok(1));
///
/// // The same type as the const-generic constructor's.
/// let _: (mpsc::Sender<mpsc::Bounded<u64, 4096>>, mpsc::Receiver<mpsc::Bounded<u64, 4096>>) =
///     (tx, rx);
/// ```
///
/// An unbounded channel with one producer and one consumer:
///
/// ```
/// let (mut tx, mut rx) = asyncband::channel!(spsc, unbounded, String);
/// tx.try_send("tick".to_owned()).unwrap();
/// assert_eq!(rx.try_recv().as_deref(), Ok("tick"));
/// assert_eq!(tx.capacity(), None);
/// ```
///
/// A payload budget: a payload type larger than `inline` bytes does not
/// compile.
///
/// ```
/// struct Frame([u8; 1000]);
///
/// let (tx, rx) = asyncband::channel!(mpmc, bounded = 64, Frame, inline = 1024);
/// tx.try_send(Frame([0; 1000])).unwrap();
/// assert!(rx.clone().try_recv().is_ok());
/// ```
///
/// A wait policy: a channel that busy-waits, for threads with a core each.
///
/// ```
/// use asyncband::{spsc, wait::Spin};
///
/// let (mut tx, mut rx) = asyncband::channel!(spsc, bounded = 1024, u64, wait = spin);
/// let _: &spsc::Sender<spsc::Bounded<u64, 1024, { usize::MAX }, Spin>> = &tx;
/// tx.send_blocking(1).unwrap();
/// assert_eq!(rx.recv_blocking(), Ok(1));
/// ```
///
/// One that busy-waits but yields the core, for more such threads than
/// cores:
///
/// ```
/// use asyncband::{mpsc, wait::Yield};
///
/// let (tx, mut rx) = asyncband::channel!(mpsc, unbounded, u64, wait = yield);
/// let _: &mpsc::Sender<mpsc::Unbounded<u64, { usize::MAX }, Yield>> = &tx;
/// tx.send_blocking(1).unwrap();
/// assert_eq!(rx.recv_blocking(), Ok(1));
/// ```
///
/// Capacities and budgets as const expressions and paths, including const
/// parameters:
///
/// ```
/// use asyncband::{channel, mpsc};
///
/// const ORDERS: usize = 1 << 12;
///
/// fn orders<const N: usize>() -> (mpsc::Sender<mpsc::Bounded<u64, N>>, mpsc::Receiver<mpsc::Bounded<u64, N>>) {
///     channel!(mpsc, bounded = N, u64)
/// }
///
/// let (tx, _rx) = channel!(mpsc, bounded = ORDERS, u64);
/// assert_eq!(tx.capacity(), Some(4096));
/// let (tx, _rx) = channel!(mpmc, unbounded, u64, inline = size_of::<u64>());
/// assert_eq!(tx.capacity(), None);
/// let (tx, _rx) = orders::<8>();
/// assert_eq!(tx.capacity(), Some(8));
/// ```
///
/// # Compile errors
///
/// Every mistake is a compile error on the tokens that make it, and all of
/// an invocation's are reported at once, with no follow-on errors after the
/// macro (the expansion beside the errors keeps a plausible type).
///
/// An unknown topology: "expected one of: `spsc`, `mpsc`, `mpmc`, found
/// `spmc`".
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(spmc, bounded = 64, u32);
/// ```
///
/// A missing capacity option: "missing `bounded = CAP` or `unbounded` before
/// the payload type".
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(mpsc, u32);
/// ```
///
/// A repeated option: "`bounded` specified more than once"; or both:
/// "`unbounded` conflicts with `bounded = 64`; a channel is either bounded or
/// unbounded".
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(mpsc, bounded = 64, bounded = 128, u32);
/// ```
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(mpsc, bounded = 64, unbounded, u32);
/// ```
///
/// `bounded` without a value: "`bounded` needs a capacity: `bounded = CAP`,
/// with `CAP` a power of two from `1` to `1048576`".
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(mpsc, bounded, u32);
/// ```
///
/// A capacity that is not an integer: "expected an integer capacity, found
/// `64.0`"; or negative: "`-64` is negative; the capacity is a power of two
/// from `1` to `1048576`".
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(mpsc, bounded = 64.0, u32);
/// ```
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(mpsc, bounded = -64, u32);
/// ```
///
/// A capacity that is not a power of two: "`100` is not a power of two; the
/// nearest are `64` and `128`".
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(mpsc, bounded = 100, u32);
/// ```
///
/// Zero: "a capacity of `0` leaves no slot for a value; the smallest is
/// `1`"; above the maximum: "`2097152` is above the maximum capacity of
/// `1048576` (2^20); use `unbounded` for more".
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(mpsc, bounded = 0, u32);
/// ```
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(mpsc, bounded = 2097152, u32);
/// ```
///
/// A missing payload type: "missing the payload type after `bounded = 64`".
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(mpsc, bounded = 64);
/// ```
///
/// A const capacity that breaks the rules fails when the constructor is
/// instantiated (`cargo build`, not `cargo check`): "`CAP` is `100`, which
/// is not a power of two; the nearest are `64` and `128`".
///
/// ```compile_fail
/// const CAP: usize = 100;
/// let (tx, rx) = asyncband::channel!(mpsc, bounded = CAP, u32);
/// ```
///
/// So does a payload larger than `inline`, whose size the macro cannot know:
/// "the payload is `2048` bytes, above the `INLINE` budget of `1024` bytes;
/// send a `Box<T>` (`8` bytes) instead, or raise `INLINE`".
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(mpmc, bounded = 64, [u8; 2048], inline = 1024);
/// ```
///
/// A wait policy other than the three: "expected `spin`, `yield` or `park`,
/// found `sleep`"; and an async operation on a spin or yield channel: "a
/// `wait = spin` or `wait = yield` channel has no async operations".
///
/// ```compile_fail
/// let (tx, rx) = asyncband::channel!(mpsc, bounded = 64, u32, wait = sleep);
/// ```
///
/// ```compile_fail
/// # async fn f() {
/// let (tx, mut rx) = asyncband::channel!(mpsc, bounded = 64, u32, wait = spin);
/// let _ = rx.recv().await;
/// # }
/// ```
///
/// ```compile_fail
/// # async fn f() {
/// let (tx, mut rx) = asyncband::channel!(mpsc, bounded = 64, u32, wait = yield);
/// let _ = rx.recv().await;
/// # }
/// ```
#[macro_export]
macro_rules! channel {
    ($($input:tt)*) => {
        $crate::__private::channel_impl!($crate; $($input)*)
    };
}
