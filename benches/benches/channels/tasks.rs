//! Producers → one consumer as tokio tasks, shared by cells 4, 5 and 6.
//!
//! The runtime is built once per bench and the channel before the timer
//! starts; the timed part spawns the consumer and the producer tasks on the
//! runtime, waits for all of them and checks what the consumer received.

use std::future::Future;

use asyncband_benches::{InOrder, Payload};
use divan::Bencher;
use divan::counter::ItemsCount;
use tokio::runtime::{Builder, Runtime};

use crate::peers::{Outcome, RecvAsync, ReserveAsync, SendAsync, SendPermit};

/// Messages per iteration, shared among the producers.
pub const MESSAGES: usize = 16_384;

/// A tokio current-thread runtime.
pub fn current_thread() -> Runtime {
    Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime")
}

/// A tokio runtime with two worker threads.
pub fn two_workers() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("a two-worker runtime")
}

/// How a producer task gets its messages into the channel.
pub trait Produce<T>: Send + 'static {
    /// Sends messages `0..count` of producer `producer`.
    fn produce(self, producer: usize, count: usize) -> impl Future<Output = ()> + Send;
}

/// Produces with `send(value).await`.
#[derive(Debug)]
pub struct BySend<Tx>(pub Tx);

impl<T: Payload, Tx: SendAsync<T> + 'static> Produce<T> for BySend<Tx> {
    async fn produce(self, producer: usize, count: usize) {
        let mut tx = self.0;
        for seq in 0..count {
            assert!(
                tx.send(T::stamped(producer, seq))
                    .await
                    .into_option()
                    .is_some(),
                "receiver gone"
            );
        }
    }
}

/// Produces with `reserve().await`, then `Permit::send(value)`.
#[derive(Debug)]
pub struct ByReserve<Tx>(pub Tx);

impl<T: Payload, Tx: ReserveAsync<T> + 'static> Produce<T> for ByReserve<Tx> {
    async fn produce(self, producer: usize, count: usize) {
        let mut tx = self.0;
        for seq in 0..count {
            let Some(permit) = tx.reserve().await.into_option() else {
                panic!("receiver gone");
            };
            permit.send(T::stamped(producer, seq));
        }
    }
}

/// Benches producer tasks → one consumer task on `runtime`.
pub fn to_one<T: Payload, P: Produce<T>, Rx: RecvAsync<T> + 'static>(
    bencher: Bencher,
    runtime: &Runtime,
    make: impl Fn() -> (Vec<P>, Rx) + Sync,
) {
    bencher
        .counter(ItemsCount::new(MESSAGES))
        .with_inputs(make)
        .bench_local_values(|(producers, mut rx)| {
            let count = producers.len();
            let per_producer = MESSAGES / count;
            runtime.block_on(async move {
                let consumer = tokio::spawn(async move {
                    let mut check = InOrder::new(count);
                    while let Some(message) = rx.recv().await.into_option() {
                        check.take(&message);
                    }
                    check
                });
                let producers: Vec<_> = producers
                    .into_iter()
                    .enumerate()
                    .map(|(producer, p)| tokio::spawn(p.produce(producer, per_producer)))
                    .collect();
                for producer in producers {
                    producer.await.expect("a producer task panicked");
                }
                consumer
                    .await
                    .expect("the consumer task panicked")
                    .finish(per_producer);
            });
        });
}
