//! Print the `show` JSON of a session file with the native core.
use std::rc::Rc;
use xcsh_session::{api, fs::FsStorage};

fn main() {
    let Some(file) = std::env::args().nth(1) else {
        eprintln!("usage: show <FILE>");
        std::process::exit(2);
    };
    match api::show_file(Rc::new(FsStorage::new()), &file, "/nonexistent-agent-dir") {
        Ok(json) => println!("{json}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
