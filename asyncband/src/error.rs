//! Why an operation on a channel did not complete.
//!
//! Errors that failed to deliver a value hand it back, so a failed send never
//! loses a message.

pub use asyncband_core::error::{
    RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
};
