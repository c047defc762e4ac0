//! The compile-time rules of bounded channels and payload budgets.
//!
//! Each rule is a `const fn` evaluated in an inline `const` block of the
//! constructor, so a channel that breaks one fails to build (under `cargo
//! build`, not `cargo check`) with a message naming the rule and what is
//! allowed.

use asyncband_core::ring::MAX_CAPACITY;

/// A message assembled at compile time (const panics only take a `&str`).
struct Message {
    buf: [u8; 320],
    len: usize,
}

impl Message {
    const fn new() -> Self {
        Self {
            buf: [0; 320],
            len: 0,
        }
    }

    const fn text(mut self, text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() && self.len < self.buf.len() {
            self.buf[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    #[allow(
        clippy::cast_possible_truncation,
        reason = "`n % 10` is a single digit; `u8::try_from` is not usable in a `const fn`"
    )]
    const fn number(mut self, mut n: usize) -> Self {
        let mut digits = [0u8; 20];
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while count > 0 && self.len < self.buf.len() {
            count -= 1;
            self.buf[self.len] = digits[count];
            self.len += 1;
        }
        self
    }

    /// The number in backticks, as code is quoted in compiler messages.
    const fn code(self, n: usize) -> Self {
        self.text("`").number(n).text("`")
    }

    const fn as_str(&self) -> &str {
        match core::str::from_utf8(self.buf.split_at(self.len).0) {
            Ok(message) => message,
            Err(_) => "asyncband: invalid channel parameters",
        }
    }
}

/// The largest power of two below `n` (`n >= 2`).
const fn power_below(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.leading_zeros())
}

// Each rule panics in its own body, not in a helper, so that the compiler's
// report of the failed evaluation stays short.

/// `CAP` must be a power of two from 1 to [`MAX_CAPACITY`].
pub(crate) const fn capacity<const CAP: usize>() {
    let message = if CAP == 0 {
        Message::new()
            .text("`CAP` is `0`, but a bounded channel needs at least one slot; ")
            .text("use a power of two from `1` to ")
            .code(MAX_CAPACITY)
    } else if CAP > MAX_CAPACITY {
        Message::new()
            .text("`CAP` is ")
            .code(CAP)
            .text(", above the maximum capacity of ")
            .code(MAX_CAPACITY)
            .text(" (2^20); use a smaller power of two, or an unbounded channel")
    } else if !CAP.is_power_of_two() {
        let below = power_below(CAP);
        Message::new()
            .text("`CAP` is ")
            .code(CAP)
            .text(", which is not a power of two; the nearest are ")
            .code(below)
            .text(" and ")
            .code(below * 2)
    } else {
        return;
    };
    panic!("{}", message.as_str());
}

/// `size_of::<T>()` must fit the `INLINE` budget.
pub(crate) const fn inline<T, const INLINE: usize>() {
    let size = size_of::<T>();
    if size <= INLINE {
        return;
    }
    let message = Message::new()
        .text("the payload is ")
        .code(size)
        .text(" bytes, above the `INLINE` budget of ")
        .code(INLINE)
        .text(" bytes; send a `Box<T>` (")
        .code(size_of::<Box<u8>>())
        .text(" bytes) instead, or raise `INLINE`");
    panic!("{}", message.as_str());
}
