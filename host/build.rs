//! 1. Records the exact wasmtime version from the workspace's Cargo.lock, for the name of
//!    the ahead-of-time compilation cache file (`<hash>-wasmtime<version>.cwasm`).
//! 2. Embeds the component when `XCSH_SESSION_EMBED` names its `.wasm` file at build time
//!    (`scripts/test-component`, `scripts/install`): the cfg `xcsh_embedded_component` is
//!    set and `XCSH_SESSION_EMBEDDED_COMPONENT` holds the file's absolute path for
//!    `include_bytes!` (a relative path is taken from the workspace root). Without it the
//!    binary looks for the component at run time only.

use std::path::Path;

const EMBED_VAR: &str = "XCSH_SESSION_EMBED";

fn main() {
    wasmtime_version();
    embed();
}

fn wasmtime_version() {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    println!("cargo::rerun-if-changed={}", lock.display());
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
        "cargo::rustc-env=XCSH_WASMTIME_VERSION={}",
        version.as_deref().unwrap_or("48")
    );
}

fn embed() {
    println!("cargo::rustc-check-cfg=cfg(xcsh_embedded_component)");
    println!("cargo::rerun-if-env-changed={EMBED_VAR}");
    let Some(value) = std::env::var_os(EMBED_VAR).filter(|v| !v.is_empty()) else {
        return;
    };
    // A relative path is taken from the workspace root (where the scripts run cargo).
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(&value);
    let file = std::fs::canonicalize(&file).unwrap_or_else(|e| {
        panic!(
            "{EMBED_VAR}={}: {e} (build the component first: scripts/build-component)",
            file.display()
        )
    });
    let Some(path) = file.to_str() else {
        panic!("{EMBED_VAR}: {} is not valid UTF-8", file.display());
    };
    println!("cargo::rerun-if-changed={path}");
    println!("cargo::rustc-env=XCSH_SESSION_EMBEDDED_COMPONENT={path}");
    println!("cargo::rustc-cfg=xcsh_embedded_component");
}
