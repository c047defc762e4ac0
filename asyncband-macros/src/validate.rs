//! Validation: the rules of `channel!`, checked on what was parsed.
//!
//! - exactly one of `bounded = CAP` and `unbounded`, before the payload type;
//! - exactly one payload type;
//! - at most one `inline = BYTES` and one `wait = spin | yield | park`, after the
//!   payload type;
//! - a literal `CAP`: an integer, a power of two from 1 to [`MAX_CAPACITY`];
//! - a literal `BYTES`: a non-negative integer.
//!
//! A const expression or path in place of `CAP` or `BYTES` is left to the
//! const-generic rules of the constructor, which check it at
//! monomorphization; so is a payload that does not fit `BYTES`, as sizes are
//! unknown to a macro.
//!
//! Every mistake is reported, each on the tokens it concerns. Whatever was
//! wrong or missing is replaced in a stand-in [`Channel`], so that the
//! expansion beside the errors still type-checks and the user's code after
//! it raises no follow-on errors.

use proc_macro2::Span;
use quote::ToTokens;
use syn::{Error, Expr, Lit, LitInt, Path, Type, UnOp};

use crate::parse::{Arg, Input, Setting, kw};

/// The largest capacity of a bounded channel, `asyncband_core::ring::MAX_CAPACITY`
/// (a proc-macro crate cannot see it without building the core for the host
/// too). `tests/macro_types.rs` builds `bounded = 1048576` through the
/// const-generic rule, so the core cannot lower its maximum without this
/// one following.
const MAX_CAPACITY: u128 = 1 << 20;

/// A channel the expansion can construct.
pub(crate) struct Channel<'a> {
    pub krate: &'a Path,
    /// `spsc`, `mpsc` or `mpmc`, with the user's span.
    pub module: proc_macro2::Ident,
    pub flavour: Flavour<'a>,
    /// `None` stands for `_`, when the payload type is missing.
    pub payload: Option<&'a Type>,
    pub inline: Option<Value<'a>>,
    /// `wait = spin`, `yield` or `park`, with the user's span; `None` leaves
    /// the default.
    pub wait: Option<proc_macro2::Ident>,
}

/// Bounded or unbounded, with the span of the keyword that chose it.
pub(crate) enum Flavour<'a> {
    Bounded { keyword: Span, capacity: Value<'a> },
    Unbounded { keyword: Span },
}

/// A const argument.
pub(crate) enum Value<'a> {
    /// As the user wrote it: a literal that passed the checks, or a const
    /// expression left to the const-generic rules.
    Given(&'a Expr),
    /// In place of a rejected value, so the stand-in expression type-checks.
    StandIn(usize),
}

/// The errors, and a channel of the right shape to expand beside them.
pub(crate) struct Rejected<'a> {
    pub error: Error,
    pub stand_in: Channel<'a>,
}

/// Checks every rule, and returns the channel or every error found.
pub(crate) fn channel(input: &Input) -> Result<Channel<'_>, Box<Rejected<'_>>> {
    let mut errors = input.errors.clone();
    let payload_at = input
        .args
        .iter()
        .position(|arg| matches!(arg, Arg::Payload(_)));

    let mut storage: Option<(&Arg, Flavour)> = None;
    let mut payload = None;
    let mut inline = None;
    let mut inline_seen = false;
    let mut wait = None;
    let mut wait_seen = false;
    for (at, arg) in input.args.iter().enumerate() {
        match arg {
            Arg::Bounded(_) | Arg::Unbounded(_) => {
                if payload_at.is_some_and(|payload_at| at > payload_at) {
                    errors.push(spanned(
                        arg,
                        format!("`{}` must come before the payload type", text(arg)),
                    ));
                }
                let flavour = flavour(arg, &mut errors);
                match &storage {
                    None => storage = Some((arg, flavour)),
                    Some((first, _)) => errors.push(repeated(first, arg)),
                }
            }
            Arg::Inline(setting) => {
                let value = bytes(setting, &mut errors);
                after_payload(arg, at, payload_at, &mut inline_seen, &mut errors)
                    .then(|| inline = value);
            }
            Arg::Wait(setting) => {
                let value = policy(setting, &mut errors);
                after_payload(arg, at, payload_at, &mut wait_seen, &mut errors)
                    .then(|| wait = value);
            }
            Arg::Payload(ty) => match payload {
                None => payload = Some(ty),
                Some(_) => errors.push(spanned(
                    ty,
                    format!(
                        "found a second payload type, `{}`; a channel carries one type, \
                         so wrap several in a tuple or an enum",
                        text(ty)
                    ),
                )),
            },
        }
    }

    if input.complete {
        missing(
            input,
            storage.as_ref().map(|(arg, _)| *arg),
            payload,
            &mut errors,
        );
    }

    let channel = Channel {
        krate: &input.krate,
        // In place of an unknown topology, the one whose endpoints allow every
        // use, so that the code after the macro raises no follow-on errors.
        module: input.topology.as_ref().map_or_else(
            || proc_macro2::Ident::new("mpmc", Span::call_site()),
            crate::parse::Topology::module,
        ),
        flavour: match storage {
            Some((_, flavour)) => flavour,
            None => Flavour::Unbounded {
                keyword: Span::call_site(),
            },
        },
        payload,
        inline,
        wait,
    };
    match errors.into_iter().reduce(|mut all, error| {
        all.combine(error);
        all
    }) {
        None => Ok(channel),
        Some(error) => Err(Box::new(Rejected {
            error,
            stand_in: channel,
        })),
    }
}

/// Checks that the option `arg`, at `at`, comes after the payload type and
/// only once (`seen`); true if it is the first.
fn after_payload(
    arg: &Arg,
    at: usize,
    payload_at: Option<usize>,
    seen: &mut bool,
    errors: &mut Vec<Error>,
) -> bool {
    if payload_at.is_some_and(|payload_at| at < payload_at) {
        errors.push(spanned(
            arg,
            format!("`{}` must come after the payload type", text(arg)),
        ));
    }
    if std::mem::replace(seen, true) {
        let name = match arg {
            Arg::Wait(_) => "wait",
            _ => "inline",
        };
        errors.push(spanned(arg, format!("`{name}` specified more than once")));
        return false;
    }
    true
}

/// Reports a missing storage option or payload type.
fn missing(input: &Input, storage: Option<&Arg>, payload: Option<&Type>, errors: &mut Vec<Error>) {
    match (storage, payload) {
        (Some(_), Some(_)) => {}
        (None, Some(ty)) => {
            errors.push(spanned(
                ty,
                "missing `bounded = CAP` or `unbounded` before the payload type",
            ));
        }
        (Some(storage), None) => {
            errors.push(spanned(
                storage,
                format!("missing the payload type after `{}`", text(storage)),
            ));
        }
        (None, None) => {
            // With nothing to point at, parsing already said what it expected.
            if let Some(topology) = &input.topology {
                errors.push(spanned(
                    topology,
                    format!(
                        "missing `bounded = CAP` or `unbounded` and the payload type after `{}`",
                        text(topology)
                    ),
                ));
            }
        }
    }
}

/// The second of two storage options.
fn repeated(first: &Arg, second: &Arg) -> Error {
    let message = match (first, second) {
        (Arg::Bounded(_), Arg::Bounded(_)) => "`bounded` specified more than once".to_owned(),
        (Arg::Unbounded(_), Arg::Unbounded(_)) => "`unbounded` specified more than once".to_owned(),
        _ => format!(
            "`{}` conflicts with `{}`; a channel is either bounded or unbounded",
            text(second),
            text(first)
        ),
    };
    spanned(second, message)
}

/// Checks `bounded = CAP` or `unbounded`.
fn flavour<'a>(arg: &'a Arg, errors: &mut Vec<Error>) -> Flavour<'a> {
    match arg {
        Arg::Bounded(Setting {
            keyword,
            value: Some((_, value)),
        }) => Flavour::Bounded {
            keyword: keyword.span,
            capacity: match capacity(value) {
                Ok(()) => Value::Given(value),
                Err(error) => {
                    errors.push(error);
                    Value::StandIn(1)
                }
            },
        },
        Arg::Bounded(Setting {
            keyword,
            value: None,
        }) => {
            errors.push(spanned(
                keyword,
                "`bounded` needs a capacity: `bounded = CAP`, with `CAP` a power of two \
                 from `1` to `1048576`",
            ));
            Flavour::Bounded {
                keyword: keyword.span,
                capacity: Value::StandIn(1),
            }
        }
        Arg::Unbounded(Setting { keyword, value }) => {
            if let Some((eq, value)) = value {
                let mut written = eq.to_token_stream();
                value.to_tokens(&mut written);
                errors.push(spanned(
                    written,
                    format!(
                        "`unbounded` takes no capacity; for a bounded channel, \
                         write `bounded = {}`",
                        text(value)
                    ),
                ));
            }
            Flavour::Unbounded {
                keyword: keyword.span,
            }
        }
        Arg::Inline(_) | Arg::Wait(_) | Arg::Payload(_) => unreachable!("not a storage option"),
    }
}

/// Checks `inline = BYTES`; `None` leaves the default budget.
fn bytes<'a>(setting: &'a Setting<kw::inline>, errors: &mut Vec<Error>) -> Option<Value<'a>> {
    let Some((_, value)) = &setting.value else {
        errors.push(spanned(
            setting.keyword,
            "`inline` needs a size in bytes: `inline = BYTES`",
        ));
        return None;
    };
    let error = match literal(value) {
        Literal::Integer(int) if !is_usize(int) => {
            format!(
                "`{int}` is a `{}`, but `inline` is a `usize`; write `{}`",
                int.suffix(),
                int.base10_digits()
            )
        }
        Literal::Integer(_) | Literal::Expression => return Some(Value::Given(value)),
        Literal::Negative(magnitude) => {
            format!(
                "`-{}` is negative; `inline` is a size in bytes",
                text(magnitude)
            )
        }
        Literal::Other => format!("expected an integer size in bytes, found `{}`", text(value)),
    };
    errors.push(spanned(value, error));
    None
}

/// Checks `wait = spin | yield | park`; `None` leaves the default.
fn policy(setting: &Setting<kw::wait>, errors: &mut Vec<Error>) -> Option<proc_macro2::Ident> {
    let Some((_, value)) = &setting.value else {
        errors.push(spanned(
            setting.keyword,
            "`wait` needs a policy: `wait = spin`, `wait = yield` or `wait = park`",
        ));
        return None;
    };
    match value {
        Expr::Path(path) => {
            if let Some(ident) = path.path.get_ident() {
                if ident == "spin" || ident == "park" {
                    return Some(ident.clone());
                }
            }
        }
        // `yield` is a keyword: the policy parses as a bare yield expression.
        Expr::Yield(word) if word.expr.is_none() && word.attrs.is_empty() => {
            return Some(proc_macro2::Ident::new("yield", word.yield_token.span));
        }
        _ => {}
    }
    errors.push(spanned(
        value,
        format!(
            "expected `spin`, `yield` or `park`, found `{}`; the wait policies are `spin` \
             (busy-wait), `yield` (spin, then yield the core; neither has async \
             operations) and `park` (the default)",
            text(value)
        ),
    ));
    None
}

/// Checks a capacity written as a literal; anything else is left to the
/// const-generic rules.
fn capacity(value: &Expr) -> Result<(), Error> {
    let message = match literal(value) {
        Literal::Expression => return Ok(()),
        Literal::Integer(int) if !is_usize(int) => {
            format!(
                "`{int}` is a `{}`, but `CAP` is a `usize`; write `{}`",
                int.suffix(),
                int.base10_digits()
            )
        }
        Literal::Integer(int) => match int.base10_digits().parse::<u128>() {
            Ok(0) => "a capacity of `0` leaves no slot for a value; the smallest is `1`".to_owned(),
            Ok(n) if n <= MAX_CAPACITY && n.is_power_of_two() => return Ok(()),
            Ok(n) if n <= MAX_CAPACITY => {
                let below = 1 << (u128::BITS - 1 - n.leading_zeros());
                format!(
                    "`{n}` is not a power of two; the nearest are `{below}` and `{}`",
                    below * 2
                )
            }
            // Above the maximum, or even above `u128::MAX`.
            Ok(_) | Err(_) => format!(
                "`{}` is above the maximum capacity of `{MAX_CAPACITY}` (2^20); \
                 use `unbounded` for more",
                int.base10_digits()
            ),
        },
        Literal::Negative(magnitude) => format!(
            "`-{}` is negative; the capacity is a power of two from `1` to `{MAX_CAPACITY}`",
            text(magnitude)
        ),
        Literal::Other => format!("expected an integer capacity, found `{}`", text(value)),
    };
    Err(spanned(value, message))
}

/// What kind of literal a const argument is, if any.
enum Literal<'a> {
    /// An integer.
    Integer(&'a LitInt),
    /// A literal behind a minus sign, and that literal.
    Negative(&'a Expr),
    /// A literal that is not an integer.
    Other,
    /// Not a literal: a const expression or path.
    Expression,
}

fn literal(value: &Expr) -> Literal<'_> {
    match value {
        // From a `$cap:expr` of the user's own `macro_rules!`, or `(64)`.
        Expr::Group(group) => literal(&group.expr),
        Expr::Paren(paren) => literal(&paren.expr),
        Expr::Lit(lit) => match &lit.lit {
            Lit::Int(int) => Literal::Integer(int),
            _ => Literal::Other,
        },
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => match literal(&unary.expr) {
            Literal::Expression => Literal::Expression,
            _ => Literal::Negative(&unary.expr),
        },
        _ => Literal::Expression,
    }
}

/// Whether an integer literal can be a const argument of type `usize`.
fn is_usize(int: &LitInt) -> bool {
    matches!(int.suffix(), "" | "usize")
}

/// An error on exactly the tokens of `tokens`.
fn spanned(tokens: impl ToTokens, message: impl std::fmt::Display) -> Error {
    Error::new_spanned(tokens, message)
}

/// The tokens as a person would write them, for a message.
fn text(tokens: &impl ToTokens) -> String {
    let mut text = tokens.to_token_stream().to_string();
    // Token streams print with a space between any two tokens.
    for (spaced, tight) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" < ", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        (" ;", ";"),
        ("( ", "("),
        (" )", ")"),
        ("[ ", "["),
        (" ]", "]"),
        ("& ", "&"),
    ] {
        text = text.replace(spaced, tight);
    }
    text
}
