//! The blob store under an adversary: bytes on disk that do not match their hash, a
//! garbage collection racing an append that reuses an old blob, sessions outside
//! `<agentDir>/sessions`, two collections at once. No acknowledged entry ever loses its
//! image, and a wrong blob is never handed out as the right one.

mod common;
use common::*;
use std::cell::RefCell;
use std::rc::Rc;
use xcsh_session::session::{Persistence, Session};
use xcsh_session::storage::{Layer, MemoryStorage, Storage, StorageExt, StorageResult};
use xcsh_session::{api, BlobError, BlobStore, GcError};

const BLOBS: &str = "/agent/blobs";
/// Old enough for any grace period the tests use.
const LONG_AGO: i64 = 0;
const GRACE: i64 = 60_000;

/// A user message with one image whose bytes are `"ABC" * 300`.
fn image_message() -> String {
    format!(
        r#"{{"role":"user","content":[{{"type":"image","data":"{}","mimeType":"image/png"}}],"timestamp":1}}"#,
        "QUJD".repeat(300)
    )
}

fn image_bytes() -> Vec<u8> {
    b"ABC".repeat(300)
}

fn image_hash() -> String {
    xcsh_session::internals::sha256_hex(&image_bytes())
}

fn blob_path() -> String {
    format!("{BLOBS}/{}", image_hash())
}

/// A session of `storage` under `/agent` whose first entry holds the image.
fn session_with_image(storage: &Rc<MemoryStorage>) -> Session {
    let mut s = create(storage);
    s.append_message(&image_message()).unwrap();
    s.append_message(&assistant("seen")).unwrap();
    s
}

/// The image as the context hands it to the model (base64 of the blob).
fn context_image(s: &Session) -> Option<String> {
    let ctx = context_value(s);
    ctx["messages"][0]["content"][0]["data"]
        .as_str()
        .map(str::to_string)
}

#[test]
fn a_blob_whose_bytes_do_not_match_its_hash_is_an_error_never_wrong_bytes() {
    let storage = mem();
    let store = BlobStore::new(&*storage, BLOBS);
    let put = store.put(b"the real bytes").unwrap();
    storage.write(&put.path, b"other bytes").unwrap();
    match store.get(&put.hash) {
        Err(BlobError::Corrupt { hash, actual }) => {
            assert_eq!(hash, put.hash);
            assert_eq!(actual, xcsh_session::internals::sha256_hex(b"other bytes"));
        }
        other => panic!("served {other:?}"),
    }
    storage.write(&put.path, b"").unwrap();
    assert!(matches!(
        store.get(&put.hash),
        Err(BlobError::Corrupt { .. })
    ));
    let err = api::blob_get(storage.clone(), "/agent", &put.reference).unwrap_err();
    assert_eq!(err.kind.as_str(), "storage");
    assert!(err.message.contains("is corrupt"), "{}", err.message);
}

#[test]
fn a_session_never_shows_a_corrupt_blob_as_its_image() {
    let storage = mem();
    let s = session_with_image(&storage);
    storage.write(&blob_path(), b"truncat").unwrap();
    let reloaded = open(&storage, s.file().unwrap(), Persistence::ReadOnly);
    let data = context_image(&reloaded).unwrap();
    assert_eq!(
        data,
        format!("blob:sha256:{}", image_hash()),
        "the reference is kept"
    );
}

#[test]
fn an_append_whose_image_hashes_to_a_bad_blob_file_repairs_it() {
    for bad in [&b""[..], b"ABCABC", b"not the image at all"] {
        let storage = mem();
        storage.mkdir_all(BLOBS).unwrap();
        storage.write(&blob_path(), bad).unwrap();
        let s = session_with_image(&storage);
        assert_eq!(storage.read(&blob_path()).unwrap(), image_bytes());
        let reloaded = open(&storage, s.file().unwrap(), Persistence::ReadOnly);
        assert_eq!(
            context_image(&reloaded).unwrap(),
            "QUJD".repeat(300),
            "the image is whole again"
        );
    }
}

/// Passes everything on, and runs `other_process` once, just before the first call that
/// `trigger` picks: an append in another process landing at that moment of a collection.
struct Interleave {
    inner: Rc<MemoryStorage>,
    trigger: fn(&str, &str) -> bool,
    other_process: RefCell<Option<Box<dyn FnOnce()>>>,
}

impl Interleave {
    fn at(&self, call: &str, path: &str) {
        if (self.trigger)(call, path) {
            if let Some(f) = self.other_process.borrow_mut().take() {
                f();
            }
        }
    }
}

impl Layer for Interleave {
    fn inner(&self) -> &dyn Storage {
        &*self.inner
    }
    fn list_dir(&self, path: &str) -> StorageResult<Vec<xcsh_session::storage::DirEntry>> {
        self.at("list", path);
        self.inner.list_dir(path)
    }
    fn stat(&self, path: &str) -> StorageResult<xcsh_session::storage::FileStat> {
        self.at("stat", path);
        self.inner.stat(path)
    }
    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        self.at("rename", from);
        self.inner.rename(from, to)
    }
    fn unlink(&self, path: &str) -> StorageResult<()> {
        self.at("unlink", path);
        self.inner.unlink(path)
    }
}

/// An old blob no session references, then a collection during which another process
/// appends an image with the same bytes at the moment `trigger` picks. Afterwards the
/// acknowledged entry's image is in the store.
fn collect_while_an_append_reuses_the_blob(trigger: fn(&str, &str) -> bool) {
    let storage = mem();
    let store = BlobStore::new(&*storage, BLOBS);
    store.put(&image_bytes()).unwrap();
    storage.set_mtime(&blob_path(), LONG_AGO);
    let appended: Rc<RefCell<Option<String>>> = Rc::default();
    let gc_view = Interleave {
        inner: storage.clone(),
        trigger,
        other_process: RefCell::new(Some(Box::new({
            let (storage, appended) = (storage.clone(), appended.clone());
            move || {
                let s = session_with_image(&storage);
                *appended.borrow_mut() = s.file().map(str::to_string);
            }
        }))),
    };
    gc_at(&gc_view, false, GRACE).unwrap();
    let file = appended
        .borrow()
        .clone()
        .expect("the other process appended");
    let reloaded = open(&storage, &file, Persistence::ReadOnly);
    assert!(
        reloaded.report().missing_blobs.is_empty(),
        "the blob was deleted"
    );
    assert_eq!(context_image(&reloaded).unwrap(), "QUJD".repeat(300));
}

#[test]
fn an_append_reusing_an_old_blob_after_the_scan_keeps_it() {
    collect_while_an_append_reuses_the_blob(|call, path| call == "list" && path == BLOBS);
}

#[test]
fn an_append_reusing_an_old_blob_between_its_age_check_and_its_deletion_keeps_it() {
    collect_while_an_append_reuses_the_blob(|call, path| {
        matches!(call, "rename" | "unlink") && path == blob_path()
    });
}

#[test]
fn an_append_reusing_an_old_blob_after_it_was_set_aside_keeps_it() {
    collect_while_an_append_reuses_the_blob(|call, path| call == "stat" && path.ends_with(".gc"));
}

/// A session of the agent dir `/agent` kept at `file`, outside `/agent/sessions`, whose
/// first entry holds the image.
fn outside_session_with_image(storage: &Rc<MemoryStorage>, file: &str) -> Session {
    storage
        .mkdir_all(xcsh_session::storage::parent(file))
        .unwrap();
    let mut s = open(storage, file, Persistence::Persistent);
    s.append_message(&image_message()).unwrap();
    s.append_message(&assistant("seen")).unwrap();
    s
}

#[test]
fn blobs_of_a_session_outside_the_sessions_dir_are_never_collected() {
    let storage = mem();
    let outside = "/elsewhere/notes/s.jsonl";
    let mut s = outside_session_with_image(&storage, outside);
    s.flush().unwrap();
    storage.set_mtime(&blob_path(), LONG_AGO);
    let orphan = BlobStore::new(&*storage, BLOBS).put(b"nobody").unwrap();
    storage.set_mtime(&orphan.path, LONG_AGO);

    let report = gc_at(&*storage, false, GRACE).unwrap();
    assert_eq!(report.deleted, vec![orphan.hash], "the orphan goes");
    assert!(
        storage.exists(&blob_path()),
        "the outside session's image stays"
    );
    let listed =
        xcsh_session::blob_referrers(read(&storage, "/agent/blob-referrers.jsonl").as_bytes());
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0], outside);
    // Appending the same image again pins nothing new.
    s.append_message(&image_message()).unwrap();
    assert_eq!(
        read(&storage, "/agent/blob-referrers.jsonl")
            .lines()
            .count(),
        1
    );
}

#[test]
fn a_second_collection_while_one_runs_is_refused_and_deletes_nothing() {
    let storage = mem();
    let orphan = BlobStore::new(&*storage, BLOBS).put(b"nobody").unwrap();
    storage.set_mtime(&orphan.path, LONG_AGO);
    // A live collection elsewhere holds the lock (this storage cannot tell whether pid 7
    // runs, so the lock stands).
    put(
        &storage,
        "/agent/blobs.lock",
        r#"{"pid":7,"host":"other","startedAt":"2026-01-01T00:00:00.000Z","token":"00000000000000aa"}"#,
    );
    match gc_at(&*storage, false, GRACE) {
        Err(e @ GcError::Busy(_)) => {
            assert!(e.to_string().contains("pid 7"), "{e}");
            let api_err = api::gc(storage.clone(), "/agent", false, false).unwrap_err();
            assert_eq!(api_err.kind.as_str(), "conflict");
        }
        other => panic!("{other:?}"),
    }
    assert!(storage.exists(&orphan.path));
    // A dry run takes no lock and still reports.
    let dry = gc_at(&*storage, true, GRACE).unwrap();
    assert_eq!(dry.deleted, vec![orphan.hash.clone()]);
    storage.unlink("/agent/blobs.lock").unwrap();
    let real = gc_at(&*storage, false, GRACE).unwrap();
    assert_eq!(real.deleted, vec![orphan.hash.clone()]);
    assert!(!storage.exists(&orphan.path));
    assert!(!storage.exists("/agent/blobs.lock"), "the lock is released");
}

#[test]
fn a_collection_that_cannot_read_a_recorded_outside_session_refuses_even_when_it_was_recorded_just_now(
) {
    let storage = mem();
    let outside = "/elsewhere/s.jsonl";
    outside_session_with_image(&storage, outside);
    storage.set_mtime(&blob_path(), LONG_AGO);
    let orphan = BlobStore::new(&*storage, BLOBS).put(b"nobody").unwrap();
    storage.set_mtime(&orphan.path, LONG_AGO);
    let confined = DenyRead {
        inner: storage.clone(),
        denied: outside.into(),
    };
    // Recorded a moment ago, and still: what it references cannot be known, so nothing
    // is deleted, and the message says why.
    for dry_run in [true, false] {
        let err = gc_at(&confined, dry_run, GRACE).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(outside) && msg.contains("nothing was deleted"),
            "{msg}"
        );
    }
    assert!(storage.exists(&blob_path()) && storage.exists(&orphan.path));
}
