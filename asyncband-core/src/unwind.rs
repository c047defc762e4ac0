//! Panics from user code (a waker, a value's `Drop`) that the channel
//! catches so that it can finish what it holds for others, then passes on.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// A caught panic's payload.
pub(crate) type Panic = Box<dyn Any + Send + 'static>;

/// Runs `f`, keeping the round's first panic in `panic`.
pub(crate) fn catch(panic: &mut Option<Panic>, f: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
        panic.get_or_insert(payload);
    }
}

/// Resumes the first panic a round of user code raised, once the channel is
/// consistent again. When this thread is already unwinding (the round ran
/// in a destructor during another panic), resuming would abort the
/// process, so the payload is dropped instead.
pub(crate) fn resume(panic: Option<Panic>) {
    if let Some(payload) = panic.filter(|_| !std::thread::panicking()) {
        resume_unwind(payload);
    }
}
