//! Why an operation on a channel did not complete.
//!
//! An error holding the value it failed to deliver hands it back through
//! [`into_inner`](SendError::into_inner) (or by matching). All implement
//! `Debug` without requiring `T: Debug`, `Display`, [`std::error::Error`],
//! `Clone` and `Eq` where `T` does, and `Copy` where they hold no value.

use std::fmt;

/// The channel is closed, or every receiver is gone; the value is handed back.
///
/// Returned by `send`, `send_blocking` and `Permit::send`.
///
/// # Examples
///
/// ```
/// use asyncband::{error::SendError, mpsc};
///
/// let (tx, rx) = mpsc::bounded::<String, 4>();
/// drop(rx);
/// let err: SendError<String> = tx.send_blocking("order".to_string()).unwrap_err();
/// assert_eq!(err.into_inner(), "order");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SendError<T>(pub T);

/// Why `try_send` could not deliver its value at once; the value is handed back.
///
/// # Examples
///
/// ```
/// use asyncband::{error::TrySendError, spsc};
///
/// let (mut tx, rx) = spsc::bounded::<u32, 1>();
/// tx.try_send(1).unwrap();
/// assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
/// drop(rx);
/// assert_eq!(tx.try_send(3), Err(TrySendError::Disconnected(3)));
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TrySendError<T> {
    /// Every slot is taken (by queued values, held permits or capacity
    /// granted to waiting senders). Never returned by unbounded channels.
    Full(T),
    /// The channel is closed, or every receiver is gone.
    Disconnected(T),
}

/// Why `send_timeout` gave up; the value is handed back.
///
/// # Examples
///
/// ```
/// use asyncband::{error::SendTimeoutError, mpsc};
/// use std::time::Duration;
///
/// let (tx, _rx) = mpsc::bounded::<u8, 1>();
/// tx.try_send(1).unwrap();
/// let err = tx.send_timeout(2, Duration::from_millis(1)).unwrap_err();
/// assert_eq!(err, SendTimeoutError::Timeout(2));
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SendTimeoutError<T> {
    /// No capacity became free before the deadline.
    Timeout(T),
    /// The channel is closed, or every receiver is gone.
    Disconnected(T),
}

/// The channel is closed and every value sent before the close was received.
///
/// # Examples
///
/// ```
/// use asyncband::{error::RecvError, spsc};
///
/// let (mut tx, mut rx) = spsc::unbounded::<u8>();
/// tx.try_send(7).unwrap();
/// drop(tx);
/// assert_eq!(rx.recv_blocking(), Ok(7));
/// assert_eq!(rx.recv_blocking(), Err(RecvError));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvError;

/// Why `try_recv` returned no value.
///
/// # Examples
///
/// ```
/// use asyncband::{error::TryRecvError, mpmc};
///
/// let (tx, rx) = mpmc::bounded::<u8, 2>();
/// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
/// drop(tx);
/// assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TryRecvError {
    /// No value is ready now. The next value in order may still be being
    /// written by a sender that has claimed its position; `recv` waits for it.
    Empty,
    /// The channel is closed (or every sender is gone) and drained.
    Disconnected,
}

/// Why `recv_timeout` returned no value.
///
/// # Examples
///
/// ```
/// use asyncband::{error::RecvTimeoutError, mpsc};
/// use std::time::Duration;
///
/// let (_tx, mut rx) = mpsc::unbounded::<u8>();
/// assert_eq!(rx.recv_timeout(Duration::from_millis(1)), Err(RecvTimeoutError::Timeout));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecvTimeoutError {
    /// No value arrived before the deadline.
    Timeout,
    /// The channel is closed (or every sender is gone) and drained.
    Disconnected,
}

impl<T> SendError<T> {
    /// The value that could not be sent.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::error::SendError;
    ///
    /// assert_eq!(SendError(3).into_inner(), 3);
    /// ```
    pub fn into_inner(self) -> T {
        self.0
    }
}

/// The methods and traits of the two-variant send errors (`$why` or
/// `Disconnected`).
macro_rules! send_error {
    ($error:ident, $why:ident, $is_why:ident, $why_says:literal) => {
        impl<T> $error<T> {
            /// The value that could not be sent.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use asyncband::error::", stringify!($error), ";")]
            ///
            #[doc = concat!(
                "assert_eq!(", stringify!($error), "::", stringify!($why), "(3).into_inner(), 3);"
            )]
            /// ```
            pub fn into_inner(self) -> T {
                match self {
                    Self::$why(value) | Self::Disconnected(value) => value,
                }
            }

            #[doc = concat!("True for [`", stringify!($error), "::", stringify!($why), "`].")]
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use asyncband::error::", stringify!($error), ";")]
            ///
            #[doc = concat!(
                "assert!(", stringify!($error), "::", stringify!($why), "(()).",
                stringify!($is_why), "());"
            )]
            /// ```
            pub fn $is_why(&self) -> bool {
                matches!(self, Self::$why(_))
            }

            #[doc = concat!("True for [`", stringify!($error), "::Disconnected`].")]
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use asyncband::error::", stringify!($error), ";")]
            ///
            #[doc = concat!(
                "assert!(", stringify!($error), "::Disconnected(()).is_disconnected());"
            )]
            /// ```
            pub fn is_disconnected(&self) -> bool {
                matches!(self, Self::Disconnected(_))
            }
        }

        impl<T> From<SendError<T>> for $error<T> {
            fn from(err: SendError<T>) -> Self {
                Self::Disconnected(err.0)
            }
        }

        impl<T> fmt::Debug for $error<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(match self {
                    Self::$why(_) => concat!(stringify!($why), "(..)"),
                    Self::Disconnected(_) => "Disconnected(..)",
                })
            }
        }

        impl<T> fmt::Display for $error<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(match self {
                    Self::$why(_) => $why_says,
                    Self::Disconnected(_) => "sending on a closed channel",
                })
            }
        }

        impl<T> std::error::Error for $error<T> {}
    };
}

send_error!(TrySendError, Full, is_full, "sending on a full channel");
send_error!(
    SendTimeoutError,
    Timeout,
    is_timeout,
    "timed out waiting for capacity"
);

/// The traits of the two receive errors with a reason beside `Disconnected`.
macro_rules! recv_error {
    ($error:ident, $why:ident, $why_says:literal) => {
        impl From<RecvError> for $error {
            fn from(_: RecvError) -> Self {
                Self::Disconnected
            }
        }

        impl fmt::Display for $error {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(match self {
                    Self::$why => $why_says,
                    Self::Disconnected => "receiving on a closed and empty channel",
                })
            }
        }

        impl std::error::Error for $error {}
    };
}

recv_error!(TryRecvError, Empty, "receiving on an empty channel");
recv_error!(RecvTimeoutError, Timeout, "timed out waiting for a value");

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError(..)")
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sending on a closed channel")
    }
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("receiving on a closed and empty channel")
    }
}

impl<T> std::error::Error for SendError<T> {}
impl std::error::Error for RecvError {}
