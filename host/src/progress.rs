//! Progress on stderr for commands that read whole stores or large files (`search`,
//! `list`, `gc`, `migrate`): one rule for when it shows, and the reading the storage
//! imports report. Output that a program reads (stdout piped or redirected) never comes
//! with a bar on the terminal beside it, and stderr that is not a terminal gets none.

use indicatif::{ProgressBar, ProgressStyle};
use std::collections::HashSet;
use std::io::IsTerminal;

/// Whether progress is shown: only when both stdout and stderr are terminals.
pub fn shown() -> bool {
    std::io::stdout().is_terminal() && std::io::stderr().is_terminal()
}

/// A bar drawn on stderr with `template` when [`shown`], else a hidden one.
pub fn bar(len: u64, template: &str) -> ProgressBar {
    let bar = match shown() {
        true => ProgressBar::new(len),
        false => ProgressBar::hidden(),
    };
    bar.with_style(ProgressStyle::with_template(template).expect("a valid template"))
}

/// What a command has read so far through the `storage` imports: the files (each counted
/// once, however many calls read it) and the bytes, on a spinner. For commands whose work
/// is one component call (`list`, `gc`, `migrate`), so only the host sees it advance.
pub struct Reads {
    bar: ProgressBar,
    files: HashSet<String>,
}

impl Reads {
    /// A spinner saying `what` (`listing sessions`); `None` when progress is not shown,
    /// so the storage calls do no bookkeeping for nothing.
    pub fn start(what: &str) -> Option<Reads> {
        if !shown() {
            return None;
        }
        let bar = bar(
            0,
            "{spinner} {prefix}: {binary_bytes} read from {msg} ({elapsed})",
        )
        .with_prefix(what.to_string());
        bar.set_message("0 files");
        // Redrawn while one call takes long (a large file read or written whole).
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Some(Reads {
            bar,
            files: HashSet::new(),
        })
    }

    /// `bytes` read from `path`.
    pub fn read(&mut self, path: &str, bytes: u64) {
        if !self.files.contains(path) {
            self.files.insert(path.to_string());
            let n = self.files.len();
            self.bar
                .set_message(format!("{n} file{}", if n == 1 { "" } else { "s" }));
        }
        self.bar.inc(bytes);
    }
}

impl Drop for Reads {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
