//! What the command prints and how it ends: stdout, stderr and stdin are the `wasi:cli`
//! streams, and a failure ends the run with the CLI host's exit code through
//! `wasi:cli/exit`'s `exit-with-code` (WASI 0.2.12).

use wasi::cli::{exit, stderr, stdin, stdout};
use wasi::filesystem::types::{filesystem_error_code, ErrorCode};
use wasi::io::streams::StreamError;

use crate::fs::write_all;

/// The CLI host's exit codes (`host/src/main.rs`): 1 for errors, 2 for usage errors and
/// ambiguous resume prefixes, 3 when an entry or a file does not exist, 4 for a session of
/// another project.
pub const EXIT_ERROR: u8 = 1;
/// A usage error (bad arguments).
pub const EXIT_USAGE: u8 = 2;
/// An entry or a session file that does not exist.
pub const EXIT_NOT_FOUND: u8 = 3;
/// A session of another project (`resume` without `--yes`).
pub const EXIT_OTHER_PROJECT: u8 = 4;

/// How the command ended, as the `result` of `wasi:cli/run` (`Err` only when the host
/// returned from `exit-with-code`, which it should not).
pub type Exit = Result<(), ()>;

/// Print `text` and a newline on stdout. A reader that closed its end early (`| head`)
/// ends the output normally, as in the CLI host.
pub fn print_line(text: &str) -> Exit {
    let out = stdout::get_stdout();
    match write_all(&out, text.as_bytes()).and_then(|()| write_all(&out, b"\n")) {
        Ok(()) | Err(StreamError::Closed) => Ok(()),
        Err(StreamError::LastOperationFailed(e))
            if filesystem_error_code(&e) == Some(ErrorCode::Pipe) =>
        {
            Ok(())
        }
        Err(StreamError::LastOperationFailed(e)) => fail(
            &format!("xcsh-session: writing to stdout: {}", e.to_debug_string()),
            EXIT_ERROR,
        ),
    }
}

/// Print `message` on stderr and end the run with exit code `code` (not 0).
pub fn fail(message: &str, code: u8) -> Exit {
    let err = stderr::get_stderr();
    let _ = write_all(&err, message.as_bytes()).and_then(|()| write_all(&err, b"\n"));
    exit::exit_with_code(code);
    Err(())
}

/// All of stdin, as UTF-8 text (`append --json -`).
pub fn read_stdin() -> Result<String, String> {
    let input = stdin::get_stdin();
    let mut bytes = Vec::new();
    loop {
        match input.blocking_read(1 << 16) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(format!(
                    "reading the entry from stdin: {}",
                    e.to_debug_string()
                ))
            }
        }
    }
    String::from_utf8(bytes)
        .map_err(|_| "reading the entry from stdin: stream did not contain valid UTF-8".into())
}
