//! Cell 5: 1 KiB payloads (`[u8; 1024]` stamped with producer and sequence,
//! both checked on receive), bounded 64, two tokio workers, P = 1 and 4.

use asyncband_benches::Kib;
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
    sample_size = 1,
    sample_count = 40,
)]
fn workers_2_p1<C: AsyncBounded<Kib, 64>>(bencher: Bencher) {
    let runtime = tasks::two_workers();
    tasks::to_one::<Kib, _, _>(bencher, &runtime, || {
        let (tx, rx) = C::channel();
        (vec![BySend(tx)], rx)
    });
}

#[divan::bench(
    types = [AsyncbandMpsc, Tokio, AsyncChannel, Flume, Kanal, Thingbuf, RapidfireMpsc],
    sample_size = 1,
    sample_count = 40,
)]
fn workers_2_p4<C: AsyncBounded<Kib, 64, Tx: Clone>>(bencher: Bencher) {
    let runtime = tasks::two_workers();
    tasks::to_one::<Kib, _, _>(bencher, &runtime, || {
        let (tx, rx) = C::channel();
        (fan_out(tx, 4).into_iter().map(BySend).collect(), rx)
    });
}
