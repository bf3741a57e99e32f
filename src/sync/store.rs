//! The object-store port: what sync needs of an S3-compatible store (or a shared folder),
//! and an in-memory store for tests and examples.
//!
//! Four calls, all a store of the S3 family answers: a put that never replaces
//! (`If-None-Match: *`), a get, a ranged get and a listing by prefix. Each machine only
//! ever creates its own objects, so no call needs a lock.

use std::cell::RefCell;
use std::collections::BTreeMap;

/// Why a call to the object store failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjectError {
    /// The bucket (or the folder of a `file://` remote) does not exist.
    #[error("the bucket does not exist: {0}")]
    NoBucket(String),
    /// The credentials were refused.
    #[error("the store refused the credentials: {0}")]
    Denied(String),
    /// The store could not be reached (after the client's retries).
    #[error("the store cannot be reached: {0}")]
    Unreachable(String),
    #[error("{0}")]
    Other(String),
}

/// What a [`ObjectStore::put_if_absent`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    Created,
    /// An object was already there under that key; it was left as it was.
    Exists,
}

/// One object of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    pub key: String,
    pub size: u64,
}

/// The store sync talks to. Keys are `/`-separated, with no leading `/`.
pub trait ObjectStore {
    /// Create `key` with `data` unless an object is already there.
    fn put_if_absent(&self, key: &str, data: &[u8]) -> Result<Put, ObjectError>;
    /// The object's bytes, `None` when there is none.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectError>;
    /// At most `len` bytes from `offset` (fewer at the end), `None` when there is no object.
    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, ObjectError>;
    /// Every object whose key starts with `prefix`, in key order.
    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, ObjectError>;
}

/// An object store in memory: every call answers at once, as a store with strong
/// consistency would. Counts the bytes it served and stored (tests check costs with it).
#[derive(Debug, Default)]
pub struct MemoryObjectStore {
    objects: RefCell<BTreeMap<String, Vec<u8>>>,
    traffic: RefCell<Traffic>,
}

/// What a [`MemoryObjectStore`] moved.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Traffic {
    pub bytes_put: u64,
    pub bytes_got: u64,
    pub lists: u64,
    pub puts: u64,
    pub gets: u64,
}

impl MemoryObjectStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// What was moved since the store was made (or since [`Self::reset_traffic`]).
    pub fn traffic(&self) -> Traffic {
        *self.traffic.borrow()
    }

    pub fn reset_traffic(&self) {
        *self.traffic.borrow_mut() = Traffic::default();
    }

    /// Every key, in order.
    pub fn keys(&self) -> Vec<String> {
        self.objects.borrow().keys().cloned().collect()
    }

    /// Replace an object whatever is there (a test's corrupt or foreign object).
    pub fn overwrite(&self, key: &str, data: &[u8]) {
        self.objects
            .borrow_mut()
            .insert(key.to_string(), data.to_vec());
    }
}

impl ObjectStore for MemoryObjectStore {
    fn put_if_absent(&self, key: &str, data: &[u8]) -> Result<Put, ObjectError> {
        let mut objects = self.objects.borrow_mut();
        let mut t = self.traffic.borrow_mut();
        t.puts += 1;
        if objects.contains_key(key) {
            return Ok(Put::Exists);
        }
        t.bytes_put += data.len() as u64;
        objects.insert(key.to_string(), data.to_vec());
        Ok(Put::Created)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectError> {
        let got = self.objects.borrow().get(key).cloned();
        let mut t = self.traffic.borrow_mut();
        t.gets += 1;
        t.bytes_got += got.as_ref().map_or(0, |d| d.len() as u64);
        Ok(got)
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, ObjectError> {
        let got = self.objects.borrow().get(key).map(|d| {
            let start = (offset as usize).min(d.len());
            let end = start.saturating_add(len as usize).min(d.len());
            d[start..end].to_vec()
        });
        let mut t = self.traffic.borrow_mut();
        t.gets += 1;
        t.bytes_got += got.as_ref().map_or(0, |d| d.len() as u64);
        Ok(got)
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, ObjectError> {
        self.traffic.borrow_mut().lists += 1;
        Ok(self
            .objects
            .borrow()
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| ObjectMeta {
                key: k.clone(),
                size: v.len() as u64,
            })
            .collect())
    }
}
