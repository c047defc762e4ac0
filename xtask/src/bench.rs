//! `cargo x bench-report`: runs the benchmark suite against every peer and
//! writes `benches/RESULTS.md` and `benches/ratios.svg`.
//!
//! The suite is two bench binaries of `asyncband-benches`: `channels` (divan,
//! cells 1 to 7 and 10), `memory` (an allocation counter, cell 8), and the
//! `latency` example (cell 9, see [`latency`]). This task
//! builds them once, lists the divan entries, and then, run after run, runs
//! each entry in its own process, cell by cell, rotating the order of the
//! implementations within a cell from one run to the next so that none is
//! always measured first or last. Each entry reports divan's median; the
//! report quotes, per implementation, the median of those medians over the
//! processes (and their spread), and per cell asyncband ÷ the best peer.
//!
//! A process of a multi-threaded cell often lands in a fast or a slow mode
//! for its whole life (where tokio's workers or the OS put the threads), so
//! a median over a handful of processes can fall on either mode. Cells
//! whose entries together run in under [`CHEAP_CELL`] are therefore
//! measured `--repeats` times per run (again rotating), which costs little:
//! the time of a report goes to the few cells with slow peers.
//!
//! Every divan entry counts items (messages, or round trips), so the time per
//! item is read from divan's median throughput.

#![allow(
    clippy::cast_precision_loss,
    reason = "counts and byte sizes are turned into report and chart figures, far below 2^52"
)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

mod latency;

const USAGE: &str = "usage: cargo x bench-report [quick] [--runs N] [--repeats N] [--sample-count N] [--filter TEXT]...

  quick             one run, 5 samples per entry: checks that every cell runs (numbers are rough)
  --runs N          runs of the whole suite (default 5; quick: 1)
  --repeats N       processes per entry and run for cells that run in under 2 s (default 3; quick: 1)
  --sample-count N  divan samples per entry, overriding the benches' own counts (quick: 5)
  --filter TEXT     only entries whose path contains TEXT (repeatable); skips the memory and
                    latency cells unless TEXT matches `memory` or `latency`

Writes benches/RESULTS.md and benches/ratios.svg. Run it on an idle machine: a figure
taken while something else runs is noise.";

/// A cell whose entries together run in less than this (on the first run)
/// is measured `--repeats` times per run (module docs).
const CHEAP_CELL: Duration = Duration::from_secs(2);

/// The peers' crates, as `Cargo.lock` names them, for the version stamp.
const PEER_CRATES: [&str; 8] = [
    "tokio",
    "crossbeam-channel",
    "async-channel",
    "flume",
    "kanal",
    "thingbuf",
    "rapidfire",
    "rtrb",
];

/// Runs the suite and writes the report.
pub fn report(args: &[String]) -> Result<(), String> {
    let options = Options::parse(args)?;
    let root = workspace_root();
    let binaries = build(&root)?;
    let latency_binary = if options.wants_latency() {
        Some(latency::build(&root)?)
    } else {
        None
    };
    let started = Instant::now();
    let mut cells = list_cells(&binaries.channels, &options.filters)?;
    let entries: usize = cells.iter().map(|cell| cell.entries.len()).sum();
    if entries == 0 && !options.wants_memory() && !options.wants_latency() {
        return Err("no benchmark matches the filters".into());
    }

    for run in 0..options.runs {
        let mut done = 0;
        for cell in &mut cells {
            let title = cell.title();
            let count = cell.entries.len();
            let mut repeat = 0;
            loop {
                let cell_started = Instant::now();
                for offset in 0..count {
                    let entry =
                        &mut cell.entries[(offset + run * options.repeats + repeat) % count];
                    let ns = measure(&binaries.channels, &entry.path, options.sample_count)?;
                    eprintln!(
                        "run {}/{} [{}/{entries}] {title} {}{}: {ns:.2} ns",
                        run + 1,
                        options.runs,
                        done + offset + 1,
                        entry.implementation,
                        if repeat > 0 {
                            format!(" (again, {})", repeat + 1)
                        } else {
                            String::new()
                        }
                    );
                    entry.runs.push(ns);
                }
                let repeats = *cell
                    .repeats
                    .get_or_insert(if cell_started.elapsed() < CHEAP_CELL {
                        options.repeats
                    } else {
                        1
                    });
                repeat += 1;
                if repeat >= repeats {
                    break;
                }
            }
            done += count;
        }
    }

    let memory = if options.wants_memory() {
        Some(measure_memory(&binaries.memory)?)
    } else {
        None
    };
    let latency = match &latency_binary {
        Some(binary) => Some(latency::measure(
            binary,
            options.latency_messages(),
            options.runs,
        )?),
        None => None,
    };

    let stamp = Stamp::take(&root, &options, started.elapsed().as_secs());
    let mut summary: Vec<Summary> = cells
        .iter()
        .filter_map(|cell| Summary::of(cell, &cells))
        .collect();
    if let Some(latency) = &latency {
        summary.extend(latency::summary(latency));
    }
    let results = render_results(&stamp, &cells, &summary, memory.as_ref(), latency.as_ref());
    let chart = render_chart(&summary, &stamp);
    let results_path = root.join("benches/RESULTS.md");
    let chart_path = root.join("benches/ratios.svg");
    std::fs::write(&results_path, results)
        .map_err(|e| format!("writing {}: {e}", results_path.display()))?;
    std::fs::write(&chart_path, chart)
        .map_err(|e| format!("writing {}: {e}", chart_path.display()))?;
    eprintln!(
        "wrote {} and {}",
        results_path.display(),
        chart_path.display()
    );
    Ok(())
}

/// Command-line options.
struct Options {
    quick: bool,
    runs: usize,
    repeats: usize,
    sample_count: Option<u32>,
    filters: Vec<String>,
}

impl Options {
    fn parse(args: &[String]) -> Result<Self, String> {
        let mut quick = false;
        let mut runs = None;
        let mut repeats = None;
        let mut sample_count = None;
        let mut filters = Vec::new();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .cloned()
                    .ok_or_else(|| format!("`{name}` needs a value\n\n{USAGE}"))
            };
            match arg.as_str() {
                "quick" | "--quick" => quick = true,
                "--runs" => runs = Some(parse_number(&value("--runs")?, "--runs")?),
                "--repeats" => repeats = Some(parse_number(&value("--repeats")?, "--repeats")?),
                "--sample-count" => {
                    sample_count = Some(parse_number(&value("--sample-count")?, "--sample-count")?);
                }
                "--filter" => filters.push(value("--filter")?),
                "-h" | "--help" => return Err(USAGE.into()),
                other => return Err(format!("unknown argument `{other}`\n\n{USAGE}")),
            }
        }
        let runs = runs.unwrap_or(if quick { 1 } else { 5 });
        if runs == 0 {
            return Err("`--runs` must be at least 1".into());
        }
        let repeats = repeats.unwrap_or(if quick { 1 } else { 3 });
        if repeats == 0 {
            return Err("`--repeats` must be at least 1".into());
        }
        let sample_count = sample_count.or(if quick { Some(5) } else { None });
        Ok(Self {
            quick,
            runs,
            repeats,
            sample_count,
            filters,
        })
    }

    fn wants_memory(&self) -> bool {
        self.filters.is_empty()
            || self
                .filters
                .iter()
                .any(|filter| "memory".contains(filter.as_str()))
    }

    fn wants_latency(&self) -> bool {
        self.filters.is_empty()
            || self
                .filters
                .iter()
                .any(|filter| "latency".contains(filter.as_str()))
    }

    /// Messages per implementation and round of the latency cells: 80 ms of
    /// pacing each, 40 ms (two bursts) in a quick run.
    fn latency_messages(&self) -> usize {
        if self.quick { 2_000 } else { 4_000 }
    }
}

fn parse_number<N: std::str::FromStr>(text: &str, name: &str) -> Result<N, String> {
    text.parse()
        .map_err(|_| format!("`{name}` expects a number, found `{text}`"))
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
}

/// The cargo that runs us (`cargo x` sets `CARGO`), or the one on `PATH`.
fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// The two bench binaries.
struct Binaries {
    channels: PathBuf,
    memory: PathBuf,
}

/// Builds the bench binaries (release, `bench` profile) and finds them.
fn build(root: &Path) -> Result<Binaries, String> {
    eprintln!("building the benches…");
    let output = cargo()
        .current_dir(root)
        .args([
            "bench",
            "-p",
            "asyncband-benches",
            "--no-run",
            "--message-format",
            "json-render-diagnostics",
        ])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !output.status.success() {
        return Err("building the benches failed".into());
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut executables = BTreeMap::new();
    for line in stdout
        .lines()
        .filter(|line| line.contains(r#""reason":"compiler-artifact""#))
    {
        let Some(target) = line.split_once(r#""target":{"#).map(|(_, rest)| rest) else {
            continue;
        };
        if !target.starts_with(r#""kind":["bench"]"#) {
            continue;
        }
        if let (Some(name), Some(executable)) =
            (json_string(target, "name"), json_string(line, "executable"))
        {
            executables.insert(name, PathBuf::from(executable));
        }
    }
    let mut take = |name: &str| {
        executables
            .remove(name)
            .ok_or_else(|| format!("cargo built no `{name}` bench"))
    };
    Ok(Binaries {
        channels: take("channels")?,
        memory: take("memory")?,
    })
}

/// The first string value of `"key":"…"` in a line of cargo's JSON (paths
/// and names: no escapes to undo on the platforms we run on).
fn json_string(json: &str, key: &str) -> Option<String> {
    let start = json.find(&format!(r#""{key}":""#))? + key.len() + 4;
    let end = json[start..].find('"')? + start;
    Some(json[start..end].to_owned())
}

/// One implementation in one cell.
struct Entry {
    /// divan's full path, for `--exact`.
    path: String,
    /// The implementation's marker type, e.g. `Tokio`, `AsyncbandSpsc`.
    implementation: String,
    /// ns per item, one figure per process (one or `--repeats` per run).
    runs: Vec<f64>,
}

impl Entry {
    fn median(&self) -> f64 {
        median(&self.runs)
    }

    fn is_asyncband(&self) -> bool {
        self.implementation.starts_with("Asyncband")
    }
}

/// One table of the report: a workload, every implementation that can run
/// it.
struct Cell {
    /// The entry path without the binary and the implementation, e.g.
    /// `["threads", "spsc_1to1", "64"]`.
    key: Vec<String>,
    entries: Vec<Entry>,
    /// Processes per entry and run, set by the first run (module docs).
    repeats: Option<usize>,
}

impl Cell {
    fn id(&self) -> String {
        self.key.join("::")
    }

    fn title(&self) -> String {
        self.key
            .iter()
            .map(|part| {
                if part.bytes().all(|b| b.is_ascii_digit()) {
                    format!("cap {part}")
                } else {
                    part.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" / ")
    }

    /// The asyncband entry the cell is judged by: the default policy's
    /// where a `wait = yield` one runs beside it.
    fn asyncband(&self) -> Option<&Entry> {
        let mut entries = self.entries.iter().filter(|entry| entry.is_asyncband());
        let first = entries.next()?;
        Some(if first.implementation.ends_with("Yield") {
            entries.next().unwrap_or(first)
        } else {
            first
        })
    }

    /// The fastest channel crate in the cell. rtrb is not one: it is a
    /// ring buffer with no waiting at all, the floor the SPSC thread cells
    /// are measured against separately. In the capacity-1 task cells only
    /// the peers that keep asyncband's contract count ([`same_contract`]).
    fn best_peer(&self) -> Option<&Entry> {
        let contract_only = same_contract_cell(&self.id());
        self.entries
            .iter()
            .filter(|entry| !entry.is_asyncband() && entry.implementation != "Rtrb")
            .filter(|entry| !contract_only || same_contract(&entry.implementation))
            .min_by(|a, b| a.median().total_cmp(&b.median()))
    }
}

/// The capacity-1 cells between tasks: there kanal and flume take a waiting
/// sender's value out of its future, which saves task polls but gives up
/// what asyncband guarantees (a dropped send sent nothing; queued values
/// never exceed the bound), so the cell is judged against the peers that
/// keep the same contract.
fn same_contract_cell(id: &str) -> bool {
    id.starts_with("tokio_runtime::") && id.ends_with("::1")
}

/// The peers that keep asyncband's contract in a capacity-1 task cell.
/// rapidfire does: its send future holds the value until it is in the
/// channel and drops it with the future.
fn same_contract(implementation: &str) -> bool {
    matches!(
        implementation,
        "Tokio" | "AsyncChannel" | "Thingbuf" | "RapidfireMpsc"
    )
}

/// Lists the divan entries of `binary` (from its `--list` tree) and groups
/// them into cells, in the order divan lists them.
fn list_cells(binary: &Path, filters: &[String]) -> Result<Vec<Cell>, String> {
    let output = Command::new(binary)
        .args(["--list", "--color", "never"])
        .output()
        .map_err(|e| format!("running {}: {e}", binary.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} --list failed: {}",
            binary.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let listing = String::from_utf8_lossy(&output.stdout);
    let mut cells: Vec<Cell> = Vec::new();
    for path in tree_leaves(&listing) {
        if !filters.is_empty()
            && !filters
                .iter()
                .any(|filter| path.join("::").contains(filter.as_str()))
        {
            continue;
        }
        // The implementation is the one component that is a type name.
        let Some(at) = path
            .iter()
            .position(|part| part.starts_with(|c: char| c.is_ascii_uppercase()))
        else {
            return Err(format!(
                "entry `{}` names no implementation",
                path.join("::")
            ));
        };
        let implementation = path[at].clone();
        let key: Vec<String> = path
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != 0 && i != at)
            .map(|(_, p)| p.clone())
            .collect();
        let entry = Entry {
            path: path.join("::"),
            implementation,
            runs: Vec::new(),
        };
        match cells.iter_mut().find(|cell| cell.key == key) {
            Some(cell) => cell.entries.push(entry),
            None => cells.push(Cell {
                key,
                entries: vec![entry],
                repeats: None,
            }),
        }
    }
    // The issue's order, not divan's alphabetical one (the sort is stable).
    cells.sort_by_key(|cell| group_of(&cell.key[0]).map_or(usize::MAX, |(number, _)| number));
    Ok(cells)
}

/// The top-level modules of the `channels` bench with their cell numbers,
/// in the issue's order (cells 8 and 9, memory and latency, are binaries of
/// their own).
const GROUPS: [(usize, &str, &str); 9] = [
    (1, "one_thread", "One thread: `try_send` then `try_recv`"),
    (2, "ready_path", "Async ready path, no runtime"),
    (3, "threads", "Threads, blocking API"),
    (4, "tokio_runtime", "tokio runtimes"),
    (5, "payload_1k", "1 KiB payloads, two tokio workers"),
    (
        6,
        "reserve",
        "Reservation: `reserve` + `Permit::send` + `recv`",
    ),
    (
        7,
        "select",
        "Select over two receivers, one idle, two threads",
    ),
    (
        10,
        "oversubscribed",
        "Oversubscribed: rapidfire's shapes, more threads than cores",
    ),
    (
        11,
        "spin",
        "`wait = spin` between two threads with a core each",
    ),
];

/// The memory cell's number.
const MEMORY_CELL: usize = 8;

/// The cell number and heading of a top-level module.
fn group_of(module: &str) -> Option<(usize, &'static str)> {
    GROUPS
        .iter()
        .find(|(_, name, _)| *name == module)
        .map(|&(number, _, heading)| (number, heading))
}

/// The root-to-leaf paths of the tree divan prints for `--list`.
fn tree_leaves(tree: &str) -> Vec<Vec<String>> {
    let mut rows: Vec<(usize, String)> = Vec::new();
    for line in tree.lines() {
        let chars: Vec<char> = line.chars().collect();
        let mut depth = 0;
        while depth * 3 + 3 <= chars.len() {
            let unit: String = chars[depth * 3..depth * 3 + 3].iter().collect();
            if matches!(unit.as_str(), "│  " | "   " | "├─ " | "╰─ ") {
                depth += 1;
            } else {
                break;
            }
        }
        let name: String = chars.iter().skip(depth * 3).collect::<String>();
        let name = name.split_whitespace().next().unwrap_or("").to_owned();
        if name.is_empty() {
            continue;
        }
        rows.push((depth, name));
    }
    let mut leaves = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    for (i, (depth, name)) in rows.iter().enumerate() {
        stack.truncate(*depth);
        stack.push(name.clone());
        let is_leaf = rows.get(i + 1).is_none_or(|(next, _)| next <= depth);
        if is_leaf {
            leaves.push(stack.clone());
        }
    }
    leaves
}

/// Runs one entry and returns its median time per item, in ns.
fn measure(binary: &Path, path: &str, sample_count: Option<u32>) -> Result<f64, String> {
    let mut command = Command::new(binary);
    command.args(["--bench", "--exact", path, "--color", "never"]);
    if let Some(count) = sample_count {
        command.args(["--sample-count", &count.to_string()]);
    }
    let output = command
        .output()
        .map_err(|e| format!("running {}: {e}", binary.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "`{path}` failed:\n{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    parse_median_ns_per_item(&stdout)
        .ok_or_else(|| format!("no throughput in the output of `{path}`:\n{stdout}"))
}

/// The median time per item of the single entry in a divan run's output:
/// the row after the timing row holds the throughputs. Columns are counted
/// from the right, since the tree on the left draws `│` too.
fn parse_median_ns_per_item(output: &str) -> Option<f64> {
    /// The median column: fourth from the right (median, mean, samples,
    /// iters).
    fn median_column(line: &str) -> Option<&str> {
        line.rsplit('│').nth(3).map(str::trim)
    }

    let lines: Vec<&str> = output.lines().collect();
    lines.windows(2).find_map(|pair| {
        median_column(pair[0]).filter(|time| !time.is_empty())?;
        median_column(pair[1])
            .and_then(parse_rate)
            .map(|per_second| 1e9 / per_second)
    })
}

/// `118.6 Mitem/s` → 118.6e6.
fn parse_rate(text: &str) -> Option<f64> {
    let (number, unit) = text.split_once(' ')?;
    let number: f64 = number.parse().ok()?;
    let scale = match unit.strip_suffix("item/s")? {
        "" => 1.0,
        "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        _ => return None,
    };
    Some(number * scale)
}

/// Cell 8's figures.
struct Memory {
    /// implementation → (bytes at creation, bytes when full), capacity 1024.
    bounded: Vec<(String, u64, u64)>,
    /// implementation → (created, peak, drained bytes, live blocks), after
    /// a drained burst of 2^20.
    unbounded: Vec<(String, u64, u64, u64, u64)>,
}

/// Runs the `memory` bench and parses its lines.
fn measure_memory(binary: &Path) -> Result<Memory, String> {
    eprintln!("measuring memory…");
    let output = Command::new(binary)
        .output()
        .map_err(|e| format!("running {}: {e}", binary.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "the memory bench failed:\n{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let mut memory = Memory {
        bounded: Vec::new(),
        unbounded: Vec::new(),
    };
    for line in stdout.lines().filter(|line| !line.starts_with('#')) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let number = |i: usize| -> Result<u64, String> {
            fields
                .get(i)
                .and_then(|f| f.parse().ok())
                .ok_or_else(|| format!("bad memory line `{line}`"))
        };
        match fields.first() {
            Some(&"bounded_1024") => {
                memory
                    .bounded
                    .push((fields[1].to_owned(), number(2)?, number(3)?));
            }
            Some(&"unbounded_1m") => {
                memory.unbounded.push((
                    fields[1].to_owned(),
                    number(2)?,
                    number(3)?,
                    number(4)?,
                    number(5)?,
                ));
            }
            _ => {}
        }
    }
    Ok(memory)
}

/// The bar a cell must meet (benches/README.md, "Targets"): asyncband ÷
/// best peer at most `ratio`, and, for SPSC threads, at most `rtrb` × rtrb.
struct Bar {
    ratio: f64,
    rtrb: Option<f64>,
}

fn bar(cell: &str) -> Bar {
    let fast_path = ["one_thread::spsc::", "ready_path::", "reserve::ready_path"];
    let (ratio, rtrb) = if fast_path.iter().any(|prefix| cell.starts_with(prefix)) {
        (0.8, None)
    } else if matches!(
        cell,
        "threads::spsc_1to1::64" | "threads::spsc_1to1::1024" | "threads::spsc_1to1_unbounded"
    ) {
        (1.0, Some(1.2))
    } else if matches!(cell, "spin::spsc::64" | "spin::spsc::1024") {
        (1.0, Some(1.05))
    } else if same_contract_cell(cell) && cell.contains("_p4::") {
        // Four producers at capacity 1: the in-order grant to waiting
        // senders costs what thingbuf, which does not give it, saves.
        (1.10, None)
    } else {
        (1.0, None)
    };
    Bar { ratio, rtrb }
}

/// One cell's verdict.
struct Summary {
    id: String,
    title: String,
    asyncband: String,
    ratio: f64,
    best_peer: String,
    /// asyncband ÷ rtrb, where the bar asks for it.
    rtrb_ratio: Option<f64>,
    bar: Bar,
}

impl Summary {
    fn of(cell: &Cell, cells: &[Cell]) -> Option<Self> {
        let asyncband = cell.asyncband()?;
        let best = cell.best_peer()?;
        if asyncband.runs.is_empty() || best.runs.is_empty() {
            return None;
        }
        let id = cell.id();
        let bar = bar(&id);
        // rtrb has no unbounded flavour: unbounded SPSC answers to rtrb at
        // capacity 1024.
        let rtrb_cell = match id.as_str() {
            "threads::spsc_1to1_unbounded" => cells
                .iter()
                .find(|other| other.id() == "threads::spsc_1to1::1024"),
            _ => Some(cell),
        };
        let rtrb_ratio = bar
            .rtrb
            .and(rtrb_cell)
            .and_then(|rtrb_cell| {
                rtrb_cell
                    .entries
                    .iter()
                    .find(|entry| entry.implementation == "Rtrb")
            })
            .filter(|rtrb| !rtrb.runs.is_empty())
            .map(|rtrb| asyncband.median() / rtrb.median());
        Some(Self {
            title: cell.title(),
            asyncband: display_name(&asyncband.implementation),
            ratio: asyncband.median() / best.median(),
            best_peer: display_name(&best.implementation),
            rtrb_ratio,
            bar,
            id,
        })
    }

    fn meets(&self) -> bool {
        self.ratio <= self.bar.ratio
            && self
                .bar
                .rtrb
                .zip(self.rtrb_ratio)
                .is_none_or(|(limit, ratio)| ratio <= limit)
    }

    fn bar_text(&self) -> String {
        match self.bar.rtrb {
            Some(limit) if self.rtrb_ratio.is_some() => {
                let at = if self.id.ends_with("unbounded") {
                    " (rtrb at cap 1024)"
                } else {
                    ""
                };
                format!("≤ {} and ≤ {limit} × rtrb{at}", self.bar.ratio)
            }
            _ => format!("≤ {}", self.bar.ratio),
        }
    }
}

/// How the report names an implementation.
fn display_name(marker: &str) -> String {
    match marker {
        "AsyncbandSpsc" => "asyncband spsc",
        "AsyncbandMpsc" => "asyncband mpsc",
        "AsyncbandMpmc" => "asyncband mpmc",
        "AsyncbandSpscSpin" => "asyncband spsc, spin",
        "AsyncbandMpscSpin" => "asyncband mpsc, spin",
        "AsyncbandMpmcSpin" => "asyncband mpmc, spin",
        "AsyncbandMpscYield" => "asyncband mpsc, yield",
        "AsyncbandMpmcYield" => "asyncband mpmc, yield",
        "KanalBusy" => "kanal, try loop",
        "CrossbeamBusy" => "crossbeam-channel, try loop",
        "RapidfireBusy" => "rapidfire, try loop",
        "RapidfireMpscBusy" => "rapidfire mpsc, try loop",
        "Tokio" => "tokio",
        "Crossbeam" => "crossbeam-channel",
        "AsyncChannel" => "async-channel",
        "Flume" => "flume",
        "Kanal" => "kanal",
        "Thingbuf" => "thingbuf",
        "StdMpsc" => "std mpsc",
        "Rapidfire" => "rapidfire",
        "RapidfireMpsc" => "rapidfire mpsc",
        "Rtrb" => "rtrb",
        other => other,
    }
    .to_owned()
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => f64::midpoint(sorted[n / 2 - 1], sorted[n / 2]),
    }
}

/// Where and how the figures were taken.
struct Stamp {
    date: String,
    cores: usize,
    cpu: String,
    kernel: String,
    rustc: String,
    versions: Vec<(String, String)>,
    runs: usize,
    repeats: usize,
    sample_count: Option<u32>,
    quick: bool,
    filtered: bool,
    minutes: u64,
}

impl Stamp {
    fn take(root: &Path, options: &Options, seconds: u64) -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|line| {
                line.strip_prefix("model name")
                    .and_then(|rest| rest.split_once(':'))
                    .map(|(_, v)| v.trim())
            })
            .unwrap_or("unknown")
            .to_owned();
        let cores = std::thread::available_parallelism().map_or(0, usize::from);
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map_or_else(|_| "unknown".into(), |k| k.trim().to_owned());
        let rustc = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
            .arg("--version")
            .output()
            .ok()
            .map_or_else(
                || "unknown".into(),
                |out| String::from_utf8_lossy(&out.stdout).trim().to_owned(),
            );
        let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
        let mut versions = vec![("asyncband".to_owned(), locked_versions(&lock, "asyncband"))];
        versions.extend(
            PEER_CRATES
                .iter()
                .map(|name| ((*name).to_owned(), locked_versions(&lock, name))),
        );
        versions.push(("divan".to_owned(), locked_versions(&lock, "divan")));
        Self {
            date: utc_date(SystemTime::now()),
            cores,
            cpu,
            kernel,
            rustc,
            versions,
            runs: options.runs,
            repeats: options.repeats,
            sample_count: options.sample_count,
            quick: options.quick,
            filtered: !options.filters.is_empty(),
            minutes: seconds.div_ceil(60),
        }
    }
}

/// The versions of `name` in `Cargo.lock`, comma-separated.
fn locked_versions(lock: &str, name: &str) -> String {
    let versions: Vec<&str> = lock
        .split("[[package]]")
        .filter(|block| {
            block
                .lines()
                .any(|line| line.trim() == format!("name = \"{name}\""))
        })
        .filter_map(|block| {
            block
                .lines()
                .find_map(|line| line.trim().strip_prefix("version = \"")?.strip_suffix('"'))
        })
        .collect();
    if versions.is_empty() {
        "?".into()
    } else {
        versions.join(", ")
    }
}

/// `YYYY-MM-DD` (UTC) of a time, without a date library.
fn utc_date(time: SystemTime) -> String {
    #[allow(
        clippy::cast_possible_wrap,
        reason = "days since 1970 are far below `i64::MAX`"
    )]
    let days = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `1234.5` → `1,234`; small figures keep their decimals.
fn format_ns(ns: f64) -> String {
    if ns >= 1000.0 {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "`ns >= 1000` here, and a time per item is far below 2^64 ns"
        )]
        let whole = ns.round() as u64;
        let digits = whole.to_string();
        let mut out = String::new();
        for (i, digit) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(digit);
        }
        out
    } else if ns >= 100.0 {
        format!("{ns:.0}")
    } else if ns >= 10.0 {
        format!("{ns:.1}")
    } else {
        format!("{ns:.2}")
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "writes the report's sections one after another, in the order they appear"
)]
fn render_results(
    stamp: &Stamp,
    cells: &[Cell],
    summary: &[Summary],
    memory: Option<&Memory>,
    latency: Option<&latency::Latency>,
) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "# asyncband against its peers: results\n");
    let _ = writeln!(
        w,
        "Generated by `cargo x bench-report` (see [README.md](README.md) for what each cell measures); do not edit by hand.\n"
    );
    if stamp.quick || stamp.filtered {
        let _ = writeln!(
            w,
            "> **Not a measurement.** This file comes from a {} run, which only checks that the cells run; \
             regenerate it with `cargo x bench-report` on an idle machine before quoting any figure.\n",
            if stamp.quick { "quick" } else { "filtered" }
        );
    }
    let _ = writeln!(w, "| | |\n| --- | --- |");
    let _ = writeln!(w, "| date | {} (UTC) |", stamp.date);
    let _ = writeln!(w, "| machine | {} cores, {} |", stamp.cores, stamp.cpu);
    let _ = writeln!(w, "| kernel | Linux {} |", stamp.kernel);
    let _ = writeln!(w, "| compiler | {} |", stamp.rustc);
    let versions: Vec<String> = stamp
        .versions
        .iter()
        .map(|(name, version)| format!("{name} {version}"))
        .collect();
    let _ = writeln!(
        w,
        "| versions | {}, std (the compiler's) |",
        versions.join(", ")
    );
    let samples = stamp
        .sample_count
        .map_or_else(|| "each bench's own".to_owned(), |n| n.to_string());
    let _ = writeln!(
        w,
        "| method | {} run(s), implementations interleaved (each entry in its own process, order rotated per run); cells that run in under {} s measured {} times per run; divan samples per entry: {samples}; {} min in all |\n",
        stamp.runs,
        CHEAP_CELL.as_secs(),
        stamp.repeats,
        stamp.minutes
    );
    let _ = writeln!(
        w,
        "Figures are ns per message (per round trip for ping-pong and the round-trip cells): for each implementation, the median over its processes of divan's \
         median, with the spread (lowest–highest process) beside it. Ratios compare medians: asyncband ÷ the fastest peer in the same \
         cell, below 1 meaning asyncband is faster. The peers are the channel crates; rtrb, a ring buffer that cannot wait, \
         is shown as the floor and compared only where the bar names it (SPSC streaming between threads, ≤ 1.2 × rtrb; with `wait = spin`, ≤ 1.05 × rtrb). In the capacity-1 task cells the best peer is the fastest of tokio, async-channel, thingbuf and rapidfire, the peers that keep asyncband's contract (a dropped send sent nothing; queued values never exceed the bound); kanal and flume are shown but not compared there. The summary's latency rows (cell 9) compare one percentile of one-way latency \
         the same way, asyncband with the barrier as the kernel offers it. These machines are small and noisy; quote ratios, not absolute times.\n"
    );

    let _ = writeln!(w, "![asyncband ÷ best peer, per cell](ratios.svg)\n");
    let _ = writeln!(w, "## Summary\n");
    let _ = writeln!(w, "| cell | asyncband | ÷ best peer | best peer | bar | |");
    let _ = writeln!(w, "| --- | --- | ---: | --- | --- | --- |");
    for s in summary {
        let rtrb = s
            .rtrb_ratio
            .map(|r| format!(" ({r:.2} × rtrb)"))
            .unwrap_or_default();
        let verdict = if s.meets() { "meets" } else { "**misses**" };
        let _ = writeln!(
            w,
            "| {} | {} | {:.2}{rtrb} | {} | {} | {verdict} |",
            s.title,
            s.asyncband,
            s.ratio,
            s.best_peer,
            s.bar_text()
        );
    }
    if let Some(memory) = memory {
        for (name, _, _, _, blocks) in memory
            .unbounded
            .iter()
            .filter(|row| row.0.starts_with("Asyncband"))
        {
            let verdict = if *blocks <= 4 { "meets" } else { "**misses**" };
            let _ = writeln!(
                w,
                "| memory / unbounded after a drained burst | {} | {blocks} blocks retained | | ≤ 4 blocks | {verdict} |",
                display_name(name)
            );
        }
    }

    let _ = writeln!(w, "\n## Cells\n");
    let mut group = None;
    for cell in cells {
        let Some(asyncband) = cell.asyncband().filter(|entry| !entry.runs.is_empty()) else {
            continue;
        };
        if group != Some(&cell.key[0]) {
            group = Some(&cell.key[0]);
            if let Some((number, heading)) = group_of(&cell.key[0]) {
                let _ = writeln!(w, "### {number}. {heading}\n");
            }
        }
        let _ = writeln!(w, "#### {}\n", cell.title());
        let _ = writeln!(
            w,
            "| implementation | ns (median) | spread over processes | ÷ asyncband |"
        );
        let _ = writeln!(w, "| --- | ---: | ---: | ---: |");
        let mut rows: Vec<&Entry> = cell
            .entries
            .iter()
            .filter(|entry| !entry.runs.is_empty())
            .collect();
        rows.sort_by(|a, b| a.median().total_cmp(&b.median()));
        for entry in rows {
            let low = entry.runs.iter().copied().fold(f64::INFINITY, f64::min);
            let high = entry.runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let name = display_name(&entry.implementation);
            let name = if entry.is_asyncband() {
                format!("**{name}**")
            } else {
                name
            };
            let _ = writeln!(
                w,
                "| {name} | {} | {}–{} | {:.2} |",
                format_ns(entry.median()),
                format_ns(low),
                format_ns(high),
                entry.median() / asyncband.median()
            );
        }
        if let Some(s) = summary.iter().find(|s| s.id == cell.id()) {
            let _ = writeln!(
                w,
                "\nasyncband ÷ best peer ({}): **{:.2}** (bar {})\n",
                s.best_peer,
                s.ratio,
                s.bar_text()
            );
        } else {
            let _ = writeln!(w);
        }
    }

    if let Some(memory) = memory {
        render_memory(w, memory);
    }
    if let Some(latency) = latency {
        latency::render(w, latency, summary);
    }
    out
}

fn render_memory(w: &mut String, memory: &Memory) {
    let _ = writeln!(w, "### {MEMORY_CELL}. Memory\n");
    let _ = writeln!(
        w,
        "Live heap bytes counted by a global allocator (`benches/benches/memory.rs`), `u64` payloads, one thread; exact, not sampled.\n"
    );
    let _ = writeln!(w, "#### Bounded, capacity 1024\n");
    let _ = writeln!(
        w,
        "| implementation | bytes when made | bytes when full | bytes per slot (full) |"
    );
    let _ = writeln!(w, "| --- | ---: | ---: | ---: |");
    for (name, created, full) in &memory.bounded {
        let _ = writeln!(
            w,
            "| {} | {created} | {full} | {:.1} |",
            display_name(name),
            *full as f64 / 1024.0
        );
    }
    let _ = writeln!(
        w,
        "\n#### Unbounded, after a burst of 1,048,576 messages has drained\n"
    );
    let _ = writeln!(
        w,
        "| implementation | bytes when made | peak bytes | bytes after the drain | blocks retained |"
    );
    let _ = writeln!(w, "| --- | ---: | ---: | ---: | ---: |");
    for (name, created, peak, drained, blocks) in &memory.unbounded {
        let blocks = if name.starts_with("Asyncband") {
            blocks.to_string()
        } else {
            String::new()
        };
        let _ = writeln!(
            w,
            "| {} | {created} | {peak} | {drained} | {blocks} |",
            display_name(name)
        );
    }
    let _ = writeln!(
        w,
        "\nBlocks retained: live allocations of asyncband's block size after the drain (blocks of 32 slots; the bar is at most 4).\n"
    );
}

/// A diverging bar chart of asyncband ÷ best peer per cell, log scale, 1 in
/// the middle: bars to the left are cells asyncband wins.
fn render_chart(summary: &[Summary], stamp: &Stamp) -> String {
    const WIDTH: f64 = 960.0;
    const LABEL: f64 = 360.0;
    const PLOT: f64 = 520.0;
    const ROW: f64 = 18.0;
    const TOP: f64 = 56.0;
    const SPAN: f64 = 3.0; // log2 of the largest ratio drawn: 1/8 .. 8

    let x = |ratio: f64| LABEL + PLOT / 2.0 + ratio.log2().clamp(-SPAN, SPAN) / SPAN * (PLOT / 2.0);
    let height = TOP + ROW * summary.len() as f64 + 40.0;
    let mut svg = String::new();
    let s = &mut svg;
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let title = format!(
        "asyncband ÷ best peer per cell (median ns, or a latency percentile; {} cores, {}; {} run(s){})",
        stamp.cores,
        stamp.cpu,
        stamp.runs,
        if stamp.quick {
            ", quick: not a measurement"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        r#"<text x="10" y="20" font-size="14" font-weight="bold">{}</text>"#,
        xml_escape(&title)
    );
    let _ = writeln!(
        s,
        r##"<text x="10" y="38" fill="#555">left of 1: asyncband faster (latency rows: the percentile named); green: meets the target (tick), red: misses it</text>"##
    );
    for (tick, label) in [
        (0.125, "1/8"),
        (0.25, "1/4"),
        (0.5, "1/2"),
        (1.0, "1"),
        (2.0, "2"),
        (4.0, "4"),
        (8.0, "8"),
    ] {
        let tx = x(tick);
        let stroke = if label == "1" { "#000" } else { "#ddd" };
        let _ = writeln!(
            s,
            r##"<line x1="{tx:.1}" y1="{:.1}" x2="{tx:.1}" y2="{:.1}" stroke="{stroke}"/><text x="{tx:.1}" y="{:.1}" text-anchor="middle" fill="#555">{label}</text>"##,
            TOP - 6.0,
            TOP + ROW * summary.len() as f64,
            TOP + ROW * summary.len() as f64 + 16.0
        );
    }
    let one = x(1.0);
    for (i, row) in summary.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let end = x(row.ratio);
        let (left, width) = if end < one {
            (end, one - end)
        } else {
            (one, end - one)
        };
        let fill = if row.meets() { "#3a9a4a" } else { "#d0433a" };
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LABEL - 8.0,
            y + 13.0,
            xml_escape(&row.title)
        );
        let _ = writeln!(
            s,
            r#"<rect x="{left:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{fill}"><title>{}</title></rect>"#,
            y + 3.0,
            width.max(1.0),
            ROW - 6.0,
            xml_escape(&format!(
                "{}: {:.2} vs {}",
                row.title, row.ratio, row.best_peer
            ))
        );
        let limit = x(row.bar.ratio);
        let _ = writeln!(
            s,
            r##"<line x1="{limit:.1}" y1="{:.1}" x2="{limit:.1}" y2="{:.1}" stroke="#333"/>"##,
            y + 1.0,
            y + ROW - 1.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{:.2}</text>"#,
            LABEL + PLOT + 8.0,
            y + 13.0,
            row.ratio
        );
    }
    let _ = writeln!(s, "</svg>");
    svg
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "channels                   fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ one_thread                            │               │               │               │         │
│  ╰─ spsc                               │               │               │               │         │
│     ╰─ pair_bounded_64                 │               │               │               │         │
│        ╰─ AsyncbandSpsc  7.994 ns      │ 9.283 ns      │ 8.427 ns      │ 8.441 ns      │ 10      │ 2560
│                          125 Mitem/s   │ 107.7 Mitem/s │ 118.6 Mitem/s │ 118.4 Mitem/s │         │
";

    const LIST: &str = "channels
├─ one_thread
│  ╰─ spsc
│     ├─ pair_bounded_64
│     │  ├─ AsyncbandSpsc
│     │  ╰─ Rtrb
╰─ threads
   ╰─ spsc_1to1
      ╰─ Kanal
         ├─ 1
         ╰─ 64
";

    #[test]
    fn reads_the_median_throughput() {
        let ns = parse_median_ns_per_item(RUN).unwrap();
        assert!((ns - 1e9 / 118.6e6).abs() < 1e-9, "{ns}");
    }

    #[test]
    fn lists_the_leaves_of_a_tree() {
        let leaves: Vec<String> = tree_leaves(LIST)
            .iter()
            .map(|path| path.join("::"))
            .collect();
        assert_eq!(
            leaves,
            [
                "channels::one_thread::spsc::pair_bounded_64::AsyncbandSpsc",
                "channels::one_thread::spsc::pair_bounded_64::Rtrb",
                "channels::threads::spsc_1to1::Kanal::1",
                "channels::threads::spsc_1to1::Kanal::64",
            ]
        );
    }

    #[test]
    fn quick_cells_repeat_only_in_full_reports() {
        let args = |list: &[&str]| list.iter().map(|&a| a.to_owned()).collect::<Vec<_>>();
        assert_eq!(Options::parse(&args(&[])).unwrap().repeats, 3);
        assert_eq!(Options::parse(&args(&["quick"])).unwrap().repeats, 1);
        assert_eq!(
            Options::parse(&args(&["--repeats", "5"])).unwrap().repeats,
            5
        );
        assert!(Options::parse(&args(&["--repeats", "0"])).is_err());
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(utc_date(UNIX_EPOCH), "1970-01-01");
        assert_eq!(
            utc_date(UNIX_EPOCH + std::time::Duration::from_secs(1_709_164_800)),
            "2024-02-29"
        );
    }

    #[test]
    fn versions_come_from_the_lock_file() {
        let lock = "[[package]]\nname = \"flume\"\nversion = \"0.12.0\"\n\n[[package]]\nname = \"kanal\"\nversion = \"0.1.1\"\n";
        assert_eq!(locked_versions(lock, "flume"), "0.12.0");
        assert_eq!(locked_versions(lock, "tokio"), "?");
    }
}
