//! What a short-lived channel costs from creation to drop, asyncband against
//! its peers: request/reply code makes one per request.
//!
//! Two patterns, each on a capacity-1 channel carrying one `u64`:
//!
//! - `drop`: create, `try_send`, drop the sender, `try_recv`, drop the
//!   receiver;
//! - `reply`: create, poll a `recv` future once (it waits: the reply has not
//!   come), `try_send`, poll it again (ready), drop the receiver, then the
//!   sender.
//!
//! With `BUSY` other threads spinning in the process, as in a server whose
//! other threads are working, anything that interrupts every running thread
//! of the process (`membarrier`) shows up here.
//!
//! ```sh
//! cargo run --release -p asyncband-benches --example short_lived -- 9 1
//! ```
//!
//! runs 9 rounds with one busy thread (defaults: 9 rounds, 0 busy threads),
//! the implementations interleaved in each round, and prints the median
//! ns per channel of each.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// Channels per round.
const CHANNELS: u32 = 20_000;

/// One channel's life in one pattern.
type Life = fn(u64);

/// Polls `recv` once expecting `Pending`, calls `send`, polls again
/// expecting `value`.
fn wait_then_receive<F, E>(recv: F, send: impl FnOnce(), value: u64)
where
    F: Future<Output = Result<u64, E>>,
    E: std::fmt::Debug,
{
    let mut cx = Context::from_waker(Waker::noop());
    let mut recv = pin!(recv);
    assert!(recv.as_mut().poll(&mut cx).is_pending(), "nothing sent yet");
    send();
    match recv.as_mut().poll(&mut cx) {
        Poll::Ready(received) => assert_eq!(received.expect("sender alive"), value),
        Poll::Pending => panic!("sent, but the receive still waits"),
    }
}

fn asyncband_spsc_drop(value: u64) {
    let (mut tx, mut rx) = asyncband::spsc::Bounded::<u64, 1>::channel();
    tx.try_send(value).expect("room for one");
    drop(tx);
    assert_eq!(rx.try_recv(), Ok(value));
}

fn asyncband_spsc_reply(value: u64) {
    let (mut tx, mut rx) = asyncband::spsc::Bounded::<u64, 1>::channel();
    wait_then_receive(
        rx.recv(),
        || tx.try_send(value).expect("room for one"),
        value,
    );
    drop(rx);
}

fn asyncband_mpsc_drop(value: u64) {
    let (tx, mut rx) = asyncband::mpsc::Bounded::<u64, 1>::channel();
    tx.try_send(value).expect("room for one");
    drop(tx);
    assert_eq!(rx.try_recv(), Ok(value));
}

fn asyncband_mpsc_reply(value: u64) {
    let (tx, mut rx) = asyncband::mpsc::Bounded::<u64, 1>::channel();
    wait_then_receive(
        rx.recv(),
        || tx.try_send(value).expect("room for one"),
        value,
    );
    drop(rx);
}

fn tokio_drop(value: u64) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(1);
    tx.try_send(value).expect("room for one");
    drop(tx);
    assert_eq!(rx.try_recv(), Ok(value));
}

fn tokio_reply(value: u64) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(1);
    wait_then_receive(
        async { rx.recv().await.ok_or("closed") },
        || tx.try_send(value).expect("room for one"),
        value,
    );
    drop(rx);
}

fn kanal_drop(value: u64) {
    let (tx, rx) = kanal::bounded::<u64>(1);
    assert!(tx.try_send(value).expect("open"), "room for one");
    drop(tx);
    assert_eq!(rx.try_recv().expect("open"), Some(value));
}

fn kanal_reply(value: u64) {
    let (tx, rx) = kanal::bounded_async::<u64>(1);
    wait_then_receive(
        rx.recv(),
        || assert!(tx.try_send(value).expect("open"), "room for one"),
        value,
    );
    drop(rx);
}

fn flume_drop(value: u64) {
    let (tx, rx) = flume::bounded::<u64>(1);
    tx.try_send(value).expect("room for one");
    drop(tx);
    assert_eq!(rx.try_recv(), Ok(value));
}

fn flume_reply(value: u64) {
    let (tx, rx) = flume::bounded::<u64>(1);
    wait_then_receive(
        rx.recv_async(),
        || tx.try_send(value).expect("room for one"),
        value,
    );
    drop(rx);
}

fn crossbeam_drop(value: u64) {
    let (tx, rx) = crossbeam_channel::bounded::<u64>(1);
    tx.try_send(value).expect("room for one");
    drop(tx);
    assert_eq!(rx.try_recv(), Ok(value));
}

fn async_channel_reply(value: u64) {
    let (tx, rx) = async_channel::bounded::<u64>(1);
    wait_then_receive(
        rx.recv(),
        || tx.try_send(value).expect("room for one"),
        value,
    );
    drop(rx);
}

/// Median ns per channel of `life` over one round.
fn round(life: Life) -> f64 {
    let start = Instant::now();
    for value in 0..CHANNELS {
        life(u64::from(value));
    }
    start.elapsed().as_secs_f64() * 1e9 / f64::from(CHANNELS)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args
        .next()
        .map_or(9, |n| n.parse().expect("rounds: a number"));
    let busy: usize = args
        .next()
        .map_or(0, |n| n.parse().expect("busy threads: a number"));
    let stop = Arc::new(AtomicBool::new(false));
    let spinners: Vec<_> = (0..busy)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let lives: [(&str, &str, Life); 12] = [
        ("drop", "asyncband spsc", asyncband_spsc_drop),
        ("drop", "asyncband mpsc", asyncband_mpsc_drop),
        ("drop", "tokio", tokio_drop),
        ("drop", "kanal", kanal_drop),
        ("drop", "flume", flume_drop),
        ("drop", "crossbeam-channel", crossbeam_drop),
        ("reply", "asyncband spsc", asyncband_spsc_reply),
        ("reply", "asyncband mpsc", asyncband_mpsc_reply),
        ("reply", "tokio", tokio_reply),
        ("reply", "kanal", kanal_reply),
        ("reply", "flume", flume_reply),
        ("reply", "async-channel", async_channel_reply),
    ];
    let mut times = vec![Vec::new(); lives.len()];
    for _ in 0..rounds {
        for ((_, _, life), samples) in lives.iter().zip(&mut times) {
            samples.push(round(*life));
        }
    }
    stop.store(true, Ordering::Relaxed);
    for spinner in spinners {
        spinner.join().expect("a spinner panicked");
    }
    println!("{busy} busy thread(s), {CHANNELS} channels per round, {rounds} rounds");
    println!("pattern | implementation | ns per channel (median)");
    for ((pattern, name, _), mut samples) in lives.into_iter().zip(times) {
        samples.sort_by(f64::total_cmp);
        println!("{pattern} | {name} | {:.0}", samples[samples.len() / 2]);
    }
}
