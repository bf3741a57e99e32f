//! Times the phases of opening a large session (development aid for the benchmark).
use std::rc::Rc;
use std::time::Instant;
use xcsh_session::{internals::parse_lenient, storage::MemoryStorage, Session};

fn main() {
    let path = std::env::args().nth(1).expect("FILE");
    let t = Instant::now();
    let bytes = {
        use xcsh_session::storage::Storage;
        xcsh_session::fs::FsStorage::new().read(&path).unwrap()
    };
    let text = String::from_utf8(bytes).unwrap();
    println!("read+utf8   {:?}", t.elapsed());
    let t = Instant::now();
    let parsed = parse_lenient(&text);
    println!(
        "jsonl       {:?} ({} records)",
        t.elapsed(),
        parsed.records.len()
    );
    let t = Instant::now();
    let s = Session::from_string(Rc::new(MemoryStorage::new()), text, "/agent");
    println!(
        "load total  {:?} ({} entries)",
        t.elapsed(),
        s.entries().len()
    );
    let t = Instant::now();
    let ctx = s.context();
    println!(
        "context     {:?} ({} messages)",
        t.elapsed(),
        ctx.messages.len()
    );
    let t = Instant::now();
    let json = ctx.to_json();
    println!("to_json     {:?} ({} bytes)", t.elapsed(), json.len());
}
