//! Records the exact wasmtime version from the workspace's Cargo.lock, for the name of the
//! ahead-of-time compilation cache file (`<hash>-wasmtime<version>.cwasm`).

use std::path::Path;

fn main() {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let mut version = None;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"wasmtime\"" {
            version = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = \""))
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_string);
            break;
        }
    }
    println!(
        "cargo:rustc-env=XCSH_WASMTIME_VERSION={}",
        version.as_deref().unwrap_or("48")
    );
}
