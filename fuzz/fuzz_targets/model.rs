//! The model-based tests (`tests/model.rs`) with a fuzzer's input for their
//! choices: the first byte picks one of the twelve flavours (the six, bounded
//! at capacities 1, 2 and 4), the rest scripts every operation and argument
//! of one sequence ([`XorShift::scripted`]). Every result, query and live
//! value is compared with the reference model after each operation, as in
//! the tests, so a disagreement or a value dropped twice is a crash.
//!
//! Run with `cargo x fuzz [SECONDS]` (nightly and cargo-fuzz).

#![no_main]

use asyncband_tests::XorShift;
use libfuzzer_sys::fuzz_target;

#[allow(
    dead_code,
    unused_imports,
    reason = "the test file's threaded tests and their helpers are compiled out here"
)]
#[path = "../../tests/model.rs"]
mod model;

fuzz_target!(|data: &[u8]| {
    let Some((&flavour, script)) = data.split_first() else {
        return;
    };
    let rng = &mut XorShift::scripted(script);
    match flavour % 12 {
        0 => model::spsc_bounded_1::run_with(rng),
        1 => model::spsc_bounded_2::run_with(rng),
        2 => model::spsc_bounded_4::run_with(rng),
        3 => model::spsc_unbounded::run_with(rng),
        4 => model::mpsc_bounded_1::run_with(rng),
        5 => model::mpsc_bounded_2::run_with(rng),
        6 => model::mpsc_bounded_4::run_with(rng),
        7 => model::mpsc_unbounded::run_with(rng),
        8 => model::mpmc_bounded_1::run_with(rng),
        9 => model::mpmc_bounded_2::run_with(rng),
        10 => model::mpmc_bounded_4::run_with(rng),
        _ => model::mpmc_unbounded::run_with(rng),
    }
});
