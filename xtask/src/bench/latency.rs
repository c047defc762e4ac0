//! Cell 8 of the report: one-way latency, from the `latency` example of
//! `asyncband-benches` (a binary of its own, since divan measures
//! throughput).
//!
//! The report builds the example with the benches' profile and runs it
//! twice: every implementation of every cell (the barrier as the
//! environment leaves it by default: `ASYNCBAND_MEMBARRIER` is removed),
//! then asyncband's entries alone with `ASYNCBAND_MEMBARRIER=off`. Each run
//! prints one line per entry after `#` lines; this module reads them and
//! writes one table per cell.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{cargo, display_name, json_string};

/// The environment variable that turns asyncband's `membarrier` off.
const BARRIER_ENV: &str = "ASYNCBAND_MEMBARRIER";

/// What both runs of the example measured.
pub(super) struct Latency {
    /// The example's description of the runs (its second `#` line).
    method: String,
    /// Whether the default run used `membarrier`.
    barrier_on: bool,
    rows: Vec<Row>,
}

/// One entry of one run.
struct Row {
    cell: String,
    implementation: String,
    /// From the run with `ASYNCBAND_MEMBARRIER=off`.
    barrier_off: bool,
    messages: u64,
    /// p50, p99, p99.9 and max, µs.
    quantiles: [f64; 4],
    /// asyncband's `membarrier` calls per 1,000 messages.
    membarriers: Option<f64>,
}

/// Builds the example with the benches' profile and finds it.
pub(super) fn build(root: &Path) -> Result<PathBuf, String> {
    eprintln!("building the latency example…");
    let output = cargo()
        .current_dir(root)
        .args([
            "build",
            "--profile",
            "bench",
            "-p",
            "asyncband-benches",
            "--example",
            "latency",
            "--message-format",
            "json-render-diagnostics",
        ])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !output.status.success() {
        return Err("building the latency example failed".into());
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.contains(r#""reason":"compiler-artifact""#))
        .filter(|line| line.contains(r#""target":{"kind":["example"]"#))
        .find(|line| json_string(line, "name").as_deref() == Some("latency"))
        .and_then(|line| json_string(line, "executable"))
        .map(PathBuf::from)
        .ok_or_else(|| "cargo built no `latency` example".into())
}

/// Runs the example twice (module docs): `messages` per entry and round,
/// `rounds` rounds.
pub(super) fn measure(binary: &Path, messages: usize, rounds: usize) -> Result<Latency, String> {
    eprintln!("measuring latency…");
    let args = [
        "--messages".to_owned(),
        messages.to_string(),
        "--rounds".to_owned(),
        rounds.to_string(),
    ];
    let mut default = Command::new(binary);
    default.args(&args).env_remove(BARRIER_ENV);
    let default = run(default)?;
    let mut off = Command::new(binary);
    off.args(&args)
        .args(["--filter", "asyncband"])
        .env(BARRIER_ENV, "off");
    let off = run(off)?;

    let header = |output: &str, index: usize| {
        output
            .lines()
            .filter_map(|line| line.strip_prefix("# "))
            .nth(index)
            .map(str::to_owned)
    };
    let barrier_on = header(&default, 0).is_some_and(|line| line.starts_with("membarrier on"));
    let method = header(&default, 1).unwrap_or_default();
    let mut rows = parse(&default, false)?;
    rows.extend(parse(&off, true)?);
    Ok(Latency {
        method,
        barrier_on,
        rows,
    })
}

/// Runs the example; its standard output.
fn run(mut command: Command) -> Result<String, String> {
    let output = command
        .output()
        .map_err(|e| format!("running the latency example: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        return Err(format!(
            "the latency example failed:\n{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(stdout)
}

/// The entry lines of one run.
fn parse(output: &str, barrier_off: bool) -> Result<Vec<Row>, String> {
    output
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let bad = || format!("bad latency line `{line}`");
            let number = |i: usize| -> Result<f64, String> {
                fields
                    .get(i)
                    .and_then(|field| field.parse().ok())
                    .ok_or_else(bad)
            };
            if fields.len() != 8 {
                return Err(bad());
            }
            Ok(Row {
                cell: fields[0].to_owned(),
                implementation: fields[1].to_owned(),
                barrier_off,
                messages: fields[2].parse().map_err(|_| bad())?,
                quantiles: [number(3)?, number(4)?, number(5)?, number(6)?],
                membarriers: fields[7].parse().ok(),
            })
        })
        .collect()
}

/// How the report titles a cell of the example.
fn title(cell: &str) -> String {
    match cell {
        "threads_spsc" => "threads / SPSC 1 → 1, receiver in `recv_blocking`",
        "threads_mpsc" => "threads / MPSC 4 → 1, receiver in `recv_blocking`",
        "tokio_spsc" => "tokio, two workers / SPSC 1 → 1, receiver in `recv().await`",
        "tokio_mpsc" => "tokio, two workers / MPSC 4 → 1, receiver in `recv().await`",
        "bursts" => "threads / SPSC, bursts of 1,000 every 2 ms, receiver in `recv_blocking`",
        other => other,
    }
    .to_owned()
}

/// Writes the latency section of RESULTS.md.
pub(super) fn render(w: &mut String, latency: &Latency) {
    let _ = writeln!(w, "### 9. Latency\n");
    let _ = writeln!(
        w,
        "One-way latency in µs, from a message's send to a receiver that was waiting for it, producers paced \
         (`benches/examples/latency.rs`; what each cell measures is in [README.md](README.md), cell 9): {}. \
         Percentiles by nearest rank over every message of every round. `membarrier` was {} in the default run; \
         the rows marked *membarrier off* come from a second run of asyncband alone with `ASYNCBAND_MEMBARRIER=off`.\n",
        latency.method,
        if latency.barrier_on {
            "in use"
        } else {
            "not in use (not offered, or turned off)"
        }
    );
    let mut cells: Vec<&str> = Vec::new();
    for row in &latency.rows {
        if !cells.contains(&row.cell.as_str()) {
            cells.push(&row.cell);
        }
    }
    for cell in cells {
        let _ = writeln!(w, "#### {}\n", title(cell));
        let _ = writeln!(
            w,
            "| implementation | messages | p50 | p99 | p99.9 | max | `membarrier` per 1,000 messages |"
        );
        let _ = writeln!(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        let mut rows: Vec<&Row> = latency.rows.iter().filter(|row| row.cell == cell).collect();
        rows.sort_by(|a, b| a.quantiles[1].total_cmp(&b.quantiles[1]));
        for row in rows {
            let mut name = display_name(&row.implementation);
            if row.implementation.starts_with("Asyncband") {
                name = if row.barrier_off {
                    format!("{name}, *membarrier off*")
                } else {
                    format!("**{name}**")
                };
            }
            let [p50, p99, p999, max] = row.quantiles;
            let membarriers = row
                .membarriers
                .map(|calls| format!("{calls:.2}"))
                .unwrap_or_default();
            let _ = writeln!(
                w,
                "| {name} | {} | {p50:.2} | {p99:.2} | {p999:.2} | {max:.2} | {membarriers} |",
                row.messages
            );
        }
        let _ = writeln!(w);
    }
}
