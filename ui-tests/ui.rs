//! Compile-time rejection tests of `channel!` and of the const-generic rules
//! (trybuild). `fail/` holds one mistake per file, with the compiler's
//! output in the `.stderr` beside it; `pass/` holds the accepted forms.
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite`, then read them.
//!
//! # Why the cases are built, not checked
//!
//! The const-generic rules (`CAP`, `INLINE`) are `const` blocks inside the
//! generic constructors, evaluated when a constructor is instantiated: at
//! monomorphization, which `cargo build` reaches and `cargo check` does not.
//! trybuild runs `cargo build` when the cases it runs include a pass case,
//! and `cargo check` otherwise. So both sets are registered in one
//! `TestCases` below, and `fail/const_*` and `fail/inline_too_small*` are
//! really rejected. A filtered run that selects only those fail cases
//! (`cargo test --test ui -- trybuild=const_`) would check instead, and they
//! would compile: run them together with a pass case
//! (`-- trybuild=const_ trybuild=pass/forms`).

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("fail/*.rs");
    cases.pass("pass/*.rs");
}
