//! Print the SessionContext JSON of a session file with the native core:
//! `cargo run --example context -- <FILE> [LEAF]` (used by the cross-host tests).
use std::rc::Rc;
use xcsh_session::{api, fs::FsStorage};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: context <FILE> [LEAF]");
        std::process::exit(2);
    };
    let agent_dir =
        std::env::var("XCSH_AGENT_DIR").unwrap_or_else(|_| "/nonexistent-agent-dir".into());
    match api::context_file(
        Rc::new(FsStorage::new()),
        file,
        &agent_dir,
        args.get(1).map(String::as_str),
    ) {
        Ok(json) => println!("{json}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
