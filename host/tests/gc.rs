//! `gc` through the CLI's confinement: it reads each recorded session outside
//! `<agent-dir>/sessions` and nothing around it, deletes only inside the blob store itself,
//! survives recorded sessions whose folders are gone, and reads the recorded sessions in
//! time linear in their number.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

mod common;
use common::{shared_cache, BIN};

/// Run `xcsh-session --agent-dir AGENT ARGS`.
fn run(agent: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .env("XCSH_SESSION_CACHE_DIR", shared_cache())
        .env_remove("XCSH_SESSION_COMPONENT")
        .arg("--agent-dir")
        .arg(agent)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run xcsh-session")
}

/// `run`, which must succeed; its output as JSON.
fn report(agent: &Path, args: &[&str]) -> serde_json::Value {
    let out = run(agent, args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn canonical_tempdir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = fs::canonicalize(tmp.path()).expect("canonical");
    (tmp, path)
}

fn make_old(path: &Path) {
    let t = SystemTime::now() - Duration::from_secs(2 * 3600);
    fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(t))
        .expect("set mtime");
}

/// An unreferenced blob in `agent`'s store, two hours old; its hash.
fn old_orphan(agent: &Path, bytes: &[u8]) -> String {
    let hash = xcsh_session::internals::sha256_hex(bytes);
    let dir = agent.join("blobs");
    fs::create_dir_all(&dir).expect("mkdir");
    fs::write(dir.join(&hash), bytes).expect("write");
    make_old(&dir.join(&hash));
    hash
}

/// Append a user message with an image to `file` through the CLI; the image's hash.
fn append_image(agent: &Path, file: &Path) -> String {
    let entry = format!(
        r#"{{"type":"message","message":{{"role":"user","content":[{{"type":"image","data":"{}","mimeType":"image/png"}}],"timestamp":1}}}}"#,
        "QUJD".repeat(300)
    );
    let out = run(
        agent,
        &["append", file.to_str().expect("utf-8"), "--json", &entry],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    xcsh_session::internals::sha256_hex(&b"ABC".repeat(300))
}

#[test]
fn gc_deletes_nothing_where_a_symlinked_blob_store_leads() {
    let (_a, agent) = canonical_tempdir();
    let (_o, outside) = canonical_tempdir();
    // Someone else's files, named like blobs, old.
    let victim = outside.join("a".repeat(64));
    fs::write(&victim, "not a blob of ours").expect("write");
    make_old(&victim);
    std::os::unix::fs::symlink(&outside, agent.join("blobs")).expect("symlink");
    // A recorded session at the filesystem's root used to make `/` a root of the run.
    fs::write(
        agent.join("blob-referrers.jsonl"),
        "{\"path\":\"/x.jsonl\",\"notedMs\":1,\"pins\":[]}\n",
    )
    .expect("write");
    for args in [&["gc", "--delete"][..], &["gc"]] {
        let out = run(&agent, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("is a symlink") && err.contains("nothing was deleted"),
            "{err}"
        );
    }
    assert!(victim.exists(), "a file outside the store was deleted");
}

#[test]
fn a_recorded_session_lets_gc_read_that_one_file_and_nothing_around_it() {
    let (_a, agent) = canonical_tempdir();
    let (_o, outside) = canonical_tempdir();
    let neighbour = outside.join("neighbour.jsonl");
    fs::write(&neighbour, "blob:sha256:".to_string() + &"b".repeat(64)).expect("write");
    let session = outside.join("s.jsonl");
    let image = append_image(&agent, &session);
    make_old(&agent.join("blobs").join(&image));
    let orphan = old_orphan(&agent, b"nobody");
    // A directory named in the record instead of the file: reading it is refused.
    let mut records = fs::read_to_string(agent.join("blob-referrers.jsonl")).expect("read");
    records += &format!(
        "{{\"path\":\"{}\",\"notedMs\":1,\"pins\":[]}}\n",
        outside.display()
    );
    fs::write(agent.join("blob-referrers.jsonl"), records).expect("write");
    let out = run(&agent, &["gc", "--delete"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(agent.join("blobs").join(&orphan).exists());

    // Recorded as the file alone, it is read; the neighbour is not a root.
    fs::write(
        agent.join("blob-referrers.jsonl"),
        format!(
            "{{\"path\":\"{}\",\"notedMs\":1,\"pins\":[]}}\n",
            session.display()
        ),
    )
    .expect("write");
    let r = report(&agent, &["gc", "--delete"]);
    assert_eq!(r["deleted"], serde_json::json!([orphan]), "{r}");
    assert_eq!(r["scannedFiles"], 1);
    assert!(agent.join("blobs").join(&image).exists());
}

#[test]
fn gc_after_a_recorded_sessions_folder_was_deleted_still_collects_other_orphans() {
    let (_a, agent) = canonical_tempdir();
    let (_o, outside) = canonical_tempdir();
    let folder = outside.join("project");
    fs::create_dir_all(&folder).expect("mkdir");
    let session = folder.join("s.jsonl");
    let image = append_image(&agent, &session);
    make_old(&agent.join("blobs").join(&image));
    fs::remove_dir_all(&folder).expect("rm -r");
    let orphan = old_orphan(&agent, b"nobody");

    let r = report(&agent, &["gc", "--delete"]);
    assert_eq!(r["deleted"], serde_json::json!([orphan]), "{r}");
    assert_eq!(r["keptPinned"], serde_json::json!([image]));
    assert_eq!(r["missing"], serde_json::json!([session.to_str()]));
    let r = report(&agent, &["gc", "--delete", "--forget-missing"]);
    assert_eq!(r["forgotten"], serde_json::json!([session.to_str()]));
    assert_eq!(r["deleted"], serde_json::json!([image]));
    let r = report(&agent, &["gc", "--delete"]);
    assert_eq!(r["missing"], serde_json::json!([]));
}

/// 20,000 recorded sessions, each in a folder of its own. Reading them made each folder
/// a root, and every read checked every root: 1,500 took 0.47 s, 6,000 7.6 s, so 20,000
/// would take minutes. The bound is a timeout against that, far above what a linear run
/// takes here (the speed itself is not what this checks).
#[test]
fn gc_reads_many_recorded_sessions_in_linear_time() {
    let (_a, agent) = canonical_tempdir();
    let (_o, outside) = canonical_tempdir();
    let mut records = String::new();
    for i in 0..20_000 {
        let dir = outside.join(format!("p{i}"));
        fs::create_dir(&dir).expect("mkdir");
        let file = dir.join("s.jsonl");
        fs::write(&file, "{}\n").expect("write");
        records += &format!(
            "{{\"path\":\"{}\",\"notedMs\":1,\"pins\":[]}}\n",
            file.display()
        );
    }
    fs::write(agent.join("blob-referrers.jsonl"), records).expect("write");
    let started = Instant::now();
    let r = report(&agent, &["gc"]);
    let took = started.elapsed();
    assert_eq!(r["scannedFiles"], 20_000);
    assert!(took < Duration::from_secs(60), "{took:?}");
}
