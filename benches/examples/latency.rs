//! One-way latency, asyncband against its peers: how long a message takes
//! from its send to a receiver that was waiting for it.
//!
//! Producers are paced: one message every 20 µs in all (with four
//! producers, each sends every 80 µs), each producer busy-waiting on
//! [`Instant`] for its next turn, so the receiver has gone back to waiting
//! before most messages arrive. Each message carries the [`Instant`] it was
//! sent at; the receiver records `now - sent` for each, and checks, as every
//! cell of the suite does, that each producer's messages arrive in order and
//! that none is missing. The cells, every one on a bounded channel of
//! capacity 1024 (never full at this pace):
//!
//! | cell | producers | receiver |
//! | --- | --- | --- |
//! | `threads_spsc` | one thread | `recv_blocking` on a thread |
//! | `threads_mpsc` | four threads | `recv_blocking` on a thread |
//! | `tokio_spsc` | one thread | `recv().await` in a task on a two-worker tokio runtime |
//! | `tokio_mpsc` | four threads | `recv().await` in a task on a two-worker tokio runtime |
//! | `bursts` | one thread, bursts of 1,000 messages sent back to back, one burst every 2 ms | `recv_blocking` on a thread |
//!
//! The tokio cells' producers are threads too, each driving its send
//! future on its own thread: a task that busy-waits for its turn would hold
//! a worker. A peer plays a cell if the suite's adapters (`benches/peers/`)
//! let it: an MPSC cell needs a `Clone` sender, a tokio cell an async API.
//! rtrb has no waiting at all: its receiver spins, the floor for the SPSC
//! thread cells.
//!
//! Each cell reports, per implementation, the 50th, 99th and 99.9th
//! percentile and the maximum of the latencies (nearest rank over the
//! sorted sample of every message of every round), and for asyncband the
//! `membarrier` system calls the process made per 1,000 messages
//! (`asyncband_core::wait::membarrier_calls`). Run the binary again with
//! `ASYNCBAND_MEMBARRIER=off` for the same cells with the barrier turned
//! off.
//!
//! ```sh
//! cargo run --release -p asyncband-benches --example latency -- --messages 4000 --rounds 5
//! cargo run --release -p asyncband-benches --example latency -- --filter bursts
//! ASYNCBAND_MEMBARRIER=off cargo run --release -p asyncband-benches --example latency -- --filter asyncband
//! ```
//!
//! `--messages N`: messages per implementation, cell and round (default
//! 4,000: 80 ms of pacing); `--rounds N`: rounds (default 5), every
//! implementation of a cell run once per round, the order rotated from one
//! round to the next; `--rotate K`: start that rotation K places on
//! (default 0), so that processes of one round each can start with a
//! different implementation; `--filter TEXT` (repeatable): only entries whose
//! `cell/Implementation` contains `TEXT`, ignoring ASCII case. Prints one
//! line per entry, figures in µs, after `#` lines that say how it ran
//! (`cargo x bench-report` reads them).

#[path = "../peers/mod.rs"]
#[allow(
    dead_code,
    unused_imports,
    reason = "the suite's adapters; this probe uses the bounded channels only"
)]
mod peers;

use std::future::Future;
use std::hint::spin_loop;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

use asyncband_benches::{InOrder, Payload};
use peers::{
    AsyncBounded, AsyncChannel, AsyncbandMpsc, AsyncbandSpsc, AsyncbandSpscSpin, Crossbeam, Flume,
    Kanal, Outcome, RapidfireMpsc, RecvAsync, RecvBlocking, Rtrb, SendAsync, SendBlocking, StdMpsc,
    SyncBounded, Thingbuf, Tokio, fan_out,
};
use tokio::runtime::{Builder, Runtime};

/// The channels' capacity: far more than is ever queued at this pace.
const CAP: usize = 1024;
/// The time between two messages, over all producers together.
const PERIOD: Duration = Duration::from_micros(20);
/// Producers in the MPSC cells.
const PRODUCERS: usize = 4;
/// Messages per burst in the `bursts` cell.
const BURST: usize = 1_000;
/// From the start of one burst to the start of the next.
const BURST_EVERY: Duration = Duration::from_millis(2);
/// From spawning the producers to the first message: time for every
/// thread to start and the receiver to wait.
const LEAD: Duration = Duration::from_millis(5);

/// A message: its producer and sequence number (checked on receive) and
/// the instant it was sent.
#[derive(Clone, Copy, Debug)]
struct Timed {
    sent: Instant,
    stamp: u64,
}

/// Only for thingbuf, which fills its slots with placeholders; none is
/// ever received.
impl Default for Timed {
    fn default() -> Self {
        Self {
            sent: Instant::now(),
            stamp: 0,
        }
    }
}

/// Stamps the send instant when the message is made, right before it is
/// sent.
impl Payload for Timed {
    #[inline]
    fn stamped(producer: usize, seq: usize) -> Self {
        Self {
            stamp: u64::stamped(producer, seq),
            sent: Instant::now(),
        }
    }

    #[inline]
    fn producer(&self) -> usize {
        self.stamp.producer()
    }

    #[inline]
    fn seq(&self) -> usize {
        self.stamp.seq()
    }
}

/// When each message is sent.
#[derive(Clone, Copy, Debug)]
enum Pace {
    /// One message every [`PERIOD`] in all, the producers taking turns.
    Steady,
    /// [`BURST`] messages back to back every [`BURST_EVERY`] (one producer).
    Bursts,
}

impl Pace {
    /// When message `seq` of producer `producer` (of `producers`) is due.
    fn due(self, start: Instant, producer: usize, producers: usize, seq: usize) -> Instant {
        let (slot, every) = match self {
            Self::Steady => (seq * producers + producer, PERIOD),
            Self::Bursts => (seq / BURST, BURST_EVERY),
        };
        start + every * u32::try_from(slot).expect("a slot count that fits in u32")
    }
}

/// Busy-waits until `due`.
fn spin_until(due: Instant) {
    while Instant::now() < due {
        spin_loop();
    }
}

/// Joins a thread, passing its panic on.
fn join<R>(handle: JoinHandle<R>) -> R {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Spawns one paced producer thread per sender; each sends `per_producer`
/// messages through `send`, then drops its sender.
fn spawn_producers<Tx: Send + 'static>(
    txs: Vec<Tx>,
    per_producer: usize,
    pace: Pace,
    send: fn(&mut Tx, Timed),
) -> Vec<JoinHandle<()>> {
    let producers = txs.len();
    let start = Instant::now() + LEAD;
    txs.into_iter()
        .enumerate()
        .map(|(producer, mut tx)| {
            thread::spawn(move || {
                for seq in 0..per_producer {
                    spin_until(pace.due(start, producer, producers, seq));
                    send(&mut tx, Timed::stamped(producer, seq));
                }
            })
        })
        .collect()
}

/// What one entry measured in one round: the latencies in ns, in arrival
/// order.
type Latencies = Vec<u64>;

/// Records one received message.
#[inline]
fn record(message: &Timed, check: &mut InOrder, latencies: &mut Latencies) {
    let latency = message.sent.elapsed();
    latencies.push(u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX));
    check.take(message);
}

/// Producer threads → a receiver on this thread, in `recv_blocking`.
fn on_threads<Tx: SendBlocking<Timed> + 'static, Rx: RecvBlocking<Timed>>(
    txs: Vec<Tx>,
    mut rx: Rx,
    messages: usize,
    pace: Pace,
) -> Latencies {
    let producers = txs.len();
    let per_producer = messages / producers;
    let handles = spawn_producers(txs, per_producer, pace, |tx, message| {
        tx.send_blocking(message);
    });
    let mut check = InOrder::new(producers);
    let mut latencies = Vec::with_capacity(per_producer * producers);
    while let Some(message) = rx.recv_blocking() {
        record(&message, &mut check, &mut latencies);
    }
    check.finish(per_producer);
    handles.into_iter().for_each(join);
    latencies
}

/// Wakes a thread parked in [`block_on`].
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` to completion on this thread, parking while it waits.
fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(output) => return output,
            Poll::Pending => thread::park(),
        }
    }
}

/// Producer threads → a receiver task on `runtime`, in `recv().await`.
fn on_tokio<Tx: SendAsync<Timed> + 'static, Rx: RecvAsync<Timed> + 'static>(
    runtime: &Runtime,
    txs: Vec<Tx>,
    mut rx: Rx,
    messages: usize,
) -> Latencies {
    let producers = txs.len();
    let per_producer = messages / producers;
    let receiver = runtime.spawn(async move {
        let mut check = InOrder::new(producers);
        let mut latencies = Vec::with_capacity(per_producer * producers);
        while let Some(message) = rx.recv().await.into_option() {
            record(&message, &mut check, &mut latencies);
        }
        check.finish(per_producer);
        latencies
    });
    let handles = spawn_producers(txs, per_producer, Pace::Steady, |tx, message| {
        assert!(
            block_on(tx.send(message)).into_option().is_some(),
            "receiver gone"
        );
    });
    let latencies = runtime
        .block_on(receiver)
        .unwrap_or_else(|error| std::panic::resume_unwind(error.into_panic()));
    handles.into_iter().for_each(join);
    latencies
}

fn threads_spsc<C: SyncBounded<Timed, CAP>>(_: &Runtime, messages: usize) -> Latencies {
    let (tx, rx) = C::channel();
    on_threads(vec![tx], rx, messages, Pace::Steady)
}

fn threads_mpsc<C: SyncBounded<Timed, CAP>>(_: &Runtime, messages: usize) -> Latencies
where
    C::Tx: Clone,
{
    let (tx, rx) = C::channel();
    on_threads(fan_out(tx, PRODUCERS), rx, messages, Pace::Steady)
}

fn tokio_spsc<C: AsyncBounded<Timed, CAP>>(runtime: &Runtime, messages: usize) -> Latencies {
    let (tx, rx) = C::channel();
    on_tokio(runtime, vec![tx], rx, messages)
}

fn tokio_mpsc<C: AsyncBounded<Timed, CAP>>(runtime: &Runtime, messages: usize) -> Latencies
where
    C::Tx: Clone,
{
    let (tx, rx) = C::channel();
    on_tokio(runtime, fan_out(tx, PRODUCERS), rx, messages)
}

fn bursts<C: SyncBounded<Timed, CAP>>(_: &Runtime, messages: usize) -> Latencies {
    let (tx, rx) = C::channel();
    on_threads(vec![tx], rx, messages, Pace::Bursts)
}

/// One implementation in one cell.
struct Entry {
    cell: &'static str,
    /// The adapter's marker type, as the bench suite names it.
    implementation: &'static str,
    run: fn(&Runtime, usize) -> Latencies,
    latencies: Latencies,
    /// `membarrier` calls made while this entry ran.
    membarriers: u64,
}

/// Entries of `cell`, one per listed marker type, in the order given.
macro_rules! cell {
    ($cell:ident, [$($marker:ident),+ $(,)?]) => {
        [$(
            Entry {
                cell: stringify!($cell),
                implementation: stringify!($marker),
                run: $cell::<$marker>,
                latencies: Vec::new(),
                membarriers: 0,
            },
        )+]
    };
}

/// Every entry, cell by cell.
fn entries() -> Vec<Entry> {
    let mut all = Vec::new();
    all.extend(cell!(
        threads_spsc,
        [
            AsyncbandSpsc,
            AsyncbandSpscSpin,
            Rtrb,
            Tokio,
            Crossbeam,
            AsyncChannel,
            Flume,
            Kanal,
            Thingbuf,
            StdMpsc
        ]
    ));
    all.extend(cell!(
        threads_mpsc,
        [
            AsyncbandMpsc,
            Tokio,
            Crossbeam,
            AsyncChannel,
            Flume,
            Kanal,
            Thingbuf,
            StdMpsc
        ]
    ));
    all.extend(cell!(
        tokio_spsc,
        [
            AsyncbandSpsc,
            Tokio,
            AsyncChannel,
            Flume,
            Kanal,
            Thingbuf,
            RapidfireMpsc
        ]
    ));
    all.extend(cell!(
        tokio_mpsc,
        [
            AsyncbandMpsc,
            Tokio,
            AsyncChannel,
            Flume,
            Kanal,
            Thingbuf,
            RapidfireMpsc
        ]
    ));
    all.extend(cell!(
        bursts,
        [
            AsyncbandSpsc,
            Rtrb,
            Tokio,
            Crossbeam,
            AsyncChannel,
            Flume,
            Kanal,
            Thingbuf,
            StdMpsc
        ]
    ));
    all
}

/// Command-line options (module docs).
struct Options {
    messages: usize,
    rounds: usize,
    rotate: usize,
    filters: Vec<String>,
}

impl Options {
    fn parse() -> Self {
        let mut options = Self {
            messages: 4_000,
            rounds: 5,
            rotate: 0,
            filters: Vec::new(),
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value = || {
                args.next()
                    .unwrap_or_else(|| panic!("`{arg}` needs a value"))
            };
            match arg.as_str() {
                "--messages" => options.messages = value().parse().expect("--messages: a number"),
                "--rounds" => options.rounds = value().parse().expect("--rounds: a number"),
                "--rotate" => options.rotate = value().parse().expect("--rotate: a number"),
                "--filter" => options.filters.push(value().to_ascii_lowercase()),
                other => panic!(
                    "unknown argument `{other}`; expected --messages N, --rounds N, --rotate K, --filter TEXT"
                ),
            }
        }
        assert!(
            options.messages >= PRODUCERS,
            "--messages: at least {PRODUCERS}"
        );
        options
    }

    fn wants(&self, entry: &Entry) -> bool {
        let path = format!("{}/{}", entry.cell, entry.implementation).to_ascii_lowercase();
        self.filters.is_empty() || self.filters.iter().any(|filter| path.contains(filter))
    }
}

/// The nearest-rank `per_mille`/1000 quantile of `sorted`, in µs.
#[allow(
    clippy::cast_precision_loss,
    reason = "nanoseconds far below 2^52, printed with two decimals"
)]
fn quantile_us(sorted: &[u64], per_mille: usize) -> f64 {
    let rank = (sorted.len() * per_mille).div_ceil(1000).max(1);
    sorted[rank - 1] as f64 / 1e3
}

fn main() {
    let options = Options::parse();
    let mut entries: Vec<Entry> = entries()
        .into_iter()
        .filter(|entry| options.wants(entry))
        .collect();
    assert!(!entries.is_empty(), "no entry matches the filters");
    measure(&mut entries, &options);
    report(&mut entries, &options);
}

/// Runs every entry once per round, cell by cell, rotating the order of
/// the implementations within a cell from one round to the next. Each run
/// gets a two-worker runtime of its own, shut down after it: a runtime
/// kept for the whole process keeps its worker threads, and the CPU they
/// use, around the thread cells too.
fn measure(entries: &mut [Entry], options: &Options) {
    let mut cells: Vec<&'static str> = entries.iter().map(|entry| entry.cell).collect();
    cells.dedup();
    for round in 0..options.rounds {
        for &cell in &cells {
            let indices: Vec<usize> = (0..entries.len())
                .filter(|&i| entries[i].cell == cell)
                .collect();
            for offset in 0..indices.len() {
                let entry =
                    &mut entries[indices[(offset + round + options.rotate) % indices.len()]];
                let runtime = Builder::new_multi_thread()
                    .worker_threads(2)
                    .build()
                    .expect("a two-worker runtime");
                let before = asyncband_core::wait::membarrier_calls();
                let latencies = (entry.run)(&runtime, options.messages);
                entry.membarriers += asyncband_core::wait::membarrier_calls() - before;
                entry.latencies.extend(latencies);
            }
        }
    }
}

/// Prints how it ran, then one line per entry.
fn report(entries: &mut [Entry], options: &Options) {
    let barrier = if asyncband_core::wait::membarrier_in_use() {
        "on"
    } else {
        "off"
    };
    println!(
        "# membarrier {barrier}; ASYNCBAND_MEMBARRIER={}",
        std::env::var("ASYNCBAND_MEMBARRIER").unwrap_or_default()
    );
    println!(
        "# {} messages per entry and round, {} round(s), capacity {CAP}, one message every {} µs in all; bursts of {BURST} every {} ms",
        options.messages,
        options.rounds,
        PERIOD.as_micros(),
        BURST_EVERY.as_millis()
    );
    println!(
        "# {:<12} {:<14} {:>8} {:>9} {:>9} {:>9} {:>9} {:>13}",
        "cell",
        "implementation",
        "messages",
        "p50_us",
        "p99_us",
        "p99.9_us",
        "max_us",
        "membarrier/1k"
    );
    for entry in entries {
        entry.latencies.sort_unstable();
        let sorted = &entry.latencies;
        let per_1k = if entry.implementation.starts_with("Asyncband") {
            #[allow(
                clippy::cast_precision_loss,
                reason = "counts far below 2^52, printed with two decimals"
            )]
            let per_1k = entry.membarriers as f64 * 1e3 / sorted.len() as f64;
            format!("{per_1k:.2}")
        } else {
            "-".to_owned()
        };
        println!(
            "  {:<12} {:<14} {:>8} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {per_1k:>13}",
            entry.cell,
            entry.implementation,
            sorted.len(),
            quantile_us(sorted, 500),
            quantile_us(sorted, 990),
            quantile_us(sorted, 999),
            quantile_us(sorted, 1000),
        );
    }
}
