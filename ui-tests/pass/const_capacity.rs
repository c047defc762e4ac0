// Capacities and sizes that are not literals: const expressions, paths,
// const parameters and a literal forwarded by the user's own macro. The
// const-generic rules check them when the constructor is instantiated.
use asyncband::{channel, mpsc};

const CAP: usize = 256;

mod config {
    pub const CAP: usize = 1 << 10;
    pub const INLINE: usize = 16;
}

fn with_capacity<const N: usize>() -> (
    mpsc::Sender<mpsc::Bounded<u8, N>>,
    mpsc::Receiver<mpsc::Bounded<u8, N>>,
) {
    channel!(mpsc, bounded = N, u8)
}

macro_rules! ticks {
    ($cap:expr) => {
        channel!(spsc, bounded = $cap, u64)
    };
}

fn main() {
    let (tx, _rx) = channel!(mpsc, bounded = CAP, u8);
    assert_eq!(tx.capacity(), Some(256));

    let (tx, _rx) = channel!(mpsc, bounded = 32 * 2, u8);
    assert_eq!(tx.capacity(), Some(64));

    let (tx, _rx) = channel!(mpmc, bounded = config::CAP, u64, inline = config::INLINE);
    assert_eq!(tx.capacity(), Some(1024));

    let (tx, _rx) = channel!(mpmc, unbounded, u64, inline = size_of::<u64>());
    assert_eq!(tx.capacity(), None);

    let (tx, _rx) = with_capacity::<8>();
    assert_eq!(tx.capacity(), Some(8));

    let (tx, _rx) = ticks!(16);
    assert_eq!(tx.capacity(), Some(16));

    // The largest capacity, written out.
    let (tx, _rx) = channel!(mpsc, bounded = 1048576, ());
    assert_eq!(tx.capacity(), Some(1 << 20));
}
