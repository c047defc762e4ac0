//! Cell 4: tokio runtimes, current-thread and two workers; P = 1 and 4
//! producer tasks → 1 consumer task; capacity 1, 64 and 4096;
//! [`MESSAGES`](crate::tasks::MESSAGES) messages per iteration.
//!
//! P = 1 uses `asyncband::spsc`, P = 4 `asyncband::mpsc`. Peers: those with
//! an async API (crossbeam-channel, std and rtrb have none).

use divan::Bencher;

#[allow(
    unused_imports,
    clippy::wildcard_imports,
    reason = "divan's `types = [..]` lists name the adapters; the glob keeps them in step with `peers/`"
)]
use crate::peers::*;
use crate::tasks::{self, BySend};

#[divan::bench(
    types = [AsyncbandSpsc, Tokio, AsyncChannel, Flume, Kanal, Thingbuf, RapidfireMpsc],
    consts = [1, 64, 4096],
    sample_size = 1,
    sample_count = 40,
)]
fn current_thread_p1<C: AsyncBounded<u64, CAP>, const CAP: usize>(bencher: Bencher) {
    let runtime = tasks::current_thread();
    tasks::to_one::<u64, _, _>(bencher, &runtime, || {
        let (tx, rx) = C::channel();
        (vec![BySend(tx)], rx)
    });
}

#[divan::bench(
    types = [AsyncbandMpsc, Tokio, AsyncChannel, Flume, Kanal, Thingbuf, RapidfireMpsc],
    consts = [1, 64, 4096],
    sample_size = 1,
    sample_count = 40,
)]
fn current_thread_p4<C: AsyncBounded<u64, CAP, Tx: Clone>, const CAP: usize>(bencher: Bencher) {
    let runtime = tasks::current_thread();
    tasks::to_one::<u64, _, _>(bencher, &runtime, || {
        let (tx, rx) = C::channel();
        (fan_out(tx, 4).into_iter().map(BySend).collect(), rx)
    });
}

#[divan::bench(
    types = [AsyncbandSpsc, Tokio, AsyncChannel, Flume, Kanal, Thingbuf, RapidfireMpsc],
    consts = [1, 64, 4096],
    sample_size = 1,
    sample_count = 40,
)]
fn workers_2_p1<C: AsyncBounded<u64, CAP>, const CAP: usize>(bencher: Bencher) {
    let runtime = tasks::two_workers();
    tasks::to_one::<u64, _, _>(bencher, &runtime, || {
        let (tx, rx) = C::channel();
        (vec![BySend(tx)], rx)
    });
}

#[divan::bench(
    types = [AsyncbandMpsc, Tokio, AsyncChannel, Flume, Kanal, Thingbuf, RapidfireMpsc],
    consts = [1, 64, 4096],
    sample_size = 1,
    sample_count = 40,
)]
fn workers_2_p4<C: AsyncBounded<u64, CAP, Tx: Clone>, const CAP: usize>(bencher: Bencher) {
    let runtime = tasks::two_workers();
    tasks::to_one::<u64, _, _>(bencher, &runtime, || {
        let (tx, rx) = C::channel();
        (fan_out(tx, 4).into_iter().map(BySend).collect(), rx)
    });
}
