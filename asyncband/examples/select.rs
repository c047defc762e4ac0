//! Waiting on several channels at once: a thread with `asyncband::select!`
//! and a tokio task with `tokio::select!`.
//!
//! ```text
//! cargo run --example select
//! ```
//!
//! - **the dispatcher thread** takes orders from an `mpmc` channel and
//!   cancellations from an `spsc` one in a `select!` loop; each accepted
//!   order goes out through a `send` arm to an `mpsc` channel, whose value
//!   (the confirmation) is built only when that arm is chosen; a
//!   `default(timeout)` arm counts idle ticks. The loop ends when the orders
//!   channel is closed and drained.
//! - **the auditor task** reads the confirmations with `tokio::select!`
//!   against a timer, a branch not taken losing nothing, and stops when the
//!   channel closes.
//!
//! The program checks that every order was either confirmed or cancelled,
//! exactly once, and exits with status 1 otherwise.

use std::collections::HashSet;
use std::process::ExitCode;
use std::thread;
use std::time::Duration;

use asyncband::{mpmc, mpsc, select, spsc};

const ORDERS: u64 = 1_000;

fn main() -> ExitCode {
    let (orders_tx, orders) = mpmc::bounded::<u64, 64>();
    let (mut cancel_tx, mut cancels) = spsc::unbounded::<u64>();
    let (confirm_tx, mut confirms) = mpsc::bounded::<String, 16>();

    let dispatcher = thread::spawn(move || {
        let mut cancelled = HashSet::new();
        let mut pending = None;
        let mut idle_ticks = 0u32;
        loop {
            if let Some(id) = pending {
                // An order to confirm: either the confirmation goes out or a
                // cancellation comes first.
                select! {
                    send(confirm_tx, format!("confirmed {id}")) -> res => {
                        res.expect("the auditor runs until the end");
                        pending = None;
                    }
                    recv(cancels) -> id => {
                        if let Ok(id) = id {
                            cancelled.insert(id);
                        }
                    }
                }
                if pending.is_some_and(|id| cancelled.remove(&id)) {
                    pending = None;
                }
                continue;
            }
            select! {
                recv(orders) -> order => match order {
                    Ok(id) if cancelled.remove(&id) => {}
                    Ok(id) => pending = Some(id),
                    Err(_) => break,
                },
                recv(cancels) -> id => {
                    if let Ok(id) = id {
                        cancelled.insert(id);
                    }
                }
                default(Duration::from_millis(5)) => idle_ticks += 1,
            }
        }
        // Cancellations that came after their order was confirmed.
        (cancelled, idle_ticks)
    });

    let auditor = thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a tokio runtime");
        runtime.block_on(async move {
            let mut confirmed = Vec::new();
            let mut timer_ticks = 0u32;
            loop {
                tokio::select! {
                    line = confirms.recv() => match line {
                        Ok(line) => confirmed.push(line),
                        Err(_) => break,
                    },
                    () = tokio::time::sleep(Duration::from_millis(2)) => timer_ticks += 1,
                }
            }
            (confirmed, timer_ticks)
        })
    });

    let cancelled_ids: Vec<u64> = (0..ORDERS).filter(|id| id % 7 == 0).collect();
    for id in 0..ORDERS {
        if id % 7 == 0 {
            cancel_tx
                .send_blocking(id)
                .expect("the dispatcher is running");
        }
        orders_tx
            .send_blocking(id)
            .expect("the dispatcher is running");
    }
    drop(orders_tx);
    let (late_cancels, idle_ticks) = dispatcher.join().expect("the dispatcher");
    let (confirmed, timer_ticks) = auditor.join().expect("the auditor");

    let confirmed_ids: HashSet<u64> = confirmed
        .iter()
        .map(|line| line["confirmed ".len()..].parse().expect("a confirmation"))
        .collect();
    let mut ok = confirmed_ids.len() == confirmed.len();
    for id in 0..ORDERS {
        let was_cancelled = cancelled_ids.contains(&id);
        let was_confirmed = confirmed_ids.contains(&id);
        // A cancellation may lose the race against its own confirmation.
        if was_confirmed == was_cancelled && !(was_confirmed && late_cancels.contains(&id)) {
            eprintln!("order {id}: confirmed {was_confirmed}, cancelled {was_cancelled}");
            ok = false;
        }
    }
    println!(
        "{} orders: {} confirmed, {} cancelled ({} too late); dispatcher idle ticks {idle_ticks}, auditor timer ticks {timer_ticks}",
        ORDERS,
        confirmed.len(),
        cancelled_ids.len(),
        late_cancels.len(),
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
