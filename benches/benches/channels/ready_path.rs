//! Cell 2: the async ready path without a runtime. Each iteration builds a
//! `send` future and polls it once, then a `recv` future and polls it once,
//! with a real reference-counted waker (an `Arc<impl Wake>`); both must be
//! ready at the first poll, and the waker must never be woken.
//!
//! Bounded 64 and unbounded, one table per asyncband flavour, against the
//! peers with an async API (crossbeam-channel, std and rtrb have none).

use std::pin::pin;
use std::task::Context;

use asyncband_benches::{CountingWaker, ready};
use divan::Bencher;
use divan::counter::ItemsCount;

use crate::peers::{Outcome, RecvAsync, SendAsync};

/// Operations before the timer starts (see cell 1).
const WARM_UP: u64 = 10_000;

/// One `send` poll and one `recv` poll.
fn send_then_recv<Tx: SendAsync<u64>, Rx: RecvAsync<u64>>(
    bencher: Bencher,
    (mut tx, mut rx): (Tx, Rx),
) {
    let (counter, waker) = CountingWaker::new();
    let mut cx = Context::from_waker(&waker);
    let mut round = |value: u64| {
        assert!(
            ready(pin!(tx.send(value)), &mut cx).into_option().is_some(),
            "send failed"
        );
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

/// The two benches of one topology.
macro_rules! topology {
    ($name:ident, bounded: [$($bounded:ty),*], unbounded: [$($unbounded:ty),*]) => {
        #[doc = concat!("Cell 2 for `asyncband::", stringify!($name), "` and the peers that can stand in for it.")]
        mod $name {
            use divan::Bencher;

            #[allow(
                unused_imports,
                clippy::wildcard_imports,
                reason = "divan's `types = [..]` lists name the adapters; the glob keeps them in step with `peers/`"
            )]
            use crate::peers::*;

            #[divan::bench(types = [$($bounded),*], sample_size = 1000)]
            fn bounded_64<C: AsyncBounded<u64, 64>>(bencher: Bencher) {
                super::send_then_recv(bencher, C::channel());
            }

            #[divan::bench(types = [$($unbounded),*], sample_size = 1000)]
            fn unbounded<C: AsyncUnbounded<u64>>(bencher: Bencher) {
                super::send_then_recv(bencher, C::channel());
            }
        }
    };
}

topology!(
    spsc,
    bounded: [AsyncbandSpsc, Tokio, AsyncChannel, Flume, Kanal, Thingbuf, RapidfireMpsc],
    unbounded: [AsyncbandSpsc, Tokio, AsyncChannel, Flume, Kanal, RapidfireMpsc]
);
topology!(
    mpsc,
    bounded: [AsyncbandMpsc, Tokio, AsyncChannel, Flume, Kanal, Thingbuf, RapidfireMpsc],
    unbounded: [AsyncbandMpsc, Tokio, AsyncChannel, Flume, Kanal, RapidfireMpsc]
);
topology!(
    mpmc,
    bounded: [AsyncbandMpmc, AsyncChannel, Flume, Kanal, Rapidfire],
    unbounded: [AsyncbandMpmc, AsyncChannel, Flume, Kanal, Rapidfire]
);
