//! Blob collection fails closed: a blob is deleted only when every session that might
//! reference it was read and does not. Each test is a way an adversary made the
//! collection delete an image a session still referenced (issue "Nothing lost, round 3").

mod common;
use common::*;
use std::rc::Rc;
use xcsh_session::session::{Persistence, Session};
use xcsh_session::storage::{MemoryStorage, Storage, StorageExt};
use xcsh_session::{BlobStore, GcOptions, GcReport};

const BLOBS: &str = "/agent/blobs";
const REFERRERS: &str = "/agent/blob-referrers.jsonl";
const GRACE: i64 = 60_000;
/// Old enough for the grace period.
const LONG_AGO: i64 = 0;

fn image_message(seed: &str) -> String {
    use base64::Engine;
    let data = base64::engine::general_purpose::STANDARD.encode(image_bytes(seed));
    format!(
        r#"{{"role":"user","content":[{{"type":"image","data":"{data}","mimeType":"image/png"}}],"timestamp":1}}"#
    )
}

fn image_bytes(seed: &str) -> Vec<u8> {
    format!("image {seed} ").repeat(100).into_bytes()
}

fn hash(seed: &str) -> String {
    xcsh_session::internals::sha256_hex(&image_bytes(seed))
}

fn blob(seed: &str) -> String {
    format!("{BLOBS}/{}", hash(seed))
}

/// A session kept at `file` (its directory made), its first entry the image `seed`.
fn session_at(storage: &Rc<MemoryStorage>, file: &str, seed: &str) -> Session {
    storage
        .mkdir_all(xcsh_session::storage::parent(file))
        .unwrap();
    let mut s = open(storage, file, Persistence::Persistent);
    s.append_message(&image_message(seed)).unwrap();
    s.append_message(&assistant("seen")).unwrap();
    s.close().unwrap();
    s
}

/// An unreferenced blob, old.
fn orphan(storage: &Rc<MemoryStorage>, name: &str) -> String {
    let put = BlobStore::new(&**storage, BLOBS)
        .put(name.as_bytes())
        .unwrap();
    storage.set_mtime(&put.path, LONG_AGO);
    put.path
}

fn age(storage: &MemoryStorage, seeds: &[&str]) {
    for seed in seeds {
        storage.set_mtime(&blob(seed), LONG_AGO);
    }
}

fn collect(storage: &dyn Storage, dry_run: bool, forget_missing: bool) -> GcReport {
    xcsh_session::collect_garbage(
        storage,
        "/agent",
        GcOptions {
            dry_run,
            forget_missing,
            grace_ms: GRACE,
        },
    )
    .unwrap()
}

fn refused(storage: &dyn Storage, forget_missing: bool) -> String {
    let options = GcOptions {
        dry_run: false,
        forget_missing,
        grace_ms: GRACE,
    };
    match xcsh_session::collect_garbage(storage, "/agent", options) {
        Ok(report) => panic!("collection ran: {report:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_line_of_the_referrers_file_that_cannot_be_read_makes_collection_refuse_and_delete_nothing() {
    type Corrupt = fn(&str) -> Vec<u8>;
    let corruptions: [(&str, Corrupt); 4] = [
        ("a stray byte in it", |line| format!("x{line}").into_bytes()),
        ("a BOM before it, not at the start of the file", |line| {
            let mut b =
                b"{\"path\":\"/elsewhere/other.jsonl\",\"notedMs\":1}\n\xEF\xBB\xBF".to_vec();
            b.extend_from_slice(line.as_bytes());
            b
        }),
        ("notedMs written as a string", |line| {
            line.replacen("\"notedMs\":", "\"notedMs\":\"", 1)
                .replacen(",\"pins\"", "\",\"pins\"", 1)
                .into_bytes()
        }),
        ("a byte that is not UTF-8", |line| {
            let mut b = line.as_bytes().to_vec();
            b.insert(2, 0xFF);
            b
        }),
    ];
    for (what, corrupt) in corruptions {
        let storage = mem();
        let outside = "/elsewhere/s.jsonl";
        session_at(&storage, outside, "a");
        age(&storage, &["a"]);
        let orphan = orphan(&storage, "nobody");
        let line = read(&storage, REFERRERS);
        let mut bytes = corrupt(line.trim_end());
        bytes.push(b'\n');
        storage.write(REFERRERS, &bytes).unwrap();

        let msg = refused(&*storage, false);
        assert!(
            msg.contains(REFERRERS) && msg.contains("nothing was deleted"),
            "{what}: {msg}"
        );
        assert!(storage.exists(&blob("a")), "{what}: the image is kept");
        assert!(storage.exists(&orphan), "{what}: nothing is deleted");
    }
}

#[test]
fn a_bom_at_the_start_and_a_last_line_cut_short_are_let_through() {
    let storage = mem();
    session_at(&storage, "/elsewhere/s.jsonl", "a");
    age(&storage, &["a"]);
    let orphan = orphan(&storage, "nobody");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(read(&storage, REFERRERS).replace('\n', "\r\n").into_bytes());
    bytes.extend_from_slice(b"\n{\"path\":\"/elsewhere/t.js"); // an append cut short
    storage.write(REFERRERS, &bytes).unwrap();

    let report = collect(&*storage, false, false);
    assert_eq!(report.deleted, vec![orphan.rsplit('/').next().unwrap()]);
    assert!(storage.exists(&blob("a")));
    // The next record starts a line of its own after the cut one.
    session_at(&storage, "/elsewhere/u.jsonl", "b");
    assert!(read(&storage, REFERRERS).ends_with(&format!("\"pins\":[\"{}\"]}}\n", hash("b"))));
    collect(&*storage, false, false);
}

#[test]
fn an_outside_session_moved_away_keeps_its_images_until_it_is_forgotten() {
    let storage = mem();
    let outside = "/elsewhere/s.jsonl";
    let moved = "/archive/s.jsonl";
    session_at(&storage, outside, "a");
    age(&storage, &["a"]);
    let orphan = orphan(&storage, "nobody");
    // `mv`, by someone else: the library sees the file gone.
    storage.mkdir_all("/archive").unwrap();
    storage.rename(outside, moved).unwrap();

    let report = collect(&*storage, false, false);
    assert_eq!(report.missing, vec![outside]);
    assert_eq!(report.kept_pinned, vec![hash("a")]);
    assert_eq!(report.deleted, vec![orphan.rsplit('/').next().unwrap()]);
    assert!(storage.exists(&blob("a")));
    let reopened = open(&storage, moved, Persistence::ReadOnly);
    assert!(reopened.report().missing_blobs.is_empty());

    // Written at its new place, it pins its images there; forgetting the old place then
    // loses nothing.
    let mut s = open(&storage, moved, Persistence::Persistent);
    s.append_message(&user("still here")).unwrap();
    s.close().unwrap();
    let report = collect(&*storage, false, true);
    assert_eq!(report.forgotten, vec![outside]);
    assert!(report.deleted.is_empty(), "{report:?}");
    assert!(storage.exists(&blob("a")));
    // Forgotten for good: later collections no longer report it.
    assert!(collect(&*storage, false, false).missing.is_empty());
}

#[test]
fn a_deleted_outside_session_keeps_its_pins_and_blocks_no_other_collection() {
    let storage = mem();
    let outside = "/gone/dir/s.jsonl";
    session_at(&storage, outside, "a");
    age(&storage, &["a"]);
    storage.unlink(outside).unwrap();
    storage.rmdir("/gone/dir").unwrap();
    let orphan = orphan(&storage, "nobody");

    let dry = collect(&*storage, true, true);
    let mut both = vec![hash("a"), orphan.rsplit('/').next().unwrap().to_string()];
    both.sort();
    assert_eq!(
        (dry.forgotten.clone(), dry.deleted.clone()),
        (vec![outside.to_string()], both),
        "a dry run says what forgetting would do"
    );
    assert!(
        collect(&*storage, true, false).missing == vec![outside],
        "and forgets nothing"
    );
    let report = collect(&*storage, false, false);
    assert_eq!(report.missing, vec![outside]);
    assert_eq!(report.kept_pinned, vec![hash("a")]);
    assert!(!storage.exists(&orphan) && storage.exists(&blob("a")));

    let report = collect(&*storage, false, true);
    assert_eq!(report.forgotten, vec![outside]);
    assert_eq!(report.deleted, vec![hash("a")]);
}

#[test]
fn a_gone_session_recorded_before_pins_makes_collection_refuse_until_it_is_forgotten() {
    let storage = mem();
    put(
        &storage,
        REFERRERS,
        "{\"path\":\"/old/s.jsonl\",\"notedMs\":1}\n",
    );
    let orphan = orphan(&storage, "nobody");
    let msg = refused(&*storage, false);
    assert!(
        msg.contains("/old/s.jsonl") && msg.contains("--forget-missing"),
        "{msg}"
    );
    assert!(storage.exists(&orphan));

    let report = collect(&*storage, false, true);
    assert_eq!(report.forgotten, vec!["/old/s.jsonl"]);
    assert!(!storage.exists(&orphan));
    // Recorded again at the same path after the forgetting: it counts again.
    session_at(&storage, "/old/s.jsonl", "a");
    age(&storage, &["a"]);
    storage.unlink("/old/s.jsonl").unwrap();
    let report = collect(&*storage, false, false);
    assert_eq!(report.kept_pinned, vec![hash("a")]);
}

#[test]
fn an_outside_session_recorded_late_pins_every_blob_it_already_references() {
    let storage = mem();
    // An image stored by a session under sessions/, long ago.
    let mut inside = create(&storage);
    inside.append_message(&image_message("old")).unwrap();
    inside.append_message(&assistant("seen")).unwrap();
    let inside_file = inside.file().unwrap().to_string();
    let text = read(&storage, &inside_file);
    drop(inside);
    // A session outside, written by hand (not recorded), referencing the same blob.
    put(&storage, "/elsewhere/s.jsonl", &text);
    // Recorded by appending an image, as the README advises.
    let mut s = open(&storage, "/elsewhere/s.jsonl", Persistence::Persistent);
    s.append_message(&image_message("new")).unwrap();
    s.close().unwrap();
    storage.unlink(&inside_file).unwrap();
    age(&storage, &["old", "new"]);
    // Then it goes away (moved by hand).
    storage.mkdir_all("/archive").unwrap();
    storage
        .rename("/elsewhere/s.jsonl", "/archive/s.jsonl")
        .unwrap();

    let report = collect(&*storage, false, false);
    let mut pinned = vec![hash("old"), hash("new")];
    pinned.sort();
    assert_eq!(report.kept_pinned, pinned);
    assert!(storage.exists(&blob("old")) && storage.exists(&blob("new")));
}

#[test]
fn a_session_forked_or_moved_out_of_the_sessions_dir_pins_what_it_references() {
    for how in ["fork", "move"] {
        let storage = mem();
        let mut s = create(&storage);
        s.append_message(&image_message("a")).unwrap();
        s.append_message(&assistant("seen")).unwrap();
        let source = s.file().unwrap().to_string();
        storage.mkdir_all("/elsewhere").unwrap();
        let copy = if how == "fork" {
            let (mut forked, _) = Session::fork_from(
                storage.clone(),
                &source,
                &xcsh_session::session::CreateOptions {
                    agent_dir: "/agent".into(),
                    cwd: "/elsewhere".into(),
                    session_dir: Some("/elsewhere".into()),
                    ..Default::default()
                },
            )
            .unwrap();
            forked.close().unwrap();
            drop(s);
            storage.unlink(&source).unwrap();
            forked.file().unwrap().to_string()
        } else {
            let moved = s.move_to_dir("/elsewhere", "/elsewhere").unwrap();
            s.close().unwrap();
            moved
        };
        assert!(!copy.starts_with("/agent/sessions/"), "{how}: {copy}");
        age(&storage, &["a"]);
        // Gone from where it was recorded, its image is still pinned.
        storage.mkdir_all("/archive").unwrap();
        storage.rename(&copy, "/archive/s.jsonl").unwrap();
        let report = collect(&*storage, false, false);
        assert_eq!(report.kept_pinned, vec![hash("a")], "{how}");
        assert!(storage.exists(&blob("a")), "{how}");
    }
}

#[test]
fn files_a_collection_or_a_put_left_half_way_are_put_back_or_removed_by_the_next_one() {
    let storage = mem();
    // A session references "a"; a collection stopped after setting "a" aside.
    let mut s = create(&storage);
    s.append_message(&image_message("a")).unwrap();
    s.append_message(&assistant("seen")).unwrap();
    let aside = format!("{BLOBS}/.{}.0123abcd.gc", hash("a"));
    storage.rename(&blob("a"), &aside).unwrap();
    // Another set aside whose blob was put again since; a put's temp files, old and new.
    let b = orphan(&storage, "b");
    let b_aside = format!("{BLOBS}/.{}.00000001.gc", b.rsplit('/').next().unwrap());
    storage.write(&b_aside, b"b").unwrap();
    let old_tmp = format!("{BLOBS}/.{}.00000002.tmp", hash("c"));
    let new_tmp = format!("{BLOBS}/.{}.00000003.tmp", hash("d"));
    storage.write(&old_tmp, b"half").unwrap();
    storage.set_mtime(&old_tmp, LONG_AGO);
    storage.write(&new_tmp, b"being written").unwrap();
    let name = |p: &str| p.rsplit('/').next().unwrap().to_string();
    let mut stale = vec![name(&aside), name(&b_aside), name(&old_tmp)];
    stale.sort();

    let dry = collect(&*storage, true, false);
    assert_eq!(dry.stale_files, stale);
    assert!(
        storage.exists(&aside) && storage.exists(&old_tmp),
        "a dry run changes nothing"
    );

    let report = collect(&*storage, false, false);
    assert_eq!(report.stale_files, stale);
    assert!(
        storage.exists(&blob("a")),
        "put back: a session references it"
    );
    assert!(!storage.exists(&aside) && !storage.exists(&b_aside) && !storage.exists(&old_tmp));
    assert!(
        storage.exists(&new_tmp),
        "a put in progress keeps its temp file"
    );
    assert_eq!(report.deleted, vec![name(&b)], "the orphan goes as usual");
    let reloaded = open(&storage, s.file().unwrap(), Persistence::ReadOnly);
    assert!(reloaded.report().missing_blobs.is_empty());
}

#[test]
fn an_outside_session_this_user_cannot_read_makes_collection_refuse_however_young_its_record() {
    let storage = mem();
    let mut inside = create(&storage);
    inside.append_message(&image_message("old")).unwrap();
    inside.append_message(&assistant("seen")).unwrap();
    let inside_file = inside.file().unwrap().to_string();
    put(
        &storage,
        "/home/other/s.jsonl",
        &read(&storage, &inside_file),
    );
    drop(inside);
    // Recorded just now, by its owner, by appending an image.
    let mut s = open(&storage, "/home/other/s.jsonl", Persistence::Persistent);
    s.append_message(&image_message("new")).unwrap();
    s.close().unwrap();
    storage.unlink(&inside_file).unwrap();
    age(&storage, &["old"]);
    let as_another_user = DenyRead {
        inner: storage.clone(),
        denied: "/home/other/s.jsonl".into(),
    };
    let msg = refused(&as_another_user, false);
    assert!(
        msg.contains("/home/other/s.jsonl") && msg.contains("nothing was deleted"),
        "{msg}"
    );
    assert!(storage.exists(&blob("old")));
}
