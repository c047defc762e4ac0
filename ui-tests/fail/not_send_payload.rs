use std::rc::Rc;

fn main() {
    let (tx, _rx) = asyncband::channel!(mpsc, unbounded, Rc<u32>);
    std::thread::spawn(move || {
        let _ = tx.try_send(Rc::new(1));
    });
}
