//! Cell 9 of the report: one-way latency, from the `latency` example of
//! `asyncband-benches` (a binary of its own, since divan measures
//! throughput).
//!
//! The report builds the example with the benches' profile and runs it in
//! a process per run of the report, one round each, alternating two
//! kinds: every implementation of every cell (the barrier as the
//! environment leaves it by default: `ASYNCBAND_MEMBARRIER` is removed),
//! and asyncband's entries alone with `ASYNCBAND_MEMBARRIER=off`. Wake-up
//! latency moves by a factor of two or more from one process to the next,
//! so one process decides nothing; as in the throughput cells, each
//! figure is the median over the processes ([`merge`]). Each
//! process prints one line per entry after `#` lines; this module reads
//! them, writes one table per cell, and gives the summary a row for each
//! percentile the targets name ([`summary`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{Bar, Summary, cargo, display_name, json_string};

/// The environment variable that turns asyncband's `membarrier` off.
const BARRIER_ENV: &str = "ASYNCBAND_MEMBARRIER";

/// What the runs of the example measured.
pub(super) struct Latency {
    /// How it ran: the example's description of one process (its second
    /// `#` line) and the number of processes.
    method: String,
    /// Whether the default run used `membarrier`.
    barrier_on: bool,
    rows: Vec<Row>,
}

/// One entry of one process, or its median over the processes
/// ([`merge`]).
#[derive(Clone, Debug, PartialEq)]
struct Row {
    cell: String,
    implementation: String,
    /// From the run with `ASYNCBAND_MEMBARRIER=off`.
    barrier_off: bool,
    /// Over all processes.
    messages: u64,
    /// p50, p99, p99.9 and max, µs: merged, the median over the processes
    /// of the first three and the largest max.
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

/// Runs the example in `processes` processes of each kind (module docs),
/// `messages` per entry, one round each.
pub(super) fn measure(binary: &Path, messages: usize, processes: usize) -> Result<Latency, String> {
    let mut header = None;
    let mut rows = Vec::new();
    for process in 0..processes {
        eprintln!("measuring latency, process {} of {processes}…", process + 1);
        let args = [
            "--messages".to_owned(),
            messages.to_string(),
            "--rounds".to_owned(),
            "1".to_owned(),
            "--rotate".to_owned(),
            process.to_string(),
        ];
        let mut default = Command::new(binary);
        default.args(&args).env_remove(BARRIER_ENV);
        let default = run(default)?;
        let mut off = Command::new(binary);
        off.args(&args)
            .args(["--filter", "asyncband"])
            .env(BARRIER_ENV, "off");
        let off = run(off)?;
        rows.extend(parse(&default, false)?);
        rows.extend(parse(&off, true)?);
        header.get_or_insert(default);
    }
    let header = header.unwrap_or_default();
    let line = |index: usize| {
        header
            .lines()
            .filter_map(|line| line.strip_prefix("# "))
            .nth(index)
            .map(str::to_owned)
    };
    let barrier_on = line(0).is_some_and(|line| line.starts_with("membarrier on"));
    let method = format!(
        "{processes} process(es) of each kind, each: {}",
        line(1).unwrap_or_default()
    );
    Ok(Latency {
        method,
        barrier_on,
        rows: merge(&rows),
    })
}

/// One row per entry (cell, implementation and kind of process), in the
/// order they first appear: messages summed, p50, p99 and p99.9 the median
/// over the processes (the mean of the middle two for an even count), max
/// the largest, `membarrier` calls the mean of the processes' rates.
fn merge(rows: &[Row]) -> Vec<Row> {
    let same = |a: &Row, b: &Row| {
        a.cell == b.cell && a.implementation == b.implementation && a.barrier_off == b.barrier_off
    };
    let mut merged: Vec<Row> = Vec::new();
    for row in rows {
        if merged.iter().any(|done| same(done, row)) {
            continue;
        }
        let group: Vec<&Row> = rows.iter().filter(|other| same(other, row)).collect();
        let median = |index: usize| {
            let mut values: Vec<f64> = group.iter().map(|row| row.quantiles[index]).collect();
            values.sort_by(f64::total_cmp);
            let middle = values.len() / 2;
            if values.len() % 2 == 1 {
                values[middle]
            } else {
                f64::midpoint(values[middle - 1], values[middle])
            }
        };
        let rates: Vec<f64> = group.iter().filter_map(|row| row.membarriers).collect();
        #[allow(clippy::cast_precision_loss, reason = "a handful of processes")]
        let membarriers =
            (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64);
        merged.push(Row {
            cell: row.cell.clone(),
            implementation: row.implementation.clone(),
            barrier_off: row.barrier_off,
            messages: group.iter().map(|row| row.messages).sum(),
            quantiles: [
                median(0),
                median(1),
                median(2),
                group.iter().map(|row| row.quantiles[3]).fold(0.0, f64::max),
            ],
            membarriers,
        });
    }
    merged
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

/// The cells with a target, in the order the summary lists them: the
/// bursts cell is there for its `membarrier` count.
const TARGET_CELLS: [&str; 4] = ["threads_spsc", "threads_mpsc", "tokio_spsc", "tokio_mpsc"];
/// The percentiles the target names: the index into `Row::quantiles` and
/// the label.
const TARGET_QUANTILES: [(usize, &str); 2] = [(0, "p50"), (1, "p99")];

/// One summary row per target cell and percentile: asyncband's figure from
/// the default run ÷ the lowest of the peers'. rtrb cannot wait, so, as in
/// the throughput cells, it is shown but is not a peer; nor is asyncband's
/// run with the barrier off.
pub(super) fn summary(latency: &Latency) -> Vec<Summary> {
    let mut rows = Vec::new();
    for cell in TARGET_CELLS {
        let in_cell = || latency.rows.iter().filter(move |row| row.cell == cell);
        let Some(asyncband) =
            in_cell().find(|row| row.implementation.starts_with("Asyncband") && !row.barrier_off)
        else {
            continue;
        };
        for (index, label) in TARGET_QUANTILES {
            let best = in_cell()
                .filter(|row| !row.implementation.starts_with("Asyncband"))
                .filter(|row| row.implementation != "Rtrb")
                .filter(|row| row.quantiles[index] > 0.0)
                .min_by(|a, b| a.quantiles[index].total_cmp(&b.quantiles[index]));
            let Some(best) = best else {
                continue;
            };
            rows.push(Summary {
                id: format!("latency::{cell}::{label}"),
                title: format!("latency / {cell} / {label}"),
                asyncband: display_name(&asyncband.implementation),
                ratio: asyncband.quantiles[index] / best.quantiles[index],
                best_peer: display_name(&best.implementation),
                rtrb_ratio: None,
                bar: Bar {
                    ratio: 1.0,
                    rtrb: None,
                },
            });
        }
    }
    rows
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

/// Writes the latency section of RESULTS.md; `summary` holds the rows of
/// [`summary`].
pub(super) fn render(w: &mut String, latency: &Latency, summary: &[Summary]) {
    let _ = writeln!(w, "### 9. Latency\n");
    let _ = writeln!(
        w,
        "One-way latency in µs, from a message's send to a receiver that was waiting for it, producers paced \
         (`benches/examples/latency.rs`; what each cell measures is in [README.md](README.md), cell 9): {}. \
         Each process gives a percentile by nearest rank over its messages; the tables show the median over the \
         processes, and the largest maximum. `membarrier` was {} in the default processes; \
         the rows marked *membarrier off* come from processes of asyncband alone with `ASYNCBAND_MEMBARRIER=off`, \
         alternating with them.\n",
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
        let verdicts: Vec<String> = summary
            .iter()
            .filter(|s| s.id.starts_with(&format!("latency::{cell}::")))
            .map(|s| {
                let label = s.id.rsplit("::").next().unwrap_or_default();
                format!("{label} **{:.2}** against {}", s.ratio, s.best_peer)
            })
            .collect();
        if verdicts.is_empty() {
            let _ = writeln!(w);
        } else {
            let _ = writeln!(
                w,
                "\nasyncband ÷ best peer: {} (bar ≤ 1 each)\n",
                verdicts.join(", ")
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULT: &str = "# membarrier on; ASYNCBAND_MEMBARRIER=
# 4000 messages per entry and round, 3 round(s)
# cell         implementation messages    p50_us    p99_us  p99.9_us    max_us membarrier/1k
  threads_spsc AsyncbandSpsc     12000      0.50    200.00    300.00    400.00          0.50
  threads_spsc Rtrb              12000      0.10      1.00      2.00      3.00             -
  threads_spsc Kanal             12000      0.60    100.00    300.00    400.00             -
  threads_spsc Thingbuf          12000     15.00     50.00    300.00    400.00             -
  bursts       AsyncbandSpsc     12000     20.00   2000.00   2000.00   2000.00          0.20
  bursts       Tokio             12000      8.00   2000.00   2000.00   2000.00             -
";
    const OFF: &str = "  threads_spsc AsyncbandSpsc     12000      0.05     10.00     20.00     30.00          0.00\n";

    fn latency() -> Latency {
        let mut rows = parse(DEFAULT, false).unwrap();
        rows.extend(parse(OFF, true).unwrap());
        Latency {
            method: String::new(),
            barrier_on: true,
            rows,
        }
    }

    /// Asserts `row`'s quantiles, to within rounding.
    fn assert_quantiles(row: &Row, expected: [f64; 4]) {
        assert!(
            row.quantiles
                .iter()
                .zip(expected)
                .all(|(got, want)| (got - want).abs() < 1e-9),
            "{:?} against {expected:?}",
            row.quantiles
        );
    }

    #[test]
    fn merged_rows_take_the_median_over_processes_and_the_largest_max() {
        let process = |p50: f64, p99: f64, max: f64, rate: f64| {
            format!(
                "  threads_spsc AsyncbandSpsc      4000  {p50:8.2}  {p99:8.2}  {p99:8.2}  {max:8.2}  {rate:12.2}\n  \
                 threads_spsc Kanal              4000      1.00      2.00      3.00      4.00             -\n"
            )
        };
        let mut rows = Vec::new();
        for (p50, p99, max, rate) in [
            (0.5, 900.0, 1000.0, 0.25),
            (9.0, 20.0, 5000.0, 0.50),
            (0.2, 30.0, 40.0, 0.75),
        ] {
            rows.extend(parse(&process(p50, p99, max, rate), false).unwrap());
        }
        rows.extend(parse(OFF, true).unwrap());
        let merged = merge(&rows);
        assert_eq!(merged.len(), 3, "one row per entry and kind: {merged:?}");
        let asyncband = &merged[0];
        assert_eq!(
            (asyncband.implementation.as_str(), asyncband.barrier_off),
            ("AsyncbandSpsc", false)
        );
        assert_eq!(asyncband.messages, 12_000);
        assert_quantiles(asyncband, [0.5, 30.0, 30.0, 5000.0]);
        assert_eq!(asyncband.membarriers, Some(0.5));
        assert_eq!(merged[1].implementation, "Kanal");
        assert_eq!(merged[1].membarriers, None);
        assert!(merged[2].barrier_off, "the barrier-off process stays apart");
        assert_quantiles(&merged[2], [0.05, 10.0, 20.0, 30.0]);
    }

    #[test]
    fn an_even_number_of_processes_takes_the_mean_of_the_middle_two() {
        let mut rows = parse(OFF, true).unwrap();
        rows.extend(
            parse(
                "  threads_spsc AsyncbandSpsc     12000      0.15     30.00     40.00     50.00          0.00\n",
                true,
            )
            .unwrap(),
        );
        let merged = merge(&rows);
        assert_eq!(merged.len(), 1);
        assert_quantiles(&merged[0], [0.1, 20.0, 30.0, 50.0]);
    }

    #[test]
    fn summary_compares_each_target_percentile_with_the_best_peer_but_not_rtrb() {
        let rows = summary(&latency());
        let got: Vec<(&str, f64, &str, bool)> = rows
            .iter()
            .map(|s| (s.id.as_str(), s.ratio, s.best_peer.as_str(), s.meets()))
            .collect();
        assert_eq!(
            got,
            [
                ("latency::threads_spsc::p50", 0.50 / 0.60, "kanal", true),
                (
                    "latency::threads_spsc::p99",
                    200.0 / 50.0,
                    "thingbuf",
                    false
                ),
            ],
            "the run with the barrier off and the bursts cell are not summarised"
        );
    }

    #[test]
    fn each_target_cell_says_its_ratios_under_its_table() {
        let latency = latency();
        let mut out = String::new();
        render(&mut out, &latency, &summary(&latency));
        assert!(
            out.contains("asyncband ÷ best peer: p50 **0.83** against kanal, p99 **4.00** against thingbuf (bar ≤ 1 each)"),
            "{out}"
        );
        assert_eq!(out.matches("asyncband ÷ best peer:").count(), 1, "{out}");
    }
}
