//! The benchmark's real-content generator (`examples/gen_real.rs`, included here as a
//! module) writes sessions the core opens cleanly: 5 MB of each variant (the first fixture
//! alone is 2.4 MB, the images are in the second), no load issue
//! or warning, unique ids, increasing timestamps, one long path, and the context the
//! generator predicts (message count; a compaction summary first in `compact`).

#[allow(dead_code)]
#[path = "../examples/gen_real.rs"]
mod gen_real;

use gen_real::{fixture_files, generate, Variant};
use std::collections::HashSet;
use std::path::Path;
use std::rc::Rc;
use xcsh_session::fs::FsStorage;
use xcsh_session::{EntryType, OpenOptions, Persistence, Session};

fn check(variant: Variant) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixtures = fixture_files(&root.join("tests/fixtures/real"));
    assert_eq!(fixtures.len(), 4);
    let tmp = std::env::temp_dir().join(format!(
        "xcsh-gen-real-{}-{}",
        variant.name(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    let agent = tmp.join("agent");
    let g = generate(&fixtures, &agent, 5_000_000, variant, 42);
    assert!(g.bytes >= 5_000_000 && g.bytes < 5_300_000, "{g:?}");
    assert_eq!(std::fs::metadata(&g.path).unwrap().len(), g.bytes);

    let options = OpenOptions {
        persistence: Persistence::ReadOnly,
        agent_dir: agent.to_string_lossy().into_owned(),
        cwd: String::new(),
    };
    let s = Session::open(
        Rc::new(FsStorage::new()),
        &g.path.to_string_lossy(),
        &options,
    )
    .unwrap();
    let report = s.report();
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());
    assert!(
        report.issues.is_empty() && report.non_entries.is_empty(),
        "{report:?}"
    );
    assert!(
        report.header_problem.is_none()
            && report.migration.is_none()
            && report.missing_blobs.is_empty()
    );
    assert_eq!(report.file_version, 3);

    let entries = s.entries();
    assert_eq!(entries.len() as u64, g.entries);
    let ids: HashSet<&str> = entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids.len(), entries.len(), "ids are unique");
    assert!(entries
        .iter()
        .all(|e| e.id.len() == 8 && e.id.bytes().all(|b| b.is_ascii_hexdigit())));
    assert!(
        entries
            .windows(2)
            .all(|w| w[0].timestamp() < w[1].timestamp()),
        "timestamps increase"
    );

    let path = s.branch_path(None).unwrap();
    assert_eq!(
        path.len() as u64,
        g.path_entries,
        "one long path to the last entry"
    );
    let compactions = entries
        .iter()
        .filter(|e| e.entry_type == EntryType::Compaction)
        .count() as u64;
    assert_eq!(compactions, g.compactions);
    let ctx = s.context();
    assert_eq!(ctx.messages.len() as u64, g.context_messages);
    match variant {
        Variant::NoCompact => {
            assert_eq!(compactions, 0);
            assert_eq!(g.context_messages, g.path_messages);
        }
        Variant::Compact => {
            assert!(compactions >= 1, "{g:?}");
            assert!(ctx.messages[0].starts_with("{\"role\":\"compactionSummary\""));
            assert!(g.context_messages < g.path_messages);
        }
    }
    // The fixtures' inline images went to the blob store (no missing blob above) and come
    // back in the whole path's context.
    assert!(g.images > 0);
    assert!(!std::fs::read_to_string(&g.path)
        .unwrap()
        .contains("\"data\":\"iVBOR"));
    if variant == Variant::NoCompact {
        assert!(ctx
            .to_json()
            .contains("\"type\":\"image\",\"data\":\"iVBOR"));
    }
    drop(ctx);
    drop(s);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn nocompact_session_opens_cleanly_with_the_whole_path_as_context() {
    check(Variant::NoCompact);
}

#[test]
fn compact_session_opens_cleanly_with_the_predicted_context() {
    check(Variant::Compact);
}
