// A capacity that is not a literal is left to the const-generic rule.
const CAP: usize = 100;

fn main() {
    let (_tx, _rx) = asyncband::channel!(mpsc, bounded = CAP, u32);
}
