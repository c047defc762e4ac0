//! Cell 1: one thread, `try_send` then `try_recv`, nobody waiting.
//!
//! `pair`: one message in, one out, per iteration (bounded 64 and
//! unbounded). `burst`: 1000 messages in, then all 1000 out (bounded 1024,
//! the smallest power of two that holds the burst, and unbounded). Each
//! channel first moves [`WARM_UP`] messages the same way, untimed. One table
//! per asyncband flavour, against every peer that can play that topology.

use divan::Bencher;
use divan::counter::ItemsCount;

use crate::peers::{TryRecv, TrySend};

/// Messages in one burst.
const BURST: u64 = 1000;
/// Operations before the timer starts: the storage has wrapped (or
/// recycled its blocks) many times and every lazy initialisation is done.
const WARM_UP: u64 = 10_000;

/// One message in, one message out.
fn pair<Tx: TrySend<u64>, Rx: TryRecv<u64>>(bencher: Bencher, (mut tx, mut rx): (Tx, Rx)) {
    let mut round = |value: u64| {
        assert!(tx.try_send(value), "full on the ready path");
        assert_eq!(rx.try_recv(), Some(value));
    };
    for value in 0..WARM_UP {
        round(value);
    }
    let mut seq = 0u64;
    bencher.counter(ItemsCount::new(1u64)).bench_local(|| {
        round(divan::black_box(seq));
        seq = seq.wrapping_add(1);
    });
}

/// A burst of [`BURST`] messages, then a drain.
fn burst<Tx: TrySend<u64>, Rx: TryRecv<u64>>(bencher: Bencher, (mut tx, mut rx): (Tx, Rx)) {
    let mut round = || {
        for value in 0..BURST {
            assert!(
                tx.try_send(divan::black_box(value)),
                "full within the burst"
            );
        }
        for value in 0..BURST {
            assert_eq!(rx.try_recv(), Some(value));
        }
    };
    for _ in 0..WARM_UP / BURST {
        round();
    }
    bencher.counter(ItemsCount::new(BURST)).bench_local(round);
}

/// The four benches of one topology.
macro_rules! topology {
    ($name:ident, bounded: [$($bounded:ty),*], unbounded: [$($unbounded:ty),*]) => {
        #[doc = concat!("Cell 1 for `asyncband::", stringify!($name), "` and the peers that can stand in for it.")]
        mod $name {
            use divan::Bencher;

            #[allow(
                unused_imports,
                clippy::wildcard_imports,
                reason = "divan's `types = [..]` lists name the adapters; the glob keeps them in step with `peers/`"
            )]
            use crate::peers::*;

            #[divan::bench(types = [$($bounded),*], sample_size = 1000)]
            fn pair_bounded_64<C: SyncBounded<u64, 64>>(bencher: Bencher) {
                super::pair(bencher, C::channel());
            }

            #[divan::bench(types = [$($unbounded),*], sample_size = 1000)]
            fn pair_unbounded<C: SyncUnbounded<u64>>(bencher: Bencher) {
                super::pair(bencher, C::channel());
            }

            #[divan::bench(types = [$($bounded),*], sample_size = 10)]
            fn burst_bounded_1024<C: SyncBounded<u64, 1024>>(bencher: Bencher) {
                super::burst(bencher, C::channel());
            }

            #[divan::bench(types = [$($unbounded),*], sample_size = 10)]
            fn burst_unbounded<C: SyncUnbounded<u64>>(bencher: Bencher) {
                super::burst(bencher, C::channel());
            }
        }
    };
}

topology!(
    spsc,
    bounded: [AsyncbandSpsc, Rtrb, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc, RapidfireMpsc],
    unbounded: [AsyncbandSpsc, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, StdMpsc, RapidfireMpsc]
);
topology!(
    mpsc,
    bounded: [AsyncbandMpsc, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, Thingbuf, StdMpsc, RapidfireMpsc],
    unbounded: [AsyncbandMpsc, Tokio, Crossbeam, AsyncChannel, Flume, Kanal, StdMpsc, RapidfireMpsc]
);
topology!(
    mpmc,
    bounded: [AsyncbandMpmc, Crossbeam, AsyncChannel, Flume, Kanal, Rapidfire],
    unbounded: [AsyncbandMpmc, Crossbeam, AsyncChannel, Flume, Kanal, Rapidfire]
);
