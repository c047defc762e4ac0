//! Expansion: the const-generic constructor of the channel.
//!
//! `channel!(mpsc, bounded = 64, T, inline = 256)` becomes
//! `$crate::mpsc::Bounded::<T, 64, 256>::channel()`, the very expression a
//! user would write without the macro, so both have the same type. Every path
//! starts at the crate path passed in, so the expansion needs neither the
//! prelude nor the name `asyncband`.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{ToTokens, quote};
use syn::Expr;

use crate::validate::{Channel, Flavour, Rejected, Value};

/// `KRATE::TOPOLOGY::Bounded::<T, CAP[, INLINE[, WAIT]]>::channel()`, or
/// `Unbounded::<T[, INLINE[, WAIT]]>`.
pub(crate) fn channel(channel: &Channel) -> TokenStream {
    let Channel {
        krate,
        module,
        flavour,
        payload,
        inline,
        wait,
    } = channel;
    let payload = if let Some(ty) = payload {
        ty.to_token_stream()
    } else {
        quote!(_)
    };
    // A policy names the budget before it, the default one if none is given.
    let inline = match (inline, wait) {
        (Some(bytes), _) => {
            let bytes = value(bytes);
            Some(quote!(, #bytes))
        }
        (None, Some(_)) => Some(quote!(, { ::core::primitive::usize::MAX })),
        (None, None) => None,
    };
    let wait = wait.as_ref().map(|policy| {
        // Named with the span of the user's word, for "go to definition".
        let name = match policy.to_string().as_str() {
            "spin" => "Spin",
            "yield" => "Yield",
            _ => "Park",
        };
        let policy = Ident::new(name, policy.span());
        quote!(, #krate::wait::#policy)
    });
    let (name, capacity) = match flavour {
        // Named with the span of the user's keyword, so that "go to
        // definition" on `bounded` reaches the flavour type.
        Flavour::Bounded { keyword, capacity } => {
            let capacity = value(capacity);
            (Ident::new("Bounded", *keyword), Some(quote!(, #capacity)))
        }
        Flavour::Unbounded { keyword } => (Ident::new("Unbounded", *keyword), None),
    };
    quote! {
        #krate::#module::#name::<#payload #capacity #inline #wait>::channel()
    }
}

/// Every error as a `compile_error!`, beside the stand-in channel: the
/// expression keeps a plausible type, so IDEs and the code after the macro
/// stay calm.
pub(crate) fn rejected(rejected: &Rejected) -> TokenStream {
    let errors = rejected.error.to_compile_error();
    let stand_in = channel(&rejected.stand_in);
    quote! {
        {
            #errors
            #stand_in
        }
    }
}

/// A const argument: a literal as it is, anything else in the block that a
/// const argument which is not a literal or a plain path needs.
fn value(value: &Value) -> TokenStream {
    match value {
        Value::Given(literal @ Expr::Lit(_)) => literal.to_token_stream(),
        Value::Given(expression) => quote!({ #expression }),
        Value::StandIn(n) => Literal::usize_unsuffixed(*n).into_token_stream(),
    }
}
