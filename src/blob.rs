//! The content-addressed blob store: `<blobsDir>/<sha256-hex>`, referenced from entries
//! as `blob:sha256:<hex>`. Global (shared by all sessions), idempotent writes.

use crate::storage::{join, Storage, StorageError, StorageExt};
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::borrow::Cow;

pub const BLOB_REF_PREFIX: &str = "blob:sha256:";

/// Base64 decoding as lenient about padding as Node's `Buffer.from(s, "base64")`.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlobError {
    #[error("invalid blob hash: {0:?} (expected 64 lowercase hex characters)")]
    InvalidHash(String),
    /// The file named by the hash holds other bytes (truncated, emptied, overwritten): they
    /// are never handed out as the blob.
    #[error("blob {hash} is corrupt: its bytes hash to {actual}; the next put of the same content repairs it")]
    Corrupt { hash: String, actual: String },
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// What `put` returns; `blob put` prints it as `{"hash", "ref", "path"}` (the field order
/// is the key order).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BlobPut {
    pub hash: String,
    #[serde(rename = "ref")]
    pub reference: String,
    pub path: String,
}

/// True for exactly 64 lowercase hex characters: nothing else may name a blob file.
pub fn is_valid_hash(hash: &str) -> bool {
    hash.len() == 64
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The hash inside a `blob:sha256:<hex>` reference.
pub fn parse_ref(s: &str) -> Option<&str> {
    s.strip_prefix(BLOB_REF_PREFIX).filter(|h| is_valid_hash(h))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

pub fn decode_base64(data: &str) -> Option<Vec<u8>> {
    LENIENT.decode(data.trim()).ok()
}

pub fn encode_base64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// The blob store over the storage port.
pub struct BlobStore<'s> {
    storage: &'s dyn Storage,
    dir: String,
}

impl<'s> BlobStore<'s> {
    pub fn new(storage: &'s dyn Storage, dir: impl Into<String>) -> Self {
        BlobStore {
            storage,
            dir: dir.into(),
        }
    }

    pub fn dir(&self) -> &str {
        &self.dir
    }

    pub fn put(&self, bytes: &[u8]) -> Result<BlobPut, BlobError> {
        let hash = sha256_hex(bytes);
        self.storage.blob_put(&self.dir, &hash, bytes)?;
        Ok(BlobPut {
            path: join(&self.dir, &hash),
            reference: format!("{BLOB_REF_PREFIX}{hash}"),
            hash,
        })
    }

    /// The blob's bytes, `None` when it does not exist; an invalid hash is an error, so no
    /// path outside the blob directory can ever be read, and bytes that do not hash to
    /// `hash` are [`BlobError::Corrupt`], never returned.
    pub fn get(&self, hash: &str) -> Result<Option<Vec<u8>>, BlobError> {
        if !is_valid_hash(hash) {
            return Err(BlobError::InvalidHash(hash.to_string()));
        }
        match self.storage.blob_get(&self.dir, hash)? {
            Some(bytes) => {
                let actual = sha256_hex(&bytes);
                if actual != hash {
                    return Err(BlobError::Corrupt {
                        hash: hash.to_string(),
                        actual,
                    });
                }
                Ok(Some(bytes))
            }
            None => Ok(None),
        }
    }

    pub fn exists(&self, hash: &str) -> bool {
        is_valid_hash(hash) && self.storage.exists(&join(&self.dir, hash))
    }
}

/// Every blob hash referenced from image blocks or `image_url` values in a JSON text.
pub fn referenced_hashes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut rest = text;
    while let Some(i) = rest.find(BLOB_REF_PREFIX) {
        let tail = &rest[i + BLOB_REF_PREFIX.len()..];
        let hash = tail.get(..64).unwrap_or("");
        if is_valid_hash(hash) && seen.insert(hash) {
            out.push(hash.to_string());
        }
        // Go on after the prefix (never inside a multi-byte character).
        rest = tail;
    }
    out
}

/// Replace blob refs in image blocks (`data`) and `image_url` values by the blob content
/// (base64 for images, the original data URL text for `image_url`). Missing blobs keep
/// their reference (the caller warns).
pub fn rehydrate<'t>(text: &'t str, store: &BlobStore) -> Cow<'t, str> {
    if !text.contains(BLOB_REF_PREFIX) {
        return Cow::Borrowed(text);
    }
    let Ok(mut value) = serde_json::from_str::<Value>(text) else {
        return Cow::Borrowed(text);
    };
    let mut changed = false;
    walk_refs(&mut value, store, &mut changed);
    if changed {
        Cow::Owned(crate::json::to_text(&value))
    } else {
        Cow::Borrowed(text)
    }
}

fn walk_refs(value: &mut Value, store: &BlobStore, changed: &mut bool) {
    match value {
        Value::Object(obj) => {
            let is_image = obj.get("type").and_then(Value::as_str) == Some("image");
            for (key, child) in obj.iter_mut() {
                let target_kind = match key.as_str() {
                    "data" if is_image => Some(true),
                    "image_url" => Some(false),
                    _ => None,
                };
                if let (Some(as_base64), Value::String(s)) = (target_kind, &*child) {
                    if let Some(hash) = parse_ref(s) {
                        if let Ok(Some(bytes)) = store.get(hash) {
                            let text = if as_base64 {
                                encode_base64(&bytes)
                            } else {
                                String::from_utf8_lossy(&bytes).into_owned()
                            };
                            *child = Value::String(text);
                            *changed = true;
                        }
                    }
                    continue;
                }
                walk_refs(child, store, changed);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| walk_refs(v, store, changed)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemoryStorage;

    #[test]
    fn referenced_hashes_survive_non_ascii_after_the_prefix() {
        let h = "a".repeat(64);
        let text = format!("x blob:sha256:é blob:sha256:{h} blob:sha256:{h} blob:sha256:");
        assert_eq!(referenced_hashes(&text), vec![h]);
    }

    #[test]
    fn golden_hash_of_1024_a() {
        let bytes = decode_base64(&"A".repeat(1024)).unwrap();
        assert_eq!(bytes.len(), 768);
        assert_eq!(
            sha256_hex(&bytes),
            "ef115a0e0c15cdc41958ca46b5b14b456115f4baec5e3ca68599d2a8f435e3b8"
        );
    }

    #[test]
    fn put_is_idempotent_and_get_returns_bytes() {
        let s = MemoryStorage::new();
        let store = BlobStore::new(&s, "/agent/blobs");
        let a = store.put(b"hello").unwrap();
        let b = store.put(b"hello").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.reference, format!("blob:sha256:{}", a.hash));
        assert_eq!(store.get(&a.hash).unwrap().unwrap(), b"hello");
        assert_eq!(store.get(&"0".repeat(64)).unwrap(), None);
    }

    #[test]
    fn refs_with_path_tricks_are_rejected() {
        let s = MemoryStorage::new();
        let store = BlobStore::new(&s, "/agent/blobs");
        assert!(matches!(
            store.get("../../etc/passwd"),
            Err(BlobError::InvalidHash(_))
        ));
        assert_eq!(parse_ref("blob:sha256:../.."), None);
        assert_eq!(parse_ref(&format!("blob:sha256:{}", "A".repeat(64))), None);
    }

    #[test]
    fn rehydrate_restores_image_data_and_keeps_missing_refs() {
        let s = MemoryStorage::new();
        let store = BlobStore::new(&s, "/b");
        let put = store.put(&[1, 2, 3]).unwrap();
        let missing = format!("blob:sha256:{}", "1".repeat(64));
        let text = format!(
            r#"{{"content":[{{"type":"image","data":"{}","mimeType":"image/png"}},{{"type":"image","data":"{missing}"}}]}}"#,
            put.reference
        );
        let out = rehydrate(&text, &store);
        assert!(out.contains(r#""data":"AQID""#), "{out}");
        assert!(out.contains(&missing));
    }
}
