//! What the host's test binaries share: the binary under test and one AOT cache per test
//! binary, compiled once up front, so tests that do not test the cache do not each
//! compile the component.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub const BIN: &str = env!("CARGO_BIN_EXE_xcsh-session");

pub fn shared_cache() -> &'static Path {
    static CACHE: OnceLock<PathBuf> = OnceLock::new();
    CACHE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("xcsh-session-aot-cache");
        let out = Command::new(BIN)
            .arg("precompile")
            .env("XCSH_SESSION_CACHE_DIR", &dir)
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "precompile failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}
