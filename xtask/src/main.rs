//! `cargo x <task>`: the workflows of asyncband, the same for people and CI.
//!
//! Dependency-free: each task runs `cargo` (and, for the verification tasks,
//! the nightly toolchain) with the right flags and environment, printing
//! each command before it runs it.

mod bench;

use std::process::{Command, ExitCode};
use std::time::Instant;

const USAGE: &str = "usage: cargo x <task> [args]

tasks:
  ci             what CI runs (.ci/run): fmt check, the README test
                 command, clippy, doc, `cargo bench --no-run`, quick loom
  test           the README test command: cargo test --workspace
  loom [--quick] every loom model (LOOM_MAX_PREEMPTIONS=2, --release);
                 --quick runs the subset CI runs
  miri           the core's unit tests, a threaded subset of the
                 integration tests and the single-threaded misuse tests
                 under Miri (nightly, strict provenance)
  tsan           the stress tests under ThreadSanitizer (nightly)
  stress [SCALE] the stress tests at SCALE (default 20) times their CI size
  fuzz [SECONDS] the model-based tests driven by libFuzzer for SECONDS
                 (default 600; nightly and cargo-fuzz, installed if missing)
  ui [--bless]   the trybuild ui tests; --bless rewrites the .stderr files
  doc            rustdoc for the three crates with warnings denied
  msrv           the three crates and the behavioural tests on the
                 declared rust-version (installs that toolchain)
  bench-report   run the benchmark suite against every peer and write
                 benches/RESULTS.md (see benches/README.md)
  syscalls [N]   stream N values (default 1000000) through every flavour,
                 spin, yield and park, under strace; fails if a spin
                 channel's streaming threads make a futex, sched_yield or
                 membarrier call, or a yield channel's a futex or
                 membarrier call (Linux, strace)
";

/// The loom models CI runs: the fast half, one per protocol family.
const LOOM_QUICK: &[&str] = &[
    "spsc_ring_hands_values_over_in_order",
    "list_crosses_block_boundaries_without_losing_order",
    "a_parked_receiver_is_woken_by_a_send_on_each_producer_arity",
    "a_receiver_asleep_on_a_large_value_being_written_is_woken",
    "a_parked_single_sender_is_woken_when_a_slot_frees",
    "a_permit_dropped_while_a_sender_waits_wakes_it",
    "units_push_from_two_threads_each_land_once",
    "a_granted_waiter_takes_its_units_without_the_lock",
    "close_racing_with_send_never_loses_an_accepted_value",
    "dropping_the_last_receiver_drops_queued_values_exactly_once",
    "a_waiting_reservation_races_with_the_last_receiver_dropping",
    "a_waiting_sender_wakes_a_receiver_a_forgotten_recv_future_left_asleep",
    "a_parked_receiver_is_woken_by_the_one_send_a_forgotten_recv_future_was_notified_of",
    "a_parked_receiver_is_woken_by_the_one_send_behind_two_forgotten_recv_futures",
    "two_sends_reach_two_parked_receivers_behind_two_forgotten_recv_futures",
    "a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on",
    "a_thread_parked_on_two_receives_is_woken_by_either_and_takes_exactly_one",
    "a_close_races_a_busy_sender_and_receiver",
    "a_try_recv_after_its_own_send_waits_out_a_write_ahead_of_it_mpsc_ring",
    "a_polling_try_recv_never_reports_empty_before_a_published_value",
    "a_polling_try_recv_never_reports_empty_past_a_claim_waiting_for_a_reader",
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((task, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::FAILURE;
    };
    let started = Instant::now();
    let result = match task.as_str() {
        "ci" => ci(),
        "test" => test(),
        "loom" => loom(rest.iter().any(|a| a == "--quick")),
        "miri" => miri(),
        "tsan" => tsan(),
        "stress" => stress(rest.first().map_or("20", String::as_str)),
        "fuzz" => fuzz(rest.first().map_or("600", String::as_str)),
        "ui" => ui(rest.iter().any(|a| a == "--bless")),
        "doc" => doc(),
        "msrv" => msrv(),
        "bench-report" => bench::report(rest),
        "syscalls" => syscalls(rest.first().map_or("1000000", String::as_str)),
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(())
        }
        _ => Err(format!("unknown task `{task}`\n\n{USAGE}")),
    };
    match result {
        Ok(()) => {
            eprintln!("cargo x {task}: done in {:.0?}", started.elapsed());
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("cargo x {task}: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `program args` with `envs`, echoing it; an error if it fails.
fn run(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    let shown: Vec<String> = envs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    eprintln!("+ {} {program} {}", shown.join(" "), args.join(" "));
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .status()
        .map_err(|err| format!("could not run {program}: {err}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}

fn cargo(args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    run("cargo", args, envs)
}

/// CI is `.ci/run`, so that people and CI run the same script.
fn ci() -> Result<(), String> {
    run("bash", &[".ci/run"], &[])
}

fn test() -> Result<(), String> {
    cargo(&["test", "--workspace"], &[])
}

/// loom builds go to their own target directory: `--cfg asyncband_loom`
/// changes every crate's build, and sharing `target/` would rebuild the
/// whole workspace twice per switch.
fn loom(quick: bool) -> Result<(), String> {
    let mut args = vec![
        "test",
        "-p",
        "asyncband-core",
        "--lib",
        "--release",
        "--",
        "--test-threads=1",
    ];
    if quick {
        args.extend(LOOM_QUICK);
    }
    cargo(
        &args,
        &[
            ("RUSTFLAGS", "--cfg asyncband_loom"),
            ("LOOM_MAX_PREEMPTIONS", "2"),
            ("CARGO_TARGET_DIR", "target/loom"),
        ],
    )
}

fn miri() -> Result<(), String> {
    run(
        "rustup",
        &[
            "component",
            "add",
            "miri",
            "rust-src",
            "--toolchain",
            "nightly",
        ],
        &[],
    )?;
    let strict = "-Zmiri-strict-provenance";
    miri_test(&["-p", "asyncband-core", "--lib"], strict)?;
    miri_test(&["-p", "asyncband-tests", "--test", "miri_subset"], strict)?;
    // The misuse tests that run on one thread. The large-value one is left
    // out: it leaks its value in flight by design, which Miri reports.
    miri_test(
        &[
            "-p",
            "asyncband-tests",
            "--test",
            "misuse",
            "--",
            "panicking_iterator",
            "polled_again",
            "waker_that_panics",
            "waker_panics_when_dropped",
            "--skip",
            "large_value",
        ],
        strict,
    )?;
    // The liveness tests, a few sequences each: many waiters linked at
    // once, some of them forgotten, whose leaks are the test's own.
    miri_test(
        &["-p", "asyncband-tests", "--test", "liveness"],
        "-Zmiri-strict-provenance -Zmiri-ignore-leaks",
    )
}

/// `cargo +nightly miri test ARGS` with `flags` as `MIRIFLAGS`, built in
/// `target/miri`.
fn miri_test(args: &[&str], flags: &str) -> Result<(), String> {
    let mut command = vec!["+nightly", "miri", "test"];
    command.extend_from_slice(args);
    cargo(
        &command,
        &[("MIRIFLAGS", flags), ("CARGO_TARGET_DIR", "target/miri")],
    )
}

fn tsan() -> Result<(), String> {
    run(
        "rustup",
        &["component", "add", "rust-src", "--toolchain", "nightly"],
        &[],
    )?;
    cargo(
        &[
            "+nightly",
            "test",
            "-Zbuild-std",
            "--target",
            "x86_64-unknown-linux-gnu",
            "-p",
            "asyncband-tests",
            "--test",
            "stress",
        ],
        &[
            ("RUSTFLAGS", "-Zsanitizer=thread"),
            ("RUSTDOCFLAGS", "-Zsanitizer=thread"),
            ("TSAN_OPTIONS", "halt_on_error=1"),
            ("CARGO_TARGET_DIR", "target/tsan"),
        ],
    )
}

fn stress(scale: &str) -> Result<(), String> {
    cargo(
        &[
            "test",
            "--release",
            "-p",
            "asyncband-tests",
            "--test",
            "stress",
            "--",
            "--test-threads=1",
        ],
        &[("ASYNCBAND_STRESS", scale)],
    )
}

/// `fuzz/` is its own workspace (nightly, libFuzzer), so it runs from there.
fn fuzz(seconds: &str) -> Result<(), String> {
    let installed = Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|output| output.status.success());
    if !installed {
        cargo(&["install", "cargo-fuzz", "--locked"], &[])?;
    }
    let max_time = format!("-max_total_time={seconds}");
    run(
        "bash",
        &[
            "-c",
            "cd fuzz && exec cargo +nightly fuzz run model -- \"$0\"",
            &max_time,
        ],
        &[],
    )
}

fn ui(bless: bool) -> Result<(), String> {
    let envs: &[(&str, &str)] = if bless {
        &[("TRYBUILD", "overwrite")]
    } else {
        &[]
    };
    cargo(&["test", "-p", "asyncband-ui-tests"], envs)
}

fn doc() -> Result<(), String> {
    cargo(
        &[
            "doc",
            "--no-deps",
            "-p",
            "asyncband",
            "-p",
            "asyncband-core",
            "-p",
            "asyncband-macros",
        ],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )
}

/// The `rust-version` the workspace declares, read from its `Cargo.toml`.
fn declared_msrv() -> Result<String, String> {
    let manifest = std::fs::read_to_string("Cargo.toml")
        .map_err(|err| format!("could not read Cargo.toml: {err}"))?;
    manifest
        .lines()
        .find_map(|line| {
            let value = line.trim().strip_prefix("rust-version")?.trim_start();
            Some(value.strip_prefix('=')?.trim().trim_matches('"').to_owned())
        })
        .ok_or_else(|| "no `rust-version` in Cargo.toml".to_owned())
}

/// Builds the published crates and runs the behavioural and model-based
/// tests on the declared minimum toolchain, in its own target directory.
fn msrv() -> Result<(), String> {
    let version = declared_msrv()?;
    let toolchain = format!("+{version}");
    run(
        "rustup",
        &["toolchain", "install", &version, "--profile", "minimal"],
        &[],
    )?;
    let envs = [("CARGO_TARGET_DIR", "target/msrv")];
    cargo(
        &[
            &toolchain,
            "check",
            "-p",
            "asyncband",
            "-p",
            "asyncband-core",
            "-p",
            "asyncband-macros",
        ],
        &envs,
    )?;
    cargo(
        &[
            &toolchain,
            "test",
            "-p",
            "asyncband-tests",
            "--test",
            "scenarios",
            "--test",
            "permits",
            "--test",
            "model",
        ],
        &envs,
    )
}

/// The system calls a channel's waiting can make.
const WAIT_CALLS: [&str; 3] = ["futex", "sched_yield", "membarrier"];

/// Runs `benches/examples/spin_syscalls.rs` under `strace -f -k` and counts,
/// per cell, the [`WAIT_CALLS`] its threads make between their start and
/// stop markers. A call with `malloc` or `free` on its stack is the
/// allocator's (an unbounded channel allocates blocks as its senders run
/// ahead) and is counted apart. Fails if a spin cell has any other, or a
/// yield cell any but `sched_yield`.
fn syscalls(messages: &str) -> Result<(), String> {
    cargo(
        &[
            "build",
            "--release",
            "-p",
            "asyncband-benches",
            "--example",
            "spin_syscalls",
        ],
        &[],
    )?;
    let trace = "target/spin_syscalls.strace";
    let filter = format!("trace={},statx,newfstatat,stat", WAIT_CALLS.join(","));
    run(
        "strace",
        &[
            "-f",
            "-qq",
            "-k",
            "-e",
            &filter,
            "-o",
            trace,
            "target/release/examples/spin_syscalls",
            "--messages",
            messages,
        ],
        &[],
    )?;
    let text = std::fs::read_to_string(trace).map_err(|err| format!("{trace}: {err}"))?;
    let cells = count_wait_calls(&text);
    let mut failed = Vec::new();
    println!(
        "{:<32} {:>8} {:>12} {:>11} {:>10}",
        "cell", "futex", "sched_yield", "membarrier", "allocator"
    );
    for (cell, [futex, yields, barriers, allocator]) in &cells {
        println!("{cell:<32} {futex:>8} {yields:>12} {barriers:>11} {allocator:>10}");
        let spin = cell.starts_with("spin/") && futex + yields + barriers > 0;
        if spin || cell.starts_with("yield/") && futex + barriers > 0 {
            failed.push(cell.as_str());
        }
    }
    for policy in ["spin/", "yield/"] {
        if cells.iter().all(|(cell, _)| !cell.starts_with(policy)) {
            return Err(format!("{trace}: no {policy} cell's markers found"));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "spin or yield cells made calls their policy rules out while streaming: {}",
            failed.join(", ")
        ))
    }
}

/// Per cell, in order of appearance: `futex`, `sched_yield` and
/// `membarrier` calls made between a thread's markers, and how many of
/// those (any kind) came from the allocator. strace prints a call's stack
/// (` > ` lines) after the line that completes it: the call's own line, or
/// its `<... resumed>` line when another thread's output came between.
fn count_wait_calls(trace: &str) -> Vec<(String, [u64; 4])> {
    type Call = (usize, usize, bool);
    let mut cells: Vec<(String, [u64; 4])> = Vec::new();
    let mut streaming = std::collections::HashMap::new();
    let mut unfinished: std::collections::HashMap<&str, Call> = std::collections::HashMap::new();
    // The completed call whose stack is being read: its cell, its kind, and
    // whether its stack so far names the allocator.
    let mut pending: Option<Call> = None;
    let settle = |cells: &mut Vec<(String, [u64; 4])>, pending: &mut Option<Call>| {
        if let Some((cell, kind, allocator)) = pending.take() {
            cells[cell].1[if allocator { 3 } else { kind }] += 1;
        }
    };
    for line in trace.lines() {
        if let Some(frame) = line.strip_prefix(" > ") {
            if let Some(call) = pending.as_mut() {
                call.2 |= ["malloc", "free", "morecore"]
                    .iter()
                    .any(|f| frame.contains(f));
            }
            continue;
        }
        settle(&mut cells, &mut pending);
        let Some((pid, rest)) = line.split_once(' ') else {
            continue;
        };
        let rest = rest.trim_start();
        if rest.starts_with("<... ") {
            pending = unfinished.remove(pid);
            continue;
        }
        if let Some(at) = rest.find("\"/.asyncband-stream/") {
            let marker = &rest[at + 20..];
            let marker = &marker[..marker.find('"').unwrap_or(marker.len())];
            if let Some(cell) = marker.strip_prefix("start/") {
                let index = cells
                    .iter()
                    .position(|(name, _)| name == cell)
                    .unwrap_or_else(|| {
                        cells.push((cell.to_owned(), [0; 4]));
                        cells.len() - 1
                    });
                streaming.insert(pid, index);
            } else {
                streaming.remove(pid);
            }
            continue;
        }
        let Some(&cell) = streaming.get(pid) else {
            continue;
        };
        if let Some(kind) = WAIT_CALLS
            .iter()
            .position(|call| rest.starts_with(&format!("{call}(")))
        {
            if rest.ends_with("<unfinished ...>") {
                unfinished.insert(pid, (cell, kind, false));
            } else {
                pending = Some((cell, kind, false));
            }
        }
    }
    settle(&mut cells, &mut pending);
    cells
}
