// A spin channel has no `reserve()` future; `try_reserve` and
// `reserve_blocking` are its ways to wait for a slot.
fn main() {
    let (tx, _rx) = asyncband::channel!(mpmc, bounded = 4, u32, wait = spin);
    let _ = tx.reserve();
}
