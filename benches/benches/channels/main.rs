//! Cells 1 to 7, 10 and 11 of the suite (cell 8, memory, is its own binary;
//! cell 9, latency, an example): asyncband and its peers, side by side, in
//! one binary. See `benches/README.md` for what each cell measures.
//!
//! Every bench counts items, so divan reports a throughput from which
//! `cargo x bench-report` takes the time per message (or per round trip).
//! Every workload checks what it received: a broken channel fails the run
//! instead of looking fast.

#[path = "../../peers/mod.rs"]
mod peers;

mod one_thread;
mod oversubscribed;
mod payload_1k;
mod ready_path;
mod reserve;
mod select;
mod spin;
mod tasks;
mod threads;
mod tokio_runtime;

fn main() {
    divan::main();
}
