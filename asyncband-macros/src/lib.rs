//! The `channel!` procedural macro of asyncband.
//!
//! Use it through `asyncband::channel!`: that `macro_rules!` front passes the
//! path of the `asyncband` crate (`$crate`) in, so the expansion reaches the
//! runtime even when the dependency is renamed.
//!
//! The macro runs in three steps, one module each:
//!
//! - `parse`: tokens to an `Input`, the pieces as written;
//! - `validate`: the rules of the grammar and of literal values, every
//!   mistake reported at once;
//! - `expand`: the const-generic constructor, or on error the messages
//!   beside a plausible stand-in expression.

#![forbid(unsafe_code)]

mod expand;
mod parse;
mod validate;

use proc_macro::TokenStream;

/// Expands `channel!($crate; TOPOLOGY, bounded = CAP | unbounded, TYPE [, inline = BYTES] [, wait = spin | yield | park])`
/// to `$crate::TOPOLOGY::Bounded::<TYPE, CAP[, BYTES[, $crate::wait::POLICY]]>::channel()`
/// (or `Unbounded::<TYPE[, …]>`). Documented on `asyncband::channel!`.
#[proc_macro]
pub fn channel(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as parse::Input);
    match validate::channel(&input) {
        Ok(channel) => expand::channel(&channel),
        Err(rejected) => expand::rejected(&rejected),
    }
    .into()
}
