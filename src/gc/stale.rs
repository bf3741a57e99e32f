//! Files a collection or a put that stopped half way leaves in the blob store: a blob set
//! aside for deletion (`.<hash>.<8 hex>.gc`) and a put's temp file (`.<hash>.<8 hex>.tmp`).

use crate::blob::is_valid_hash;
use crate::storage::{join, Storage, StorageResult};

/// What a leftover file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Stale {
    /// A blob a collection renamed aside: it goes back when no blob of that name exists
    /// (a collection stopped between its rename and its decision), else it is removed.
    Aside(String),
    /// A put's temp file: removed once older than the grace period (a put writing now is
    /// younger).
    Temp,
}

/// The name a collection gives a blob it sets aside.
pub(super) fn aside_name(hash: &str, random: u64) -> String {
    format!(".{hash}.{:08x}.gc", random as u32)
}

/// What the file `name` of the blob store is, if it is one of the leftovers.
pub(super) fn classify(name: &str) -> Option<Stale> {
    let rest = name.strip_prefix('.')?;
    let (stem, kind) = rest.rsplit_once('.')?;
    let (hash, random) = stem.rsplit_once('.')?;
    let random_ok = random.len() == 8 && random.bytes().all(|b| b.is_ascii_hexdigit());
    if !is_valid_hash(hash) || !random_ok {
        return None;
    }
    match kind {
        "gc" => Some(Stale::Aside(hash.to_string())),
        "tmp" => Some(Stale::Temp),
        _ => None,
    }
}

/// What became of a leftover (in a dry run: would).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Settled {
    /// Left as it is: a young temp file, or one gone meanwhile.
    Left,
    Removed,
    /// Renamed back to the blob `hash`, which no longer existed.
    PutBack(String),
}

/// Put back or remove the leftover `name` (a dry run only says what it would do).
pub(super) fn settle(
    storage: &dyn Storage,
    dir: &str,
    name: &str,
    stale: Stale,
    dry_run: bool,
    young: &dyn Fn(i64) -> bool,
) -> StorageResult<Settled> {
    let path = join(dir, name);
    let stat = match storage.stat(&path) {
        Ok(s) => s,
        Err(e) if e.is_not_found() => return Ok(Settled::Left),
        Err(e) => return Err(e),
    };
    let outcome = match stale {
        Stale::Temp if young(stat.mtime_ms) => return Ok(Settled::Left),
        Stale::Temp => Settled::Removed,
        Stale::Aside(hash) => match storage.stat(&join(dir, &hash)) {
            Ok(_) => Settled::Removed,
            Err(e) if e.is_not_found() => Settled::PutBack(hash),
            Err(e) => return Err(e),
        },
    };
    if !dry_run {
        let done = match &outcome {
            Settled::PutBack(hash) => storage.rename(&path, &join(dir, hash)),
            _ => storage.unlink(&path),
        };
        match done {
            // Gone first (another run removed it): as good as done here.
            Err(e) if !e.is_not_found() => return Err(e),
            _ => {}
        }
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_stores_own_leftovers_are_recognised() {
        let h = "a".repeat(64);
        assert_eq!(
            classify(&format!(".{h}.0123abcd.gc")),
            Some(Stale::Aside(h.clone()))
        );
        assert_eq!(classify(&format!(".{h}.0123abcd.tmp")), Some(Stale::Temp));
        for other in [
            h.clone(),
            format!(".{h}.0123abc.gc"),
            format!(".{h}.0123abcg.tmp"),
            format!(".{h}.0123abcd.bak"),
            format!(".{}.0123abcd.gc", "A".repeat(64)),
            ".x.0123abcd.tmp".to_string(),
            "notes.txt".to_string(),
        ] {
            assert_eq!(classify(&other), None, "{other}");
        }
        assert_eq!(
            classify(&aside_name(&h, 0xdead_beef_0123_abcd)),
            Some(Stale::Aside(h))
        );
    }
}
