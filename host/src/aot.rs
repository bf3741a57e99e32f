//! Locating the component and compiling it ahead of time, with an on-disk cache.
//!
//! Cache file: `<cache dir>/<first 16 hex of sha256(wasm)>-wasmtime<version>.cwasm`, where
//! the cache dir is `$XCSH_SESSION_CACHE_DIR`, else `$XDG_CACHE_HOME/xcsh-session`, else
//! `~/.cache/xcsh-session`. The file is wasmtime's serialized component followed by a
//! 16-byte trailer (a 64-bit checksum of the body and a magic), so a corrupt file is
//! detected and recompiled instead of being executed; an incompatible one is refused by
//! wasmtime's own checks and recompiled too. Files are written atomically (temp + rename).

use anyhow::{anyhow, Context, Result};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use wasmtime::component::Component;
use wasmtime::Engine;

/// The exact wasmtime version (from Cargo.lock, see build.rs).
pub const WASMTIME_VERSION: &str = env!("XCSH_WASMTIME_VERSION");
const COMPONENT_FILE: &str = "xcsh_session_component.wasm";
const MAGIC: &[u8; 8] = b"XCSHAOT1";

/// The component embedded at build time (`XCSH_SESSION_EMBED`, see build.rs), if any.
#[cfg(xcsh_embedded_component)]
pub const EMBEDDED: Option<&[u8]> = Some(include_bytes!(env!("XCSH_SESSION_EMBEDDED_COMPONENT")));
#[cfg(not(xcsh_embedded_component))]
pub const EMBEDDED: Option<&[u8]> = None;

/// Where the component's bytes come from.
#[derive(Debug, Clone)]
pub enum Source {
    File(PathBuf),
    /// Embedded in the executable.
    Embedded(&'static [u8]),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::File(p) => write!(f, "component {}", p.display()),
            Source::Embedded(_) => f.write_str("the embedded component"),
        }
    }
}

/// `--component PATH` > `$XCSH_SESSION_COMPONENT` > the component embedded in the
/// executable > next to the executable > `<exe dir>/../component/`.
pub fn locate_component(flag: Option<&Path>) -> Result<Source> {
    if let Some(p) = flag {
        return Ok(Source::File(p.to_path_buf()));
    }
    if let Some(p) = std::env::var_os("XCSH_SESSION_COMPONENT").filter(|v| !v.is_empty()) {
        return Ok(Source::File(PathBuf::from(p)));
    }
    if let Some(bytes) = EMBEDDED {
        return Ok(Source::Embedded(bytes));
    }
    let exe = std::env::current_exe().context("locating the executable")?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [
        dir.join(COMPONENT_FILE),
        dir.join("../component").join(COMPONENT_FILE),
    ];
    let found = candidates.iter().find(|p| p.is_file()).cloned();
    found.map(Source::File).ok_or_else(|| {
        anyhow!(
            "component not found (none embedded in this build; looked for {} and {}); pass --component or set XCSH_SESSION_COMPONENT",
            candidates[0].display(),
            candidates[1].display()
        )
    })
}

pub fn cache_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env("XCSH_SESSION_CACHE_DIR") {
        return Some(d);
    }
    env("XDG_CACHE_HOME")
        .or_else(|| env("HOME").map(|h| h.join(".cache")))
        .map(|d| d.join("xcsh-session"))
}

/// The cache file for these wasm bytes.
pub fn cache_file(wasm: &[u8]) -> Option<PathBuf> {
    let digest = Sha256::digest(wasm);
    let key: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    cache_dir().map(|d| d.join(format!("{key}-wasmtime{WASMTIME_VERSION}.cwasm")))
}

/// A fast 64-bit checksum (not cryptographic: it detects accidental corruption; the cache
/// directory belongs to the user anyway).
fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = bytes.len() as u64 ^ K;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(23) ^ u64::from(b)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

/// What happened while loading: for `--verbose` and the tests.
#[derive(Debug)]
pub enum CacheOutcome {
    Hit(PathBuf),
    /// Compiled; the cache file was written (or could not be: the reason).
    Compiled {
        file: Option<PathBuf>,
        why: String,
        write_error: Option<String>,
    },
}

fn load_cached(engine: &Engine, file: &Path) -> Result<Component> {
    let bytes = fs::read(file)?;
    let n = bytes
        .len()
        .checked_sub(16)
        .ok_or_else(|| anyhow!("truncated"))?;
    let (body, trailer) = bytes.split_at(n);
    if &trailer[8..] != MAGIC {
        return Err(anyhow!("no trailer"));
    }
    let mut sum = [0u8; 8];
    sum.copy_from_slice(&trailer[..8]);
    if u64::from_le_bytes(sum) != checksum(body) {
        return Err(anyhow!("checksum mismatch"));
    }
    // SAFETY: the bytes were produced by `Component::serialize` of this same wasmtime
    // version (the checksum proves they are unchanged since we wrote them; wasmtime
    // itself checks the version and the engine configuration and refuses a mismatch).
    Ok(unsafe { Component::deserialize(engine, body) }?)
}

fn write_atomic(file: &Path, body: &[u8]) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        file.file_name().and_then(|n| n.to_str()).unwrap_or("cache"),
        std::process::id()
    ));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(body)?;
        f.write_all(&checksum(body).to_le_bytes())?;
        f.write_all(MAGIC)?;
        f.sync_all()?;
        fs::rename(&tmp, file)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Load the component: from the cache when valid, else compile and cache it. `force`
/// skips the cache lookup (`precompile`). The cache is keyed by the wasm bytes, wherever
/// they come from (a file or the executable).
pub fn load(engine: &Engine, source: &Source, force: bool) -> Result<(Component, CacheOutcome)> {
    let read;
    let wasm: &[u8] = match source {
        Source::File(path) => {
            read =
                fs::read(path).with_context(|| format!("reading component {}", path.display()))?;
            &read
        }
        Source::Embedded(bytes) => bytes,
    };
    let file = cache_file(wasm);
    let why = match (&file, force) {
        (None, _) => "no cache directory".to_string(),
        (Some(_), true) => "precompile".to_string(),
        (Some(f), false) => match load_cached(engine, f) {
            Ok(c) => return Ok((c, CacheOutcome::Hit(f.clone()))),
            Err(e) => match e.downcast_ref::<std::io::Error>() {
                Some(io) if io.kind() == std::io::ErrorKind::NotFound => "cache miss".to_string(),
                _ => format!("cache file unusable ({e}), recompiling"),
            },
        },
    };
    let component = Component::new(engine, wasm)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("compiling {source}"))?;
    let mut write_error = None;
    if let Some(f) = &file {
        match component.serialize() {
            Ok(bytes) => {
                if let Err(e) = write_atomic(f, &bytes) {
                    write_error = Some(format!("writing {}: {e}", f.display()));
                }
            }
            Err(e) => write_error = Some(format!("serializing: {e}")),
        }
    }
    Ok((
        component,
        CacheOutcome::Compiled {
            file,
            why,
            write_error,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::checksum;

    #[test]
    fn checksum_sees_single_bit_flips_and_truncation() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
        let base = checksum(&data);
        for i in [0, 7, 8, 4999, 9999] {
            let mut d = data.clone();
            d[i] ^= 1;
            assert_ne!(checksum(&d), base, "flip at {i}");
        }
        assert_ne!(checksum(&data[..9999]), base);
    }
}
