//! Parsing: `$crate; TOPOLOGY, ARG, ARG, …` into an [`Input`], the pieces as
//! the user wrote them.
//!
//! After the topology, the arguments are read as a free list of options and
//! types, in any order and any number: whether one is missing, repeated or
//! misplaced is a rule that [`validate`](crate::validate) checks, so it can
//! say exactly which. Parsing keeps going past an unknown topology; a piece
//! it cannot read at all ends it, and what came before still goes on to
//! validation, so the user sees every mistake at once.

use proc_macro2::{Ident, TokenTree};
use quote::{ToTokens, TokenStreamExt};
use syn::parse::{Lookahead1, Parse, ParseStream};
use syn::{Error, Expr, Path, Token, Type};

/// The words of the grammar.
pub(crate) mod kw {
    syn::custom_keyword!(spsc);
    syn::custom_keyword!(mpsc);
    syn::custom_keyword!(mpmc);
    syn::custom_keyword!(bounded);
    syn::custom_keyword!(unbounded);
    syn::custom_keyword!(inline);
    syn::custom_keyword!(wait);
    syn::custom_keyword!(spin);
    syn::custom_keyword!(park);
}

/// What the user wrote, checked only for its shape.
pub(crate) struct Input {
    /// The path of the `asyncband` crate: `$crate` from the `macro_rules!` front.
    pub krate: Path,
    /// `None` when the topology is missing or not one of the three.
    pub topology: Option<Topology>,
    /// Options and types after the topology, in the order written.
    pub args: Vec<Arg>,
    /// What parsing rejected: an unknown topology, or the piece that ended it.
    pub errors: Vec<Error>,
    /// Whether parsing reached the end of the input, so that a piece absent
    /// from `args` is really missing rather than unread.
    pub complete: bool,
}

/// `spsc`, `mpsc` or `mpmc`.
pub(crate) enum Topology {
    Spsc(kw::spsc),
    Mpsc(kw::mpsc),
    Mpmc(kw::mpmc),
}

/// One argument after the topology.
pub(crate) enum Arg {
    Bounded(Setting<kw::bounded>),
    Unbounded(Setting<kw::unbounded>),
    Inline(Setting<kw::inline>),
    Wait(Setting<kw::wait>),
    Payload(Type),
}

/// An option: its keyword, and `= value` if one was written.
pub(crate) struct Setting<K> {
    pub keyword: K,
    pub value: Option<(Token![=], Expr)>,
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let krate = Path::parse_mod_style(input)?;
        input.parse::<Token![;]>()?;

        let mut errors = Vec::new();
        let (topology, mut needs_comma) = topology(input, &mut errors)?;
        let mut args = Vec::new();
        let mut complete = true;
        while !input.is_empty() {
            if needs_comma {
                let lookahead = input.lookahead1();
                if !lookahead.peek(Token![,]) {
                    errors.push(expected(input, lookahead));
                    complete = false;
                    break;
                }
                input.parse::<Token![,]>()?;
                if input.is_empty() {
                    break;
                }
            }
            match input.parse() {
                Ok(arg) => args.push(arg),
                Err(error) => {
                    errors.push(error);
                    complete = false;
                    break;
                }
            }
            needs_comma = true;
        }
        if !complete {
            skip(input, |_| false)?;
        }
        Ok(Input {
            krate,
            topology,
            args,
            errors,
            complete,
        })
    }
}

/// Reads the topology. On a mistake, records it and moves on to the next
/// argument; the flag says whether a `,` must come before that argument.
fn topology(input: ParseStream, errors: &mut Vec<Error>) -> syn::Result<(Option<Topology>, bool)> {
    let lookahead = input.lookahead1();
    let error = if lookahead.peek(kw::spsc) {
        return Ok((Some(Topology::Spsc(input.parse()?)), true));
    } else if lookahead.peek(kw::mpsc) {
        return Ok((Some(Topology::Mpsc(input.parse()?)), true));
    } else if lookahead.peek(kw::mpmc) {
        return Ok((Some(Topology::Mpmc(input.parse()?)), true));
    } else if let Some((option, _)) = input.cursor().ident().filter(|_| {
        input.peek(kw::bounded)
            || input.peek(kw::unbounded)
            || input.peek(kw::inline)
            || input.peek(kw::wait)
    }) {
        // `channel!(bounded = 64, T)`: only the topology is missing.
        errors.push(Error::new(
            option.span(),
            format!("missing topology: expected one of `spsc`, `mpsc`, `mpmc` before `{option}`"),
        ));
        return Ok((None, false));
    } else {
        expected(input, lookahead)
    };
    errors.push(error);
    skip(input, is_comma)?;
    Ok((None, true))
}

/// The "expected …" error of `lookahead`, with what was found instead.
fn expected(input: ParseStream, lookahead: Lookahead1) -> Error {
    let error = lookahead.error();
    match input.cursor().token_tree() {
        Some((found, _)) => Error::new(error.span(), format!("{error}, found `{found}`")),
        None => error,
    }
}

fn is_comma(token: &TokenTree) -> bool {
    matches!(token, TokenTree::Punct(punct) if punct.as_char() == ',')
}

/// Consumes tokens up to the first one (at this nesting level) for which
/// `stop` holds, or to the end.
fn skip(input: ParseStream, stop: impl Fn(&TokenTree) -> bool) -> syn::Result<()> {
    input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((token, next)) = rest.token_tree() {
            if stop(&token) {
                break;
            }
            rest = next;
        }
        Ok(((), rest))
    })
}

impl Parse for Arg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(kw::bounded) {
            input.parse().map(Arg::Bounded)
        } else if input.peek(kw::unbounded) {
            input.parse().map(Arg::Unbounded)
        } else if input.peek(kw::inline) {
            input.parse().map(Arg::Inline)
        } else if input.peek(kw::wait) {
            input.parse().map(Arg::Wait)
        } else {
            payload(input).map(Arg::Payload)
        }
    }
}

/// Reads the payload type, or says which token is not one.
fn payload(input: ParseStream) -> syn::Result<Type> {
    let fork = input.fork();
    match fork.parse::<Type>() {
        Ok(_) => input.parse(),
        Err(error) => match input.cursor().token_tree() {
            Some((found, _)) => Err(Error::new_spanned(
                &found,
                format!("expected the payload type, found `{found}`"),
            )),
            None => Err(error),
        },
    }
}

impl<K: Parse> Parse for Setting<K> {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let keyword = input.parse()?;
        let lookahead = input.lookahead1();
        let value = if lookahead.peek(Token![=]) {
            Some((input.parse()?, input.parse()?))
        } else if input.is_empty() || lookahead.peek(Token![,]) {
            None
        } else {
            return Err(expected(input, lookahead));
        };
        Ok(Setting { keyword, value })
    }
}

impl Topology {
    /// The module of this topology, named with the span of the user's keyword.
    pub(crate) fn module(&self) -> Ident {
        match self {
            Topology::Spsc(kw) => Ident::new("spsc", kw.span),
            Topology::Mpsc(kw) => Ident::new("mpsc", kw.span),
            Topology::Mpmc(kw) => Ident::new("mpmc", kw.span),
        }
    }
}

impl ToTokens for Topology {
    fn to_tokens(&self, tokens: &mut proc_macro2::TokenStream) {
        tokens.append(self.module());
    }
}

impl<K: ToTokens> ToTokens for Setting<K> {
    fn to_tokens(&self, tokens: &mut proc_macro2::TokenStream) {
        self.keyword.to_tokens(tokens);
        if let Some((eq, value)) = &self.value {
            eq.to_tokens(tokens);
            value.to_tokens(tokens);
        }
    }
}

impl ToTokens for Arg {
    fn to_tokens(&self, tokens: &mut proc_macro2::TokenStream) {
        match self {
            Arg::Bounded(setting) => setting.to_tokens(tokens),
            Arg::Unbounded(setting) => setting.to_tokens(tokens),
            Arg::Inline(setting) => setting.to_tokens(tokens),
            Arg::Wait(setting) => setting.to_tokens(tokens),
            Arg::Payload(ty) => ty.to_tokens(tokens),
        }
    }
}
