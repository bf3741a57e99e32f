//! A session writer for the crash test: appends messages to a new session under
//! `<agent-dir>`, flushing after each, and prints `<file>` then each acknowledged id on
//! stdout. `writer <agent-dir> <count>`; killed at random points by tests/reliability.rs.
use std::io::Write;
use std::rc::Rc;
use xcsh_session::fs::FsStorage;
use xcsh_session::session::{CreateOptions, Session};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(agent_dir), Some(count)) = (
        args.first(),
        args.get(1).and_then(|c| c.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: writer <agent-dir> <count>");
        std::process::exit(2);
    };
    let mut s = Session::create(
        Rc::new(FsStorage::new()),
        &CreateOptions {
            agent_dir: agent_dir.clone(),
            cwd: "/crash".into(),
            ..Default::default()
        },
    );
    let out = std::io::stdout();
    let mut out = out.lock();
    let _ = writeln!(out, "{}", s.file().unwrap_or_default());
    let _ = out.flush();
    for i in 0..count {
        let message = if i == 0 {
            r#"{"role":"assistant","provider":"p","model":"m","content":[{"type":"text","text":"start"}],"timestamp":1}"#.to_string()
        } else {
            format!(
                r#"{{"role":"user","content":[{{"type":"text","text":"message {i} {}"}}],"timestamp":1}}"#,
                "x".repeat(i % 7 * 300)
            )
        };
        let id = s.append_message(&message).expect("append");
        s.flush().expect("flush");
        let _ = writeln!(out, "{id}");
        let _ = out.flush();
    }
}
