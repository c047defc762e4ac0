//! A market-data fan-in: many feed-handler threads publish ticks into one
//! bounded `mpsc` channel of 4096 slots, and one strategy thread consumes
//! them, keeps a last-price book, checks every feed's sequence numbers for
//! gaps, and measures how long each tick spent between `send` and `recv`.
//!
//! ```text
//! cargo run --release --example market_data        # 8 feeds
//! cargo run --release --example market_data -- 16  # 16 feeds
//! ```
//!
//! Each tick carries the [`Instant`] its feed sent it at; the strategy
//! subtracts that from the time it received it. Two phases:
//!
//! - **burst**: every feed sends as fast as it can. This measures throughput;
//!   the channel stays full, so latency is mostly time a feed spent parked
//!   waiting for room plus time queued behind up to 4096 earlier ticks: the
//!   price of a bounded buffer, whose consumer pushes back on its producers
//!   instead of letting memory grow.
//! - **paced**: every feed sends a few ticks, then sleeps, as a real feed
//!   would between packets. The strategy is often parked on an empty
//!   channel, so latency is mostly the cost of waking it.
//!
//! Latencies are exact: every tick's is recorded and sorted, no histogram
//! buckets. On a busy machine with few cores the tails show scheduling
//! delays rather than the channel; run it on a quiet one.

use std::thread;
use std::time::{Duration, Instant};

use asyncband::{channel, mpsc};

/// The channel every feed publishes into.
type TickReceiver = mpsc::Receiver<mpsc::Bounded<Tick, 4096>>;

/// Feeds when no count is given on the command line.
const DEFAULT_FEEDS: usize = 8;
/// Ticks in the burst phase, across all feeds.
const BURST_TICKS: u64 = if cfg!(debug_assertions) {
    500_000
} else {
    2_000_000
};
/// In the paced phase each feed sends `PACED_BATCH` ticks, sleeps
/// `PACED_PAUSE`, and repeats `PACED_ROUNDS` times: about half a second.
const PACED_BATCH: u64 = 4;
const PACED_PAUSE: Duration = Duration::from_micros(200);
const PACED_ROUNDS: u64 = 2_000;
/// Instruments in the book.
const INSTRUMENTS: usize = 64;

/// One price update, as a feed handler would publish it.
#[derive(Debug, Clone, Copy)]
struct Tick {
    feed: usize,
    /// Per-feed sequence number, for gap detection.
    seq: u64,
    /// Index into the book.
    instrument: usize,
    /// Price in ticks of 0.0001.
    price: i64,
    quantity: u32,
    sent_at: Instant,
}

/// How a feed spaces its ticks.
#[derive(Debug, Clone, Copy)]
enum Pace {
    Flat,
    Batches { batch: u64, pause: Duration },
}

/// What the strategy saw in one phase.
struct Report {
    ticks: u64,
    elapsed: Duration,
    /// Nanoseconds from send to receive, sorted.
    latencies: Vec<u64>,
    /// Ticks whose sequence number was not the next one for their feed.
    gaps: u64,
    /// The last price of each instrument.
    last_prices: [i64; INSTRUMENTS],
    /// Quantity traded, over all instruments.
    volume: u64,
}

fn main() {
    let feeds = match std::env::args().nth(1) {
        None => DEFAULT_FEEDS,
        Some(arg) => match arg.parse::<usize>() {
            Ok(feeds) if feeds > 0 => feeds,
            _ => {
                eprintln!(
                    "usage: market_data [FEEDS]  (FEEDS a positive number, default {DEFAULT_FEEDS})"
                );
                std::process::exit(2);
            }
        },
    };
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let cpus = thread::available_parallelism().map_or(1, usize::from);
    println!(
        "market data: {feeds} feeds -> 1 strategy over mpsc::Bounded<Tick, 4096> \
         ({profile} build, {cpus} CPUs)\n"
    );

    let feeds_u64 = feeds as u64;
    let burst = run(feeds, BURST_TICKS.div_ceil(feeds_u64), Pace::Flat);
    let paced = run(
        feeds,
        PACED_BATCH * PACED_ROUNDS,
        Pace::Batches {
            batch: PACED_BATCH,
            pause: PACED_PAUSE,
        },
    );

    let header = format!(
        "{:<6} {:>10} {:>10} {:>12} {:>9} {:>9} {:>9} {:>9} {:>9} {:>5}",
        "phase", "ticks", "elapsed", "ticks/s", "p50", "p90", "p99", "p99.9", "max", "gaps"
    );
    println!("{header}\n{}", "-".repeat(header.len()));
    for (phase, report) in [("burst", &burst), ("paced", &paced)] {
        println!(
            "{phase:<6} {:>10} {:>10} {:>12} {:>9} {:>9} {:>9} {:>9} {:>9} {:>5}",
            thousands(report.ticks),
            format!("{:.1} ms", report.elapsed.as_secs_f64() * 1e3),
            format!("{:.2} M/s", rate(report.ticks, report.elapsed) / 1e6),
            nanos(percentile(&report.latencies, 500)),
            nanos(percentile(&report.latencies, 900)),
            nanos(percentile(&report.latencies, 990)),
            nanos(percentile(&report.latencies, 999)),
            nanos(report.latencies.last().copied().unwrap_or(0)),
            report.gaps,
        );
    }
    let last = paced.last_prices[0];
    println!(
        "\nbook: instrument 0 last traded at {}.{:04}; volume {} (burst), {} (paced)",
        last / 10_000,
        last % 10_000,
        thousands(burst.volume),
        thousands(paced.volume),
    );

    if burst.gaps + paced.gaps > 0 {
        eprintln!("sequence gaps: a tick was lost, duplicated or reordered");
        std::process::exit(1);
    }
}

/// Runs one phase: `feeds` threads each send `ticks_per_feed` ticks at
/// `pace`; the calling thread is the strategy.
fn run(feeds: usize, ticks_per_feed: u64, pace: Pace) -> Report {
    // One line with the macro; `TickReceiver` names the same type.
    let (tx, rx) = channel!(mpsc, bounded = 4096, Tick);
    let start = Instant::now();
    let handlers: Vec<_> = (0..feeds)
        .map(|feed| {
            let tx = tx.clone();
            thread::spawn(move || {
                let mut prices = PriceWalk::new(feed);
                for seq in 0..ticks_per_feed {
                    if let Pace::Batches { batch, pause } = pace {
                        if seq > 0 && seq % batch == 0 {
                            thread::sleep(pause);
                        }
                    }
                    let (instrument, price, quantity) = prices.next_tick();
                    let tick = Tick {
                        feed,
                        seq,
                        instrument,
                        price,
                        quantity,
                        sent_at: Instant::now(),
                    };
                    if tx.send_blocking(tick).is_err() {
                        return; // The strategy is gone; nothing to publish to.
                    }
                }
            })
        })
        .collect();
    // The handlers hold the only senders now: the channel closes, and the
    // strategy's loop ends, when the last of them finishes.
    drop(tx);

    let expected = ticks_per_feed * feeds as u64;
    let mut report = strategy(rx, feeds, expected);
    report.elapsed = start.elapsed();
    for handler in handlers {
        handler.join().expect("feed handler panicked");
    }
    if report.ticks != expected {
        report.gaps += expected.abs_diff(report.ticks);
    }
    report
}

/// Consumes ticks until every feed is done.
fn strategy(mut rx: TickReceiver, feeds: usize, expected: u64) -> Report {
    let mut latencies = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    let mut next_seq = vec![0u64; feeds];
    let mut last_prices = [0i64; INSTRUMENTS];
    let mut volume = 0u64;
    let mut gaps = 0;
    while let Ok(tick) = rx.recv_blocking() {
        let latency = tick.sent_at.elapsed();
        latencies.push(u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX));

        let next = &mut next_seq[tick.feed];
        if tick.seq != *next {
            gaps += 1;
        }
        *next = tick.seq + 1;
        last_prices[tick.instrument] = tick.price;
        volume += u64::from(tick.quantity);
    }
    latencies.sort_unstable();
    Report {
        ticks: latencies.len() as u64,
        elapsed: Duration::ZERO,
        latencies,
        gaps,
        last_prices,
        volume,
    }
}

/// A deterministic random walk of prices, different for every feed.
struct PriceWalk {
    state: u64,
    prices: [i64; INSTRUMENTS],
}

impl PriceWalk {
    fn new(feed: usize) -> Self {
        Self {
            state: 0x9E37_79B9_7F4A_7C15 ^ (feed as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9),
            prices: [100_0000; INSTRUMENTS],
        }
    }

    /// The next `(instrument, price, quantity)`.
    fn next_tick(&mut self) -> (usize, i64, u32) {
        // xorshift64
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        let [a, b, c, d, ..] = self.state.to_le_bytes();
        let instrument = usize::from(a) % INSTRUMENTS;
        let step = i64::from(b % 21) - 10;
        let quantity = 1 + u32::from(u16::from_le_bytes([c, d]) % 500);
        let price = &mut self.prices[instrument];
        *price = (*price + step).max(1);
        (instrument, *price, quantity)
    }
}

/// The value at `permille` (500 for the median) by the nearest-rank method.
fn percentile(sorted: &[u64], permille: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (sorted.len() * permille).div_ceil(1000).max(1);
    sorted[rank - 1]
}

/// Ticks per second.
#[allow(clippy::cast_precision_loss, reason = "a rate for display")]
fn rate(ticks: u64, elapsed: Duration) -> f64 {
    ticks as f64 / elapsed.as_secs_f64()
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A latency in the unit that suits it.
#[allow(clippy::cast_precision_loss, reason = "latencies for display")]
fn nanos(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.1} us", ns as f64 / 1e3),
        _ => format!("{:.1} ms", ns as f64 / 1e6),
    }
}
