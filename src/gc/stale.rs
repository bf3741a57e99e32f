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

/// Put back or remove the leftover `name` (a dry run only says whether it would); `true`
/// when it was (or would be) settled, `false` when it is left (a young temp file).
pub(super) fn settle(
    storage: &dyn Storage,
    dir: &str,
    name: &str,
    stale: Stale,
    dry_run: bool,
    young: &dyn Fn(i64) -> bool,
) -> StorageResult<bool> {
    let path = join(dir, name);
    let stat = match storage.stat(&path) {
        Ok(s) => s,
        Err(e) if e.is_not_found() => return Ok(false),
        Err(e) => return Err(e),
    };
    if stale == Stale::Temp && young(stat.mtime_ms) {
        return Ok(false);
    }
    if dry_run {
        return Ok(true);
    }
    let removed = match stale {
        Stale::Aside(hash) => {
            let blob = join(dir, &hash);
            match storage.stat(&blob) {
                Err(e) if e.is_not_found() => storage.rename(&path, &blob),
                Err(e) => Err(e),
                Ok(_) => storage.unlink(&path),
            }
        }
        Stale::Temp => storage.unlink(&path),
    };
    match removed {
        Err(e) if !e.is_not_found() => Err(e),
        _ => Ok(true),
    }
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
