//! The core's storage port over a JS object (`JsStorage` in the typings), duck typed: any
//! object with the synchronous methods works, Node's `fs.*Sync` errors included.

use crate::convert::{fill_spare, number};
use crate::storage_shape;
use js_sys::{BigInt, Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use xcsh_session::storage::{
    self as port, BlobHooks, DirEntry, Environment, FileStat, Layer, MemoryStorage,
    ProcessIdentity, Storage, StorageError, StorageResult,
};

#[wasm_bindgen]
extern "C" {
    /// A JS object implementing the storage port.
    #[wasm_bindgen(typescript_type = "JsStorage")]
    pub type JsStorage;

    #[wasm_bindgen(method, catch)]
    fn read(this: &JsStorage, path: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, js_name = readPrefix)]
    fn read_prefix(this: &JsStorage, path: &JsValue, max_bytes: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn write(this: &JsStorage, path: &str, data: &Uint8Array) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn append(this: &JsStorage, path: &JsValue, data: &Uint8Array) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn rename(this: &JsStorage, from: &str, to: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn unlink(this: &JsStorage, path: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, js_name = listDir)]
    fn list_dir(this: &JsStorage, path: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn stat(this: &JsStorage, path: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, js_name = mkdirAll)]
    fn mkdir_all(this: &JsStorage, path: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn fsync(this: &JsStorage, path: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn rmdir(this: &JsStorage, path: &str) -> Result<JsValue, JsValue>;
}

/// The optional methods, looked up once.
struct Optional {
    read_into: Option<Function>,
    read_range: Option<Function>,
    now_ms: Option<Function>,
    random_u64: Option<Function>,
    blob_put: Option<Function>,
    blob_get: Option<Function>,
    create_new: Option<Function>,
    process_identity: Option<Function>,
    process_alive: Option<Function>,
}

/// [`Storage`] over a `JsStorage` object.
pub struct JsPort {
    js: JsStorage,
    optional: Optional,
    /// The paths of the last calls of the methods an append calls (`stat`, `append`,
    /// `fsync`, the lock's `readPrefix`), as JS strings: made once, not decoded from wasm
    /// memory at each call. Newest last, at most [`PATHS_KEPT`].
    paths: std::cell::RefCell<Vec<(String, JsValue)>>,
}

/// A session's appends go to two paths: the session file and its lock.
const PATHS_KEPT: usize = 4;

fn method(obj: &JsValue, name: &str) -> Option<Function> {
    Reflect::get(obj, &JsValue::from_str(name))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
}

/// A thrown JS value as a storage error: `code` decides the variant (`EXCSH_NOT_REGULAR`:
/// a FIFO, socket or device where a file was expected); any other failure names the
/// method and the path.
fn storage_error(err: JsValue, method: &str, path: &str) -> StorageError {
    let code = Reflect::get(&err, &JsValue::from_str("code"))
        .ok()
        .and_then(|c| c.as_string());
    match code.as_deref() {
        Some("ENOENT") => StorageError::NotFound(path.to_string()),
        Some("EEXIST") => StorageError::AlreadyExists(path.to_string()),
        Some("EACCES" | "EPERM") => StorageError::PermissionDenied(path.to_string()),
        Some("EXCSH_NOT_REGULAR") => StorageError::not_regular(path),
        _ => StorageError::Other(format!(
            "storage.{method}({path}) failed: {}",
            crate::convert::error_message(&err)
        )),
    }
}

/// What a storage method answered: its value, or the failure naming the method (a thrown
/// error, or a Promise where a value was due).
fn answer(result: Result<JsValue, JsValue>, method: &str, path: &str) -> StorageResult<JsValue> {
    let value = result.map_err(|e| storage_error(e, method, path))?;
    storage_shape::settled(value, method).map_err(StorageError::Other)
}

/// The bytes a storage method returned (a `Uint8Array`, or a string taken as UTF-8).
fn bytes(value: JsValue, what: &str) -> StorageResult<Vec<u8>> {
    if let Some(array) = value.dyn_ref::<Uint8Array>() {
        Ok(array.to_vec())
    } else if let Some(text) = value.as_string() {
        Ok(text.into_bytes())
    } else {
        Err(StorageError::Other(format!(
            "storage.{what} did not return a Uint8Array"
        )))
    }
}

fn flag(obj: &JsValue, key: &'static str) -> bool {
    Reflect::get(obj, &crate::convert::name(key)).is_ok_and(|v| v.is_truthy())
}

/// A stat's optional `dev` and `ino` ([`FileStat::id`]): both exact integers (a number
/// past 2^53 may be another file's, rounded), and an inode that is not 0; else none.
fn file_id(stat: &JsValue) -> Option<(u64, u64)> {
    let exact = |key| {
        number(stat, key)
            .filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n <= MAX_SAFE as f64)
            .map(|n| n as u64)
    };
    Some((exact("dev")?, exact("ino").filter(|ino| *ino != 0)?))
}

impl JsPort {
    /// `js` as a port, once [`storage_shape::problem`] finds nothing wrong with it (else
    /// an `invalidInput` error naming the method; nothing has been read or written).
    pub fn new(js: JsStorage) -> Result<JsPort, JsValue> {
        if let Some(problem) = storage_shape::problem(&js, false) {
            return Err(crate::convert::invalid(problem));
        }
        let optional = Optional {
            read_into: method(&js, "readInto"),
            read_range: method(&js, "readRange"),
            now_ms: method(&js, "nowMs"),
            random_u64: method(&js, "randomU64"),
            blob_put: method(&js, "blobPut"),
            blob_get: method(&js, "blobGet"),
            create_new: method(&js, "createNew"),
            process_identity: method(&js, "processIdentity"),
            process_alive: method(&js, "processAlive"),
        };
        Ok(JsPort {
            js,
            optional,
            paths: Default::default(),
        })
    }

    /// `path` as a JS string ([`JsPort::paths`]).
    fn path(&self, path: &str) -> JsValue {
        let mut paths = self.paths.borrow_mut();
        if let Some(i) = paths.iter().position(|(p, _)| p == path) {
            let kept = paths.remove(i);
            let value = kept.1.clone();
            paths.push(kept);
            return value;
        }
        if paths.len() == PATHS_KEPT {
            paths.remove(0);
        }
        let value = JsValue::from_str(path);
        paths.push((path.to_string(), value.clone()));
        value
    }
}

impl JsPort {
    /// `read` through the optional `readInto(path, dest, position)`: the storage fills
    /// the session's own buffer in wasm memory, so a large file is copied once (no JS
    /// buffer, no second copy into wasm). Reads until `readInto` returns 0, so a file
    /// that grew since `stat` is read whole.
    fn read_direct(&self, read_into: &Function, path: &str) -> StorageResult<Vec<u8>> {
        let size = self.stat(path)?.size as usize;
        let js_path = JsValue::from_str(path);
        let mut buf: Vec<u8> = Vec::with_capacity(size + 1);
        loop {
            if buf.len() == buf.capacity() {
                buf.reserve((buf.len() / 8).max(64 << 10));
            }
            if self.read_into_spare(read_into, &js_path, path, &mut buf, 0)? == 0 {
                return Ok(buf);
            }
        }
    }

    /// `read_range` through `readInto`, straight into wasm memory as [`Self::read_direct`]
    /// (a first open's scan reads every byte of the file this way: no JS buffer to
    /// allocate and zero, no copy into wasm). A length beyond [`DIRECT_UNCHECKED`] is
    /// first capped at the file's size, so that no more is reserved than can be read.
    fn read_range_direct(
        &self,
        read_into: &Function,
        path: &str,
        offset: u64,
        len: u64,
    ) -> StorageResult<Vec<u8>> {
        let want = match len > DIRECT_UNCHECKED {
            true => self.stat(path)?.size.saturating_sub(offset).min(len),
            false => len,
        };
        let want = usize::try_from(want).unwrap_or(usize::MAX);
        let js_path = JsValue::from_str(path);
        let mut buf: Vec<u8> = Vec::with_capacity(want);
        while buf.len() < want {
            if self.read_into_spare(read_into, &js_path, path, &mut buf, offset)? == 0 {
                break; // the file ends before the range does
            }
        }
        buf.truncate(want);
        Ok(buf)
    }

    /// One `readInto` call filling `buf`'s spare capacity from the file's byte
    /// `start + buf.len()`; the count it read (0 at the end of the file).
    fn read_into_spare(
        &self,
        read_into: &Function,
        js_path: &JsValue,
        path: &str,
        buf: &mut Vec<u8>,
        start: u64,
    ) -> StorageResult<usize> {
        let position = JsValue::from_f64((start + buf.len() as u64).min(MAX_SAFE) as f64);
        fill_spare(buf, |view| {
            let spare = view.length() as usize;
            answer(
                read_into.call3(&self.js, js_path, view, &position),
                "readInto",
                path,
            )?
            .as_f64()
            .filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n as usize <= spare)
            .map(|n| n as usize)
            .ok_or_else(|| {
                StorageError::Other(format!(
                    "storage.readInto did not return a byte count between 0 and {spare}"
                ))
            })
        })
    }
}

/// A ranged read through `readInto` reserves its length as asked up to this (64 MiB);
/// past it, no more than the file holds from the offset.
const DIRECT_UNCHECKED: u64 = 64 << 20;

/// Past 2^53 a JS number is no longer exact: offsets and lengths are capped there, which
/// no JS file reaches, so the answer is the same.
const MAX_SAFE: u64 = (1 << 53) - 1;

impl Storage for JsPort {
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        if let Some(read_into) = &self.optional.read_into {
            return self.read_direct(read_into, path);
        }
        bytes(answer(self.js.read(path), "read", path)?, "read")
    }

    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>> {
        let data = answer(
            self.js.read_prefix(&self.path(path), max_bytes as f64),
            "readPrefix",
            path,
        )?;
        let mut data = bytes(data, "readPrefix")?;
        data.truncate(max_bytes as usize);
        Ok(data)
    }

    /// The optional `readInto` at a position when the storage has it (straight into wasm
    /// memory), else the optional `readRange(path, offset, length)`; without either, the
    /// whole file (`read`) sliced. Numbers past 2^53 are capped ([`MAX_SAFE`]).
    fn read_range(&self, path: &str, offset: u64, len: u64) -> StorageResult<Vec<u8>> {
        if let Some(read_into) = &self.optional.read_into {
            return self.read_range_direct(read_into, path, offset, len);
        }
        let Some(read_range) = &self.optional.read_range else {
            return Ok(port::range_of(&self.read(path)?, offset, len).to_vec());
        };
        let value = read_range.call3(
            &self.js,
            &JsValue::from_str(path),
            &JsValue::from_f64(offset.min(MAX_SAFE) as f64),
            &JsValue::from_f64(len.min(MAX_SAFE) as f64),
        );
        let mut data = bytes(answer(value, "readRange", path)?, "readRange")?;
        data.truncate(usize::try_from(len).unwrap_or(usize::MAX));
        Ok(data)
    }

    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        answer(self.js.write(path, &Uint8Array::from(data)), "write", path).map(|_| ())
    }

    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        answer(
            self.js.append(&self.path(path), &Uint8Array::from(data)),
            "append",
            path,
        )
        .map(|_| ())
    }

    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        answer(self.js.rename(from, to), "rename", from).map(|_| ())
    }

    fn unlink(&self, path: &str) -> StorageResult<()> {
        answer(self.js.unlink(path), "unlink", path).map(|_| ())
    }

    fn list_dir(&self, path: &str) -> StorageResult<Vec<DirEntry>> {
        let list = answer(self.js.list_dir(path), "listDir", path)?;
        let Some(list) = list.dyn_ref::<js_sys::Array>() else {
            return Err(StorageError::Other(
                "storage.listDir did not return an array".into(),
            ));
        };
        list.iter()
            .map(|item| {
                let name = Reflect::get(&item, &JsValue::from_str("name"))
                    .ok()
                    .and_then(|n| n.as_string());
                let name = name.ok_or_else(|| {
                    StorageError::Other("storage.listDir: an item has no string name".into())
                })?;
                Ok(DirEntry {
                    name,
                    is_dir: flag(&item, "isDir"),
                })
            })
            .collect()
    }

    fn stat(&self, path: &str) -> StorageResult<FileStat> {
        let stat = answer(self.js.stat(&self.path(path)), "stat", path)?;
        if !stat.is_object() {
            return Err(StorageError::Other(
                "storage.stat did not return an object".into(),
            ));
        }
        Ok(FileStat {
            size: number(&stat, "size").unwrap_or(0.0) as u64,
            mtime_ms: number(&stat, "mtimeMs").unwrap_or(0.0) as i64,
            is_dir: flag(&stat, "isDir"),
            id: file_id(&stat),
        })
    }

    fn mkdir_all(&self, path: &str) -> StorageResult<()> {
        answer(self.js.mkdir_all(path), "mkdirAll", path).map(|_| ())
    }

    fn fsync(&self, path: &str) -> StorageResult<()> {
        answer(self.js.fsync(&self.path(path)), "fsync", path).map(|_| ())
    }

    fn rmdir(&self, path: &str) -> StorageResult<()> {
        answer(self.js.rmdir(path), "rmdir", path).map(|_| ())
    }

    fn create_new(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        match &self.optional.create_new {
            Some(f) => answer(
                f.call2(
                    &self.js,
                    &JsValue::from_str(path),
                    &Uint8Array::from(data).into(),
                ),
                "createNew",
                path,
            )
            .map(|_| ()),
            None => port::create_new_checked(self, path, data),
        }
    }

    fn env(&self) -> &dyn Environment {
        self
    }

    fn blob_hooks(&self) -> Option<&dyn BlobHooks> {
        let optional = &self.optional;
        (optional.blob_put.is_some() || optional.blob_get.is_some()).then_some(self)
    }
}

/// The optional `nowMs`, `randomU64`, `processIdentity` and `processAlive`; without them,
/// those of [`JsEnv`].
impl Environment for JsPort {
    fn now_ms(&self) -> i64 {
        let from_js = self
            .optional
            .now_ms
            .as_ref()
            .and_then(|f| f.call0(&self.js).ok())
            .and_then(|v| v.as_f64());
        from_js.map_or_else(|| JsEnv.now_ms(), |ms| ms as i64)
    }

    fn random_u64(&self) -> u64 {
        let Some(value) = self
            .optional
            .random_u64
            .as_ref()
            .and_then(|f| f.call0(&self.js).ok())
        else {
            return JsEnv.random_u64();
        };
        if let Some(big) = value.dyn_ref::<BigInt>() {
            u64::try_from(BigInt::as_uint_n(64.0, big)).unwrap_or_else(|_| JsEnv.random_u64())
        } else {
            value
                .as_f64()
                .map(|n| n as u64)
                .unwrap_or_else(|| JsEnv.random_u64())
        }
    }

    fn process_identity(&self) -> ProcessIdentity {
        let default = ProcessIdentity::unknown();
        let Some(f) = &self.optional.process_identity else {
            return default;
        };
        match f.call0(&self.js) {
            Ok(v) => ProcessIdentity {
                pid: Reflect::get(&v, &"pid".into())
                    .ok()
                    .and_then(|p| p.as_f64())
                    .map_or(0, |p| p as u32),
                host: Reflect::get(&v, &"host".into())
                    .ok()
                    .and_then(|h| h.as_string())
                    .unwrap_or(default.host),
            },
            Err(_) => default,
        }
    }

    fn process_alive(&self, pid: u32) -> Option<bool> {
        let f = self.optional.process_alive.as_ref()?;
        f.call1(&self.js, &JsValue::from(pid))
            .ok()
            .and_then(|v| v.as_bool())
    }
}

/// The optional `blobPut` and `blobGet`: blobs kept by the JS object; the one it lacks
/// uses the blob files.
impl BlobHooks for JsPort {
    fn put(&self, blobs_dir: &str, hash: &str, data: &[u8]) -> StorageResult<()> {
        let Some(f) = &self.optional.blob_put else {
            return port::put_blob_file(self, blobs_dir, hash, data);
        };
        let args = [
            JsValue::from_str(blobs_dir),
            JsValue::from_str(hash),
            Uint8Array::from(data).into(),
        ];
        answer(
            f.call3(&self.js, &args[0], &args[1], &args[2]),
            "blobPut",
            hash,
        )
        .map(|_| ())
    }

    fn get(&self, blobs_dir: &str, hash: &str) -> StorageResult<Option<Vec<u8>>> {
        let Some(f) = &self.optional.blob_get else {
            return port::get_blob_file(self, blobs_dir, hash);
        };
        let value = f.call2(
            &self.js,
            &JsValue::from_str(blobs_dir),
            &JsValue::from_str(hash),
        );
        match answer(value, "blobGet", hash)? {
            v if v.is_null() || v.is_undefined() => Ok(None),
            v => bytes(v, "blobGet").map(Some),
        }
    }
}

#[wasm_bindgen]
extern "C" {
    /// The host's cryptographic generator: browsers, workers, Node 20+, Deno and Bun all
    /// have `globalThis.crypto` (the call getrandom's `js` backend makes, without its
    /// fallback for older Node, which measured 2 kB more gzipped).
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues)]
    fn get_random_values(dest: &mut [u8]);
}

/// The JS clock (`Date.now`) and the host's cryptographic generator
/// (`crypto.getRandomValues`), drawn [`POOL_BYTES`] at a time: each append takes 8 bytes
/// for its id, and one call of the generator costs as much as a small write in Node.
pub struct JsEnv;

/// How many random bytes one `getRandomValues` call draws (its most is 65536).
const POOL_BYTES: usize = 512;

/// Random bytes drawn and not handed out yet: `bytes[used..]`.
struct Pool {
    bytes: [u8; POOL_BYTES],
    used: usize,
}

thread_local! {
    static POOL: std::cell::RefCell<Pool> = const {
        std::cell::RefCell::new(Pool { bytes: [0; POOL_BYTES], used: POOL_BYTES })
    };
}

impl Environment for JsEnv {
    fn now_ms(&self) -> i64 {
        js_sys::Date::now() as i64
    }

    fn random_u64(&self) -> u64 {
        POOL.with_borrow_mut(|pool| {
            if pool.used + 8 > POOL_BYTES {
                get_random_values(&mut pool.bytes);
                pool.used = 0;
            }
            let at = pool.used;
            pool.used += 8;
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(&pool.bytes[at..at + 8]);
            u64::from_le_bytes(bytes)
        })
    }
}

/// The storage of sessions without a JS storage (`parseSession`, `Session.inMemory`):
/// memory files in the JS environment ([`JsEnv`]; the core's memory clock is a counter).
#[derive(Default)]
pub struct LocalStorage(MemoryStorage);

impl Layer for LocalStorage {
    fn inner(&self) -> &dyn Storage {
        &self.0
    }

    fn env(&self) -> &dyn Environment {
        &JsEnv
    }
}
