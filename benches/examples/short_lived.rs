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
//! ns per channel of each. The channels are the bench suite's adapters
//! (`benches/peers/`): each peer's try calls for `drop`, its futures for
//! `reply`.

#[path = "../peers/mod.rs"]
#[allow(
    dead_code,
    unused_imports,
    reason = "the suite's adapters; this probe uses the bounded channels, not rtrb or mpmc"
)]
mod peers;

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use peers::{
    AsyncBounded, AsyncChannel, AsyncbandMpsc, AsyncbandSpsc, Crossbeam, Flume, Kanal, Outcome,
    RecvAsync, SendAsync, StdMpsc, SyncBounded, Thingbuf, Tokio, TryRecv, TrySend,
};

/// Channels per round.
const CHANNELS: u32 = 20_000;

/// One channel's life in one pattern.
type Life = fn(u64);

/// `drop`: create, `try_send`, drop the sender, `try_recv`, drop.
fn drop_life<C: SyncBounded<u64, 1>>(value: u64) {
    let (mut tx, mut rx) = C::channel();
    assert!(tx.try_send(value), "room for one");
    drop(tx);
    assert_eq!(rx.try_recv(), Some(value));
}

/// `reply`: create, poll a receive (it waits), send, poll the receive
/// again (ready), drop the receiver, then the sender.
fn reply_life<C: AsyncBounded<u64, 1>>(value: u64) {
    let (mut tx, mut rx) = C::channel();
    let mut cx = Context::from_waker(Waker::noop());
    {
        let mut recv = pin!(rx.recv());
        assert!(recv.as_mut().poll(&mut cx).is_pending(), "nothing sent yet");
        match pin!(tx.send(value)).poll(&mut cx) {
            Poll::Ready(sent) => assert!(sent.into_option().is_some(), "receiver alive"),
            Poll::Pending => panic!("no room for one"),
        }
        match recv.as_mut().poll(&mut cx) {
            Poll::Ready(received) => assert_eq!(received.into_option(), Some(value)),
            Poll::Pending => panic!("sent, but the receive still waits"),
        }
    }
    drop(rx);
    drop(tx);
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
    let lives: [(&str, &str, Life); 16] = [
        ("drop", "asyncband spsc", drop_life::<AsyncbandSpsc>),
        ("drop", "asyncband mpsc", drop_life::<AsyncbandMpsc>),
        ("drop", "tokio", drop_life::<Tokio>),
        ("drop", "kanal", drop_life::<Kanal>),
        ("drop", "flume", drop_life::<Flume>),
        ("drop", "crossbeam-channel", drop_life::<Crossbeam>),
        ("drop", "async-channel", drop_life::<AsyncChannel>),
        ("drop", "thingbuf", drop_life::<Thingbuf>),
        ("drop", "std mpsc", drop_life::<StdMpsc>),
        ("reply", "asyncband spsc", reply_life::<AsyncbandSpsc>),
        ("reply", "asyncband mpsc", reply_life::<AsyncbandMpsc>),
        ("reply", "tokio", reply_life::<Tokio>),
        ("reply", "kanal", reply_life::<Kanal>),
        ("reply", "flume", reply_life::<Flume>),
        ("reply", "async-channel", reply_life::<AsyncChannel>),
        ("reply", "thingbuf", reply_life::<Thingbuf>),
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
