//! Any artifact:// / agent:// URL: parsing and resolution never panic and never touch a
//! path outside the artifacts directory.
#![no_main]
use libfuzzer_sys::fuzz_target;
use xcsh_session::storage::{DirEntry, FileStat, Layer, MemoryStorage, Storage, StorageResult};
use xcsh_session::{resolve_url as resolve, Paging};

const DIR: &str = "/p/sess";

/// Panics on any access outside the artifacts directory.
struct Jail(MemoryStorage);

fn inside(path: &str) -> &str {
    assert!(path == DIR || path.starts_with("/p/sess/") && !path.contains("/../") && !path.ends_with("/.."), "escaped: {path}");
    path
}

impl Layer for Jail {
    fn inner(&self) -> &dyn Storage { &self.0 }
    fn read(&self, p: &str) -> StorageResult<Vec<u8>> { self.0.read(inside(p)) }
    fn read_prefix(&self, p: &str, n: u64) -> StorageResult<Vec<u8>> { self.0.read_prefix(inside(p), n) }
    fn read_range(&self, p: &str, o: u64, n: u64) -> StorageResult<Vec<u8>> { self.0.read_range(inside(p), o, n) }
    fn write(&self, p: &str, d: &[u8]) -> StorageResult<()> { self.0.write(inside(p), d) }
    fn append(&self, p: &str, d: &[u8]) -> StorageResult<()> { self.0.append(inside(p), d) }
    fn rename(&self, a: &str, b: &str) -> StorageResult<()> { self.0.rename(inside(a), inside(b)) }
    fn unlink(&self, p: &str) -> StorageResult<()> { self.0.unlink(inside(p)) }
    fn list_dir(&self, p: &str) -> StorageResult<Vec<DirEntry>> { self.0.list_dir(inside(p)) }
    fn stat(&self, p: &str) -> StorageResult<FileStat> { self.0.stat(inside(p)) }
    fn mkdir_all(&self, p: &str) -> StorageResult<()> { self.0.mkdir_all(inside(p)) }
    fn fsync(&self, p: &str) -> StorageResult<()> { self.0.fsync(inside(p)) }
    fn rmdir(&self, p: &str) -> StorageResult<()> { self.0.rmdir(inside(p)) }
    fn create_new(&self, p: &str, d: &[u8]) -> StorageResult<()> { self.0.create_new(inside(p), d) }
}

fuzz_target!(|data: &[u8]| {
    let url = String::from_utf8_lossy(data);
    let storage = MemoryStorage::new();
    storage.mkdir_all(DIR).unwrap();
    storage.write("/p/sess/0.bash.log", b"a\nb\nc").unwrap();
    storage.write("/p/sess/0-Task.md", br#"{"a":[{"b":1}]}"#).unwrap();
    storage.write("/p/secret.md", b"secret").unwrap();
    let jail = Jail(storage);
    let _ = xcsh_session::internals::parse_url(&url);
    for paging in [Paging::default(), Paging { offset: Some(2), limit: Some(1) }] {
        if let Ok(r) = resolve(&jail, Some(DIR), &url, paging) {
            assert!(!r.content.contains("secret"));
        }
    }
    for prefix in ["artifact://", "agent://"] {
        let _ = resolve(&jail, Some(DIR), &format!("{prefix}{url}"), Paging::default());
    }
});
