//! A blocking-thread pipeline: four stages on their own threads, joined by
//! bounded SPSC channels.
//!
//! ```text
//! cargo run --release --example pipeline
//! ```
//!
//! ```text
//! generate ──String──▶ parse ──Trade──▶ price ──u64──▶ sum (main thread)
//! ```
//!
//! - **generate** formats trade records as CSV lines, a few of them
//!   malformed on purpose, and sends them with `send_blocking`;
//! - **parse** reads lines with `for line in &mut rx` (the same as
//!   `rx.iter()`: each step parks until a line arrives, and the loop ends
//!   once the channel is closed and drained), drops the malformed ones and
//!   sends `Trade`s on;
//! - **price** takes trades in batches of up to 256 with
//!   `recv_many_blocking`, which waits for the first and then takes whatever
//!   else is ready in one step, and sends each trade's notional value;
//! - **sum** adds the notionals up with `rx.iter().sum()`.
//!
//! Every channel is bounded, so a slow stage makes the ones before it park
//! instead of piling up memory. Dropping a stage's sender when it is done is
//! what ends the next stage's loop: shutdown flows down the pipeline with
//! the data. The generator computes the expected total on its own, and the
//! program exits with status 1 if the pipeline's total differs.

use std::process::ExitCode;
use std::thread;
use std::time::Instant;

use asyncband::spsc;

/// Records generated.
const RECORDS: u64 = if cfg!(debug_assertions) {
    200_000
} else {
    1_000_000
};
/// Every this many records, one is malformed.
const MALFORMED_EVERY: u64 = 1_000;
/// Slots in each channel.
const CAP: usize = 1024;
/// Most trades the price stage takes at once.
const BATCH: usize = 256;

/// A parsed trade; prices in cents.
#[derive(Debug)]
struct Trade {
    price_cents: u64,
    quantity: u64,
}

fn main() -> ExitCode {
    let (mut lines_tx, mut lines_rx) = spsc::bounded::<String, CAP>();
    let (mut trades_tx, mut trades_rx) = spsc::bounded::<Trade, CAP>();
    let (mut notionals_tx, mut notionals_rx) = spsc::bounded::<u64, CAP>();
    let start = Instant::now();

    let generate = stage("generate", move || {
        let mut expected = 0u64;
        for id in 0..RECORDS {
            let (price_cents, quantity) = (10_000 + id % 5_000, 1 + id % 100);
            let line = if id % MALFORMED_EVERY == MALFORMED_EVERY - 1 {
                format!("{id},not-a-price,{quantity}")
            } else {
                expected += price_cents * quantity;
                format!(
                    "{id},{}.{:02},{quantity}",
                    price_cents / 100,
                    price_cents % 100
                )
            };
            lines_tx
                .send_blocking(line)
                .expect("parse outlives generate");
        }
        expected
        // `lines_tx` is dropped here: parse's loop ends once it drains.
    });

    let parse = stage("parse", move || {
        let mut rejected = 0u64;
        for line in &mut lines_rx {
            match parse_trade(&line) {
                Some(trade) => trades_tx
                    .send_blocking(trade)
                    .expect("price outlives parse"),
                None => rejected += 1,
            }
        }
        rejected
    });

    let price = stage("price", move || {
        let mut batch = Vec::with_capacity(BATCH);
        let (mut batches, mut trades) = (0u64, 0u64);
        // Returns 0 only once parse is done and the channel is drained.
        while trades_rx.recv_many_blocking(&mut batch, BATCH) > 0 {
            batches += 1;
            for trade in batch.drain(..) {
                trades += 1;
                let notional = trade.price_cents * trade.quantity;
                notionals_tx
                    .send_blocking(notional)
                    .expect("sum outlives price");
            }
        }
        (batches, trades)
    });

    let total: u64 = notionals_rx.iter().sum();
    let elapsed = start.elapsed();

    let expected = generate.join().expect("generate panicked");
    let rejected = parse.join().expect("parse panicked");
    let (batches, trades) = price.join().expect("price panicked");

    #[allow(clippy::cast_precision_loss, reason = "ratios for display")]
    let (per_second, per_batch) = (
        RECORDS as f64 / elapsed.as_secs_f64(),
        trades as f64 / batches.max(1) as f64,
    );
    println!(
        "pipeline: generate -> parse -> price -> sum, spsc::Bounded<_, {CAP}> between stages\n"
    );
    println!(
        "records:  {} in {:.1} ms ({:.2} M records/s through 4 threads)",
        thousands(RECORDS),
        elapsed.as_secs_f64() * 1e3,
        per_second / 1e6
    );
    println!(
        "parse:    {} malformed lines rejected, {} trades passed on",
        thousands(rejected),
        thousands(trades)
    );
    println!(
        "price:    {} batches from recv_many_blocking, {per_batch:.1} trades each on average",
        thousands(batches)
    );

    let good = total == expected && rejected + trades == RECORDS;
    println!(
        "sum:      ${} (expected ${}) {}",
        dollars(total),
        dollars(expected),
        if good { "ok" } else { "WRONG" }
    );
    if good {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Parses `id,price,quantity`, with the price in dollars and two decimals.
fn parse_trade(line: &str) -> Option<Trade> {
    let mut fields = line.split(',');
    let _id: u64 = fields.next()?.parse().ok()?;
    let (dollars, cents) = fields.next()?.split_once('.')?;
    let price_cents = dollars.parse::<u64>().ok()? * 100 + cents.parse::<u64>().ok()?;
    let quantity = fields.next()?.parse().ok()?;
    Some(Trade {
        price_cents,
        quantity,
    })
}

/// Runs `work` on a named thread.
fn stage<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    thread::Builder::new()
        .name(name.to_owned())
        .spawn(work)
        .expect("spawn a stage thread")
}

/// Cents as dollars: `123456789` as `1,234,567.89`.
fn dollars(cents: u64) -> String {
    format!("{}.{:02}", thousands(cents / 100), cents % 100)
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
