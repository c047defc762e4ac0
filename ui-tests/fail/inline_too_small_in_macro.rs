// The payload size and `inline` meet in the const-generic rule.
fn main() {
    let (_tx, _rx) = asyncband::channel!(mpmc, bounded = 64, [u8; 2048], inline = 1024);
}
