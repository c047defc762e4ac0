//! The README demo: real traffic through four flavours, each checked for
//! exactly-once, in-order delivery.
//!
//! ```text
//! cargo run --release --example demo
//! ```
//!
//! - **pipeline**, `spsc::bounded::<u64, 1024>`: one producer thread, one
//!   consumer thread; the consumer checks FIFO order, `0, 1, 2, …`.
//! - **fan-in**, `mpsc::bounded::<(usize, u64), 4096>`: four producer threads
//!   share cloned senders; the one consumer checks that each producer's
//!   sequence arrives complete and in order.
//! - **work queue**, `mpmc::bounded::<(usize, u64), 1024>`: two producer
//!   threads, four competing worker threads; every job must be done by
//!   exactly one worker, and each worker sees each producer's jobs in order.
//! - **async fan-in**, `mpsc::bounded::<(usize, u64), 1024>`: four tokio
//!   tasks `send(..).await` into one task that `recv().await`s, checked as
//!   for the fan-in.
//!
//! Threads use the blocking operations, `send_blocking` and `for value in
//! &mut rx` (the same as `rx.iter()`), which spin briefly and then park;
//! tasks use the runtime-agnostic futures. The program exits with status 1
//! if any check fails. Debug builds move a quarter of the messages so they
//! finish in seconds too; the figures worth quoting come from `--release`.

use std::process::ExitCode;
use std::thread;
use std::time::{Duration, Instant};

use asyncband::{mpmc, mpsc, spsc};

/// Messages per run.
const MESSAGES: u64 = if cfg!(debug_assertions) {
    500_000
} else {
    2_000_000
};

/// Producers in the fan-in runs.
const FAN_IN_PRODUCERS: usize = 4;
/// Producers and workers in the work-queue run.
const QUEUE_PRODUCERS: usize = 2;
const QUEUE_WORKERS: usize = 4;

/// One row of the table.
struct Run {
    flavour: &'static str,
    shape: &'static str,
    messages: u64,
    elapsed: Duration,
    /// What was verified, or what went wrong.
    check: Result<&'static str, String>,
}

fn main() -> ExitCode {
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "asyncband demo ({profile} build, {} CPUs)\n",
        available_cpus()
    );

    let runs = [
        spsc_pipeline(),
        mpsc_fan_in(),
        mpmc_work_queue(),
        async_fan_in(),
    ];

    let header = format!(
        "{:<26} {:<26} {:>10} {:>10} {:>11}  check",
        "flavour", "shape", "messages", "elapsed", "msg/s"
    );
    println!("{header}\n{}", "-".repeat(header.len() + 31));
    let mut failed = false;
    for run in &runs {
        let check = match &run.check {
            Ok(what) => format!("ok: {what}"),
            Err(why) => {
                failed = true;
                format!("FAILED: {why}")
            }
        };
        println!(
            "{:<26} {:<26} {:>10} {:>10} {:>11}  {check}",
            run.flavour,
            run.shape,
            thousands(run.messages),
            millis(run.elapsed),
            rate(run.messages, run.elapsed),
        );
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// One producer thread feeds one consumer thread through an SPSC ring.
fn spsc_pipeline() -> Run {
    let (mut tx, mut rx) = spsc::bounded::<u64, 1024>();
    let start = Instant::now();
    let producer = thread::spawn(move || {
        for value in 0..MESSAGES {
            tx.send_blocking(value)
                .expect("the consumer outlives the producer");
        }
        // Dropping `tx` here ends the consumer's loop.
    });

    let mut expected = 0;
    let mut check = Ok("FIFO order, none missing");
    for value in &mut rx {
        if value != expected && check.is_ok() {
            check = Err(format!("received {value}, expected {expected}"));
        }
        expected += 1;
    }
    let elapsed = start.elapsed();
    producer.join().expect("producer panicked");
    if check.is_ok() && expected != MESSAGES {
        check = Err(format!("received {expected} of {MESSAGES}"));
    }
    Run {
        flavour: "spsc::bounded<u64, 1024>",
        shape: "1 thread -> 1 thread",
        messages: MESSAGES,
        elapsed,
        check,
    }
}

/// Four producer threads share cloned senders; one consumer checks that
/// each producer's sequence arrives complete and in order.
fn mpsc_fan_in() -> Run {
    let (tx, mut rx) = mpsc::bounded::<(usize, u64), 4096>();
    let per_producer = MESSAGES / FAN_IN_PRODUCERS as u64;
    let start = Instant::now();
    let producers: Vec<_> = (0..FAN_IN_PRODUCERS)
        .map(|producer| {
            let tx = tx.clone();
            thread::spawn(move || {
                for seq in 0..per_producer {
                    tx.send_blocking((producer, seq))
                        .expect("the consumer is alive");
                }
            })
        })
        .collect();
    // Only the producers' clones remain: the channel closes when they finish.
    drop(tx);

    let mut check = FanInCheck::new(per_producer);
    for (producer, seq) in &mut rx {
        check.observe(producer, seq);
    }
    let check = check.finish();
    let elapsed = start.elapsed();
    for producer in producers {
        producer.join().expect("producer panicked");
    }
    Run {
        flavour: "mpsc::bounded<_, 4096>",
        shape: "4 threads -> 1 thread",
        messages: per_producer * FAN_IN_PRODUCERS as u64,
        elapsed,
        check,
    }
}

/// Two producers post jobs to four competing workers; afterwards every job
/// must have been done by exactly one of them.
fn mpmc_work_queue() -> Run {
    let (tx, rx) = mpmc::bounded::<(usize, u64), 1024>();
    let per_producer = MESSAGES / QUEUE_PRODUCERS as u64;
    let start = Instant::now();
    let producers: Vec<_> = (0..QUEUE_PRODUCERS)
        .map(|producer| {
            let tx = tx.clone();
            thread::spawn(move || {
                for seq in 0..per_producer {
                    tx.send_blocking((producer, seq))
                        .expect("a worker is alive");
                }
            })
        })
        .collect();
    drop(tx);

    let workers: Vec<_> = (0..QUEUE_WORKERS)
        .map(|_| {
            let rx = rx.clone();
            thread::spawn(move || {
                // Each worker sees each producer's jobs in increasing order.
                let mut last = [None::<u64>; QUEUE_PRODUCERS];
                let mut done = Vec::new();
                let mut out_of_order = None;
                for (producer, seq) in &rx {
                    if last[producer].is_some_and(|last| last >= seq) && out_of_order.is_none() {
                        out_of_order = Some((producer, seq));
                    }
                    last[producer] = Some(seq);
                    done.push(producer as u64 * per_producer + seq);
                }
                (done, out_of_order)
            })
        })
        .collect();
    drop(rx);

    let mut results = Vec::with_capacity(QUEUE_WORKERS);
    for worker in workers {
        results.push(worker.join().expect("worker panicked"));
    }
    let elapsed = start.elapsed();
    for producer in producers {
        producer.join().expect("producer panicked");
    }

    let total = per_producer * QUEUE_PRODUCERS as u64;
    let mut seen = vec![false; usize::try_from(total).expect("fits in memory")];
    let mut check = Ok("exactly once, per-producer order");
    for (done, out_of_order) in &results {
        if let Some((producer, seq)) = out_of_order {
            check = Err(format!(
                "producer {producer}'s job {seq} arrived out of order"
            ));
        }
        for &job in done {
            let slot = &mut seen[usize::try_from(job).expect("job ids index `seen`")];
            if *slot {
                check = Err(format!("job {job} was done twice"));
            }
            *slot = true;
        }
    }
    if let Some(missing) = seen.iter().position(|&seen| !seen) {
        check = Err(format!("job {missing} was never done"));
    }
    Run {
        flavour: "mpmc::bounded<_, 1024>",
        shape: "2 threads -> 4 threads",
        messages: total,
        elapsed,
        check,
    }
}

/// Four tokio tasks send with `send(..).await` into one task that receives
/// with `recv().await`, on a two-thread runtime.
fn async_fan_in() -> Run {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("a tokio runtime");
    let per_producer = MESSAGES / FAN_IN_PRODUCERS as u64;

    let (elapsed, check) = runtime.block_on(async move {
        let (tx, mut rx) = mpsc::bounded::<(usize, u64), 1024>();
        let start = Instant::now();
        for producer in 0..FAN_IN_PRODUCERS {
            let tx = tx.clone();
            tokio::spawn(async move {
                for seq in 0..per_producer {
                    tx.send((producer, seq))
                        .await
                        .expect("the consumer is alive");
                }
            });
        }
        drop(tx);

        let consumer = tokio::spawn(async move {
            let mut check = FanInCheck::new(per_producer);
            while let Ok((producer, seq)) = rx.recv().await {
                check.observe(producer, seq);
            }
            check.finish()
        });
        let check = consumer.await.expect("consumer panicked");
        (start.elapsed(), check)
    });
    Run {
        flavour: "mpsc::bounded<_, 1024>",
        shape: "4 tasks -> 1 task (tokio)",
        messages: per_producer * FAN_IN_PRODUCERS as u64,
        elapsed,
        check,
    }
}

/// Checks a fan-in stream of `(producer, seq)`: each producer's `seq`s
/// arrive as `0, 1, …, per_producer - 1`.
struct FanInCheck {
    next: [u64; FAN_IN_PRODUCERS],
    per_producer: u64,
    first_error: Option<String>,
}

impl FanInCheck {
    fn new(per_producer: u64) -> Self {
        Self {
            next: [0; FAN_IN_PRODUCERS],
            per_producer,
            first_error: None,
        }
    }

    fn observe(&mut self, producer: usize, seq: u64) {
        let expected = self.next[producer];
        if seq != expected && self.first_error.is_none() {
            self.first_error = Some(format!(
                "producer {producer}: received {seq}, expected {expected}"
            ));
        }
        self.next[producer] += 1;
    }

    fn finish(self) -> Result<&'static str, String> {
        if let Some(error) = self.first_error {
            return Err(error);
        }
        match self
            .next
            .iter()
            .position(|&count| count != self.per_producer)
        {
            Some(producer) => Err(format!(
                "producer {producer}: received {} of {}",
                self.next[producer], self.per_producer
            )),
            None => Ok("per-producer order, none missing"),
        }
    }
}

fn available_cpus() -> usize {
    thread::available_parallelism().map_or(1, usize::from)
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn millis(elapsed: Duration) -> String {
    format!("{:.1} ms", elapsed.as_secs_f64() * 1e3)
}

/// Messages per second, in millions.
fn rate(messages: u64, elapsed: Duration) -> String {
    #[allow(
        clippy::cast_precision_loss,
        reason = "a rate for display; 2^52 messages is far off"
    )]
    let per_second = messages as f64 / elapsed.as_secs_f64();
    format!("{:.1} M/s", per_second / 1e6)
}
