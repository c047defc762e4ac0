//! Command/response with capacity reservation: clients send commands to a
//! server task over a bounded `mpsc` channel, and each command carries its
//! own reply channel, an `spsc::Bounded<Reply, 1>`.
//!
//! ```text
//! cargo run --release --example command_response
//! ```
//!
//! A client first **reserves** a slot in the command queue
//! (`reserve().await`, or `try_reserve()` to shed load instead of waiting),
//! and only then builds the command and its reply channel and sends it
//! through the permit. So:
//!
//! - when the server falls behind, clients wait (or are told "busy") before
//!   they have allocated anything, and no half-built command is left over;
//! - `Permit::send` cannot find the queue full, so a command is never handed
//!   back for lack of room, only when the server is gone;
//! - a `reserve` that is cancelled (here by a timeout) gives its place back
//!   and loses nothing.
//!
//! The program runs three scenes: many clients making round trips, load
//! shedding while the server is paused, and shutdown when the last client
//! goes away. It exits with status 1 if anything it checks is wrong.

use std::collections::HashMap;
use std::fmt;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use asyncband::error::TrySendError;
use asyncband::{mpsc, spsc};

/// Slots in the command queue.
const QUEUE: usize = 64;
/// Clients in the round-trip scene, and the calls each makes.
const CLIENTS: u64 = 8;
const CALLS_PER_CLIENT: u64 = if cfg!(debug_assertions) {
    5_000
} else {
    20_000
};
/// Counters the clients increment.
const COUNTERS: u64 = 4;
/// `try_call`s made while the server is paused.
const ATTEMPTS: usize = 100;

/// What a client asks the server to do.
enum Op {
    /// Read a counter (0 if it was never written).
    Get(String),
    /// Add to a counter and return its new value.
    Add(String, u64),
    /// Reply at once, then stop serving until `resume` receives a value or
    /// is dropped.
    Pause {
        resume: spsc::Receiver<spsc::Bounded<(), 1>>,
    },
}

/// What the server answers.
#[derive(Debug, PartialEq, Eq)]
enum Reply {
    Value(u64),
    Paused,
}

/// A command and the channel its reply goes back on.
struct Command {
    op: Op,
    reply: spsc::Sender<spsc::Bounded<Reply, 1>>,
}

type CommandSender = mpsc::Sender<mpsc::Bounded<Command, QUEUE>>;
type CommandReceiver = mpsc::Receiver<mpsc::Bounded<Command, QUEUE>>;
type ReplyReceiver = spsc::Receiver<spsc::Bounded<Reply, 1>>;

/// Why a call did not complete.
#[derive(Debug, PartialEq, Eq)]
enum CallError {
    /// The queue was full and the caller chose not to wait.
    Busy,
    /// The server is gone.
    Gone,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CallError::Busy => "the server is busy",
            CallError::Gone => "the server is gone",
        })
    }
}

/// A handle to the server; clone one per task.
#[derive(Clone)]
struct Client {
    commands: CommandSender,
}

impl Client {
    /// Sends `op` once the queue has room, then waits for the reply.
    async fn call(&self, op: Op) -> Result<Reply, CallError> {
        // 1. Wait for room. Nothing is built yet: a full queue costs this
        //    client only the wait, and a closed one hands nothing back.
        let permit = self.commands.reserve().await.map_err(|_| CallError::Gone)?;
        // 2. The slot is ours: build the command and its reply channel.
        let (reply, mut replies) = spsc::bounded::<Reply, 1>();
        permit
            .send(Command { op, reply })
            .map_err(|_| CallError::Gone)?;
        // 3. Wait for the answer.
        replies.recv().await.map_err(|_| CallError::Gone)
    }

    /// Sends `op` only if the queue has room now; the reply arrives on the
    /// returned receiver.
    fn try_call(&self, op: Op) -> Result<ReplyReceiver, CallError> {
        let permit = match self.commands.try_reserve() {
            Ok(permit) => permit,
            Err(TrySendError::Full(())) => return Err(CallError::Busy),
            Err(TrySendError::Disconnected(())) => return Err(CallError::Gone),
        };
        let (reply, replies) = spsc::bounded::<Reply, 1>();
        permit
            .send(Command { op, reply })
            .map_err(|_| CallError::Gone)?;
        Ok(replies)
    }
}

/// What the server did, reported when it stops.
#[derive(Debug, Default)]
struct ServerStats {
    handled: u64,
    /// Replies nobody waited for any more.
    abandoned: u64,
}

/// Serves commands until every client is gone.
async fn serve(mut commands: CommandReceiver) -> ServerStats {
    let mut counters = HashMap::<String, u64>::new();
    let mut stats = ServerStats::default();
    while let Ok(Command { op, mut reply }) = commands.recv().await {
        stats.handled += 1;
        let mut pause = None;
        let answer = match op {
            Op::Get(key) => Reply::Value(counters.get(&key).copied().unwrap_or(0)),
            Op::Add(key, n) => {
                let value = counters.entry(key).or_insert(0);
                *value += n;
                Reply::Value(*value)
            }
            Op::Pause { resume } => {
                pause = Some(resume);
                Reply::Paused
            }
        };
        // A reply channel of one slot, used once: never full. It fails
        // only if the client stopped waiting.
        if reply.try_send(answer).is_err() {
            stats.abandoned += 1;
        }
        if let Some(mut resume) = pause {
            // Resumed by a value or by the resume sender being dropped.
            let _ = resume.recv().await;
        }
    }
    stats
}

#[tokio::main]
async fn main() -> ExitCode {
    let (commands, queue) = mpsc::bounded::<Command, QUEUE>();
    let server = tokio::spawn(serve(queue));
    let client = Client { commands };
    let mut ok = true;

    println!(
        "command/response: clients -> mpsc::Bounded<Command, {QUEUE}> -> server, \
         replies on spsc::Bounded<Reply, 1>\n"
    );

    ok &= round_trips(&client).await;
    ok &= load_shedding(&client).await;

    // 3. Shutdown: the last sender goes, the server drains and stops.
    drop(client);
    let stats = server.await.expect("the server panicked");
    println!(
        "\nshutdown: the last client is gone; the server stopped after {} commands \
         ({} replies abandoned)",
        thousands(stats.handled),
        stats.abandoned
    );

    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Scene 1: `CLIENTS` tasks each make `CALLS_PER_CLIENT` round trips,
/// incrementing shared counters; the totals must come out exact.
async fn round_trips(client: &Client) -> bool {
    let start = Instant::now();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|id| {
            let client = client.clone();
            tokio::spawn(async move {
                for call in 0..CALLS_PER_CLIENT {
                    let key = format!("counter-{}", (id + call) % COUNTERS);
                    client
                        .call(Op::Add(key, 1))
                        .await
                        .expect("the server is running");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a client panicked");
    }
    let elapsed = start.elapsed();
    let calls = CLIENTS * CALLS_PER_CLIENT;
    #[allow(clippy::cast_precision_loss, reason = "a rate for display")]
    let per_second = calls as f64 / elapsed.as_secs_f64();
    println!(
        "round trips: {CLIENTS} clients x {} calls = {} calls in {:.1} ms ({:.0}k calls/s)",
        thousands(CALLS_PER_CLIENT),
        thousands(calls),
        elapsed.as_secs_f64() * 1e3,
        per_second / 1e3,
    );

    let expected = calls / COUNTERS;
    let mut ok = true;
    for counter in 0..COUNTERS {
        let key = format!("counter-{counter}");
        let value = client.call(Op::Get(key.clone())).await;
        let good = value == Ok(Reply::Value(expected));
        ok &= good;
        println!(
            "  {key} = {} (expected {}) {}",
            show(&value),
            thousands(expected),
            verdict(good)
        );
    }
    ok
}

/// Scene 2: with the server paused, `try_call` fills the queue and then
/// reports "busy"; a waiting `call` times out and is cancelled cleanly; on
/// resume every accepted command is answered, and the rejected ones were
/// never applied.
async fn load_shedding(client: &Client) -> bool {
    let (mut resume, paused) = spsc::bounded::<(), 1>();
    let reply = client.call(Op::Pause { resume: paused }).await;
    assert_eq!(reply, Ok(Reply::Paused));
    // The server has taken the pause off the queue and waits: the queue is
    // empty and nobody drains it.

    let mut accepted = Vec::new();
    let mut busy = 0;
    for _ in 0..ATTEMPTS {
        match client.try_call(Op::Add("shed".to_owned(), 1)) {
            Ok(replies) => accepted.push(replies),
            Err(CallError::Busy) => busy += 1,
            Err(CallError::Gone) => panic!("the server is running"),
        }
    }
    let mut ok = accepted.len() == QUEUE && busy == ATTEMPTS - QUEUE;
    println!(
        "\nload shedding: server paused; {ATTEMPTS} try_reserve calls -> {} accepted, {busy} busy \
         (queue {}/{}, is_full: {}) {}",
        accepted.len(),
        client.commands.len(),
        QUEUE,
        client.commands.is_full(),
        verdict(ok),
    );

    let waited = tokio::time::timeout(
        Duration::from_millis(20),
        client.call(Op::Add("shed".to_owned(), 1_000)),
    )
    .await;
    let timed_out = waited.is_err();
    ok &= timed_out;
    println!(
        "  call() on the full queue with a 20 ms timeout: {}",
        if timed_out {
            "timed out while reserving; nothing was sent"
        } else {
            "WRONG: it completed"
        }
    );

    resume.try_send(()).expect("the server waits on `resume`");
    let mut in_order = true;
    for (i, mut replies) in accepted.into_iter().enumerate() {
        let reply = replies.recv().await;
        in_order &= reply == Ok(Reply::Value(i as u64 + 1));
    }
    let total = client.call(Op::Get("shed".to_owned())).await;
    let good = in_order && total == Ok(Reply::Value(QUEUE as u64));
    ok &= good;
    println!(
        "  resumed: {QUEUE} replies in order; shed = {} (only accepted commands ran) {}",
        show(&total),
        verdict(good)
    );
    ok
}

/// A reply as the report prints it.
fn show(reply: &Result<Reply, CallError>) -> String {
    match reply {
        Ok(Reply::Value(value)) => thousands(*value),
        Ok(Reply::Paused) => "paused".to_owned(),
        Err(error) => format!("error: {error}"),
    }
}

fn verdict(good: bool) -> &'static str {
    if good { "ok" } else { "WRONG" }
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
