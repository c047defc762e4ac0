//! Cell 10: the shapes rapidfire's own benchmarks measure, with more
//! threads than cores (on the 2-core machines this suite runs on, every
//! cell here is oversubscribed, which is the point).
//!
//! - [`threads`]: OS threads. The `*_try_*` cells spin as rapidfire's
//!   benchmarks do: `try_send` / `try_recv` again and again with a
//!   `spin_loop` hint between attempts, never yielding. The `*_blocking_*`
//!   cells use each implementation's blocking API instead, so rapidfire,
//!   which has none, sits them out.
//! - [`tasks`]: the same shapes as tokio tasks on a two-worker runtime, with
//!   each implementation's `send` / `recv` futures.
//!
//! The shapes: N producers → one consumer, bounded 1024, N = 4, 8 and 32;
//! 4 producers → 4 consumers, bounded 1024; two readers → one consumer,
//! bounded 4096, with payloads of 64, 256 and 1024 bytes; 40 producers →
//! one consumer, unbounded; a command / response round trip over a request
//! channel and a reply channel, bounded 4096; and the README demo's work
//! queue, 2 producers → 4 consumers, bounded 1024 (threads, blocking).
//! Consumers of a many-consumer cell take fixed shares of the messages.
//!
//! MPSC cells use `asyncband::mpsc` and `rapidfire::mpsc`; MPMC cells
//! `asyncband::mpmc`, `rapidfire` and the MPMC peers (crossbeam-channel,
//! async-channel, flume, kanal); the round trip `asyncband::spsc`, every
//! peer, and rtrb as the floor between threads.

pub mod tasks;
pub mod threads;

/// Messages per iteration in the N → 1 and N → M cells, shared among the
/// producers.
const MESSAGES: usize = 32_768;
/// Messages per producer in the 40-producer cells.
const COLLECTOR_SHARE: usize = 1_024;
/// Producers in the collector cells.
const COLLECTOR_PRODUCERS: usize = 40;
/// Round trips per iteration.
const ROUND_TRIPS: usize = 4_096;

/// Each producer's and each consumer's share of [`MESSAGES`], which must
/// divide evenly.
fn shares(producers: usize, consumers: usize) -> (usize, usize) {
    let (per_producer, per_consumer) = (MESSAGES / producers, MESSAGES / consumers);
    assert_eq!(per_producer * producers, MESSAGES, "an uneven share");
    assert_eq!(per_consumer * consumers, MESSAGES, "an uneven share");
    (per_producer, per_consumer)
}
