//! Streams through every flavour between threads, with `wait = spin`,
//! `wait = yield` and, for contrast, `wait = park`, marking where each thread starts and stops
//! streaming, so that `cargo x syscalls` can count the system calls each
//! thread makes while it streams.
//!
//! ```sh
//! cargo x syscalls            # runs this under strace and checks the counts
//! cargo run --release -p asyncband-benches --example spin_syscalls -- --messages 1000000
//! ```
//!
//! Each streaming thread, after the start barrier, looks up the path
//! `/.asyncband-stream/start/<cell>` (a `statx` or `newfstatat` call that
//! strace shows with its path) and, after its last send or receive,
//! `/.asyncband-stream/stop/<cell>`: what lies between one thread's two
//! markers is its streaming. Dropping the endpoints comes after. Senders
//! use `send_blocking` and receivers `recv_blocking` (or, in the select
//! cells, `select!` over two channels), so a full or empty channel waits by
//! the policy under test; a receiver stops when the
//! senders are gone and the channel is drained. The program checks that
//! every message arrives once and in each producer's order, and prints one
//! line per cell.

use std::sync::{Arc, Barrier};
use std::thread;

use asyncband::arity::{Many, One};
use asyncband::wait::{Park, Spin, Wait, Yield};
use asyncband::{AnyFlavour, mpmc, mpsc, select, spsc};

/// A sender's step: sends one value, blocking by the channel's policy.
type SendStep = Box<dyn FnMut(u64) + Send>;
/// A receiver's step: the next value, or `None` once disconnected.
type RecvStep = Box<dyn FnMut() -> Option<u64> + Send>;
/// A streaming thread's work: returns what it received and its step, which
/// drops after the stop marker.
type Body = Box<dyn FnOnce() -> (Vec<u64>, Box<dyn Send>) + Send>;

/// A streaming thread's marker: a path lookup that strace shows.
fn mark(edge: &str, cell: &str) {
    let _ = std::fs::metadata(format!("/.asyncband-stream/{edge}/{cell}"));
}

/// Bits of a value that carry the producer's sequence number; the
/// producer's index sits above them.
const SEQ_BITS: u32 = 40;

/// Streams `messages` values from `senders` to `receivers`, each step on a
/// thread of its own, and checks what arrived.
fn stream(cell: &str, senders: Vec<SendStep>, receivers: Vec<RecvStep>, messages: u64) {
    let producers = senders.len() as u64;
    let per_producer = messages / producers;
    let barrier = Arc::new(Barrier::new(senders.len() + receivers.len()));
    let spawn_marked = |body: Body| {
        let barrier = Arc::clone(&barrier);
        let cell = cell.to_owned();
        thread::spawn(move || {
            barrier.wait();
            mark("start", &cell);
            let (seen, endpoint) = body();
            mark("stop", &cell);
            drop(endpoint);
            seen
        })
    };
    let sending: Vec<_> = senders
        .into_iter()
        .zip(0..)
        .map(|(mut send, p): (SendStep, u64)| {
            spawn_marked(Box::new(move || {
                for i in 0..per_producer {
                    send((p << SEQ_BITS) | i);
                }
                (Vec::new(), Box::new(send) as Box<dyn Send>)
            }))
        })
        .collect();
    let receiving: Vec<_> = receivers
        .into_iter()
        .map(|mut recv| {
            spawn_marked(Box::new(move || {
                let mut seen = Vec::with_capacity(usize::try_from(messages).expect("fits"));
                while let Some(value) = recv() {
                    seen.push(value);
                }
                (seen, Box::new(recv) as Box<dyn Send>)
            }))
        })
        .collect();
    for thread in sending {
        thread.join().expect("a sender panicked");
    }
    let mut received = 0;
    for thread in receiving {
        let seen = thread.join().expect("a receiver panicked");
        received += seen.len() as u64;
        let mut next = vec![0; senders_len(producers)];
        for value in seen {
            let p = senders_len(value >> SEQ_BITS);
            let i = value & ((1 << SEQ_BITS) - 1);
            assert!(i >= next[p], "{cell}: producer {p}'s values out of order");
            next[p] = i + 1;
        }
    }
    assert_eq!(
        received,
        per_producer * producers,
        "{cell}: a value lost or doubled"
    );
    println!("{cell}: {received} values, {producers} sender(s), streamed");
}

fn senders_len(n: u64) -> usize {
    usize::try_from(n).expect("a small count")
}

fn spsc_cell<F>(cell: &str, (mut tx, mut rx): (spsc::Sender<F>, spsc::Receiver<F>), messages: u64)
where
    F: AnyFlavour<Item = u64, Senders = One, Receivers = One> + 'static,
{
    let send: SendStep = Box::new(move |v| tx.send_blocking(v).expect("the receiver is there"));
    let recv: RecvStep = Box::new(move || rx.recv_blocking().ok());
    stream(cell, vec![send], vec![recv], messages);
}

fn mpsc_cell<F>(cell: &str, (tx, mut rx): (mpsc::Sender<F>, mpsc::Receiver<F>), messages: u64)
where
    F: AnyFlavour<Item = u64, Senders = Many, Receivers = One> + 'static,
{
    let senders = (0..2)
        .map(|_| {
            let tx = tx.clone();
            Box::new(move |v| tx.send_blocking(v).expect("the receiver is there")) as SendStep
        })
        .collect();
    drop(tx);
    let recv: RecvStep = Box::new(move || rx.recv_blocking().ok());
    stream(cell, senders, vec![recv], messages);
}

fn mpmc_cell<F>(cell: &str, (tx, rx): (mpmc::Sender<F>, mpmc::Receiver<F>), messages: u64)
where
    F: AnyFlavour<Item = u64, Senders = Many, Receivers = Many> + 'static,
{
    let senders = (0..2)
        .map(|_| {
            let tx = tx.clone();
            Box::new(move |v| tx.send_blocking(v).expect("a receiver is there")) as SendStep
        })
        .collect();
    let receivers = (0..2)
        .map(|_| {
            let rx = rx.clone();
            Box::new(move || rx.recv_blocking().ok()) as RecvStep
        })
        .collect();
    drop((tx, rx));
    stream(cell, senders, receivers, messages);
}

/// Two senders, each into a channel of its own, and one receiver taking
/// both through `select!` (then the one left open through `recv_blocking`).
fn select_cell<W: Wait>(cell: &str, messages: u64) {
    let (mut a_tx, mut a) = spsc::Bounded::<u64, 64, { usize::MAX }, W>::channel();
    let (mut b_tx, mut b) = spsc::Bounded::<u64, 64, { usize::MAX }, W>::channel();
    let senders: Vec<SendStep> = vec![
        Box::new(move |v| a_tx.send_blocking(v).expect("the receiver is there")),
        Box::new(move |v| b_tx.send_blocking(v).expect("the receiver is there")),
    ];
    let mut closed = None;
    let recv: RecvStep = Box::new(move || match closed {
        None => {
            let (which, value) = select! {
                recv(a) -> value => (0, value),
                recv(b) -> value => (1, value),
            };
            if value.is_err() {
                closed = Some(which);
                let rest = if which == 0 {
                    b.recv_blocking()
                } else {
                    a.recv_blocking()
                };
                return rest.ok();
            }
            value.ok()
        }
        Some(0) => b.recv_blocking().ok(),
        Some(_) => a.recv_blocking().ok(),
    });
    stream(cell, senders, vec![recv], messages);
}

fn main() {
    let mut messages: u64 = 1_000_000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--messages" => {
                messages = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--messages N");
            }
            other => panic!("unknown argument `{other}`"),
        }
    }
    macro_rules! policy {
        ($w:ty, $label:literal) => {
            spsc_cell(
                concat!($label, "/spsc_bounded_64"),
                spsc::Bounded::<u64, 64, { usize::MAX }, $w>::channel(),
                messages,
            );
            spsc_cell(
                concat!($label, "/spsc_bounded_1024"),
                spsc::Bounded::<u64, 1024, { usize::MAX }, $w>::channel(),
                messages,
            );
            spsc_cell(
                concat!($label, "/spsc_unbounded"),
                spsc::Unbounded::<u64, { usize::MAX }, $w>::channel(),
                messages,
            );
            mpsc_cell(
                concat!($label, "/mpsc_bounded_1024"),
                mpsc::Bounded::<u64, 1024, { usize::MAX }, $w>::channel(),
                messages,
            );
            mpsc_cell(
                concat!($label, "/mpsc_unbounded"),
                mpsc::Unbounded::<u64, { usize::MAX }, $w>::channel(),
                messages,
            );
            mpmc_cell(
                concat!($label, "/mpmc_bounded_1024"),
                mpmc::Bounded::<u64, 1024, { usize::MAX }, $w>::channel(),
                messages,
            );
            mpmc_cell(
                concat!($label, "/mpmc_unbounded"),
                mpmc::Unbounded::<u64, { usize::MAX }, $w>::channel(),
                messages,
            );
            select_cell::<$w>(concat!($label, "/select_2_spsc_bounded_64"), messages);
        };
    }
    policy!(Spin, "spin");
    policy!(Yield, "yield");
    policy!(Park, "park");
}
