//! Cell 6: reservation, `reserve` + `Permit::send` + `recv`, against tokio's
//! `reserve` (the only peer with a reserve-then-send permit), both
//! `mpsc` bounded 64.
//!
//! `ready_path`: one thread, no runtime, no contention; the futures are
//! polled once each by hand with a reference-counted waker, like cell 2.
//! `workers_2_p4`: four producer tasks → one consumer on two tokio workers.

use std::pin::pin;
use std::task::Context;

use asyncband_benches::{CountingWaker, ready};
use divan::Bencher;
use divan::counter::ItemsCount;

#[allow(
    unused_imports,
    clippy::wildcard_imports,
    reason = "divan's `types = [..]` lists name the adapters; the glob keeps them in step with `peers/`"
)]
use crate::peers::*;
use crate::tasks::{self, ByReserve};

/// Operations before the timer starts (see cell 1).
const WARM_UP: u64 = 10_000;

#[divan::bench(types = [AsyncbandMpsc, Tokio], sample_size = 1000)]
fn ready_path<C: AsyncBounded<u64, 64, Tx: ReserveAsync<u64>>>(bencher: Bencher) {
    let (mut tx, mut rx) = C::channel();
    let (counter, waker) = CountingWaker::new();
    let mut cx = Context::from_waker(&waker);
    let mut round = |value: u64| {
        let Some(permit) = ready(pin!(tx.reserve()), &mut cx).into_option() else {
            panic!("reserve failed");
        };
        permit.send(value);
        assert_eq!(ready(pin!(rx.recv()), &mut cx).into_option(), Some(value));
    };
    for value in 0..WARM_UP {
        round(value);
    }
    let mut seq = 0u64;
    bencher.counter(ItemsCount::new(1u64)).bench_local(|| {
        round(divan::black_box(seq));
        seq = seq.wrapping_add(1);
    });
    assert_eq!(counter.wakes(), 0, "a ready path woke the waker");
}

#[divan::bench(types = [AsyncbandMpsc, Tokio], sample_size = 1, sample_count = 40)]
fn workers_2_p4<C: AsyncBounded<u64, 64, Tx: ReserveAsync<u64> + Clone>>(bencher: Bencher) {
    let runtime = tasks::two_workers();
    tasks::to_one::<u64, _, _>(bencher, &runtime, || {
        let (tx, rx) = C::channel();
        (fan_out(tx, 4).into_iter().map(ByReserve).collect(), rx)
    });
}
