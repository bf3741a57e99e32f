//! A clone of the repository alone sets up and passes its tests: no file of the project
//! refers to the folder beside the repository that only the developers' machines have
//! (the real fixtures it once read from live in `tests/fixtures/real/`).

use std::path::{Path, PathBuf};

/// Built so that this file does not contain it.
fn outside_folder() -> String {
    ["..", "/", "shared"].concat()
}

/// Generated, installed or build output: not the project's own files.
const SKIP: [&str; 9] = [
    ".git",
    "target",
    "node_modules",
    "pkg",
    "vendor",
    "artifacts",
    "corpus",
    "coverage",
    ".tools",
];

/// Every file under `dir` (skipping `SKIP` folders) whose bytes contain `needle`.
fn files_mentioning(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable directory") {
            let entry = entry.expect("readable directory entry");
            let path = entry.path();
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() {
                let name = entry.file_name();
                if !SKIP.iter().any(|s| name == *s) {
                    stack.push(path);
                }
            } else if kind.is_file() {
                let bytes = std::fs::read(&path).expect("readable file");
                if memchr::memmem::find(&bytes, needle).is_some() {
                    found.push(path);
                }
            }
        }
    }
    found.sort();
    found
}

#[test]
fn no_file_of_the_repository_refers_to_the_shared_folder_beside_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = files_mentioning(root, outside_folder().as_bytes());
    assert!(
        found.is_empty(),
        "these files refer to {} (copy what they need into the repository): {found:#?}",
        outside_folder()
    );
}

#[test]
fn the_check_finds_a_mention_in_a_nested_file_and_skips_build_output() {
    let dir = std::env::temp_dir().join(format!("xcsh-self-contained-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("scripts/lib")).unwrap();
    std::fs::create_dir_all(dir.join("target/debug")).unwrap();
    let line = format!("FIXTURES=$ROOT/{}/fixtures\n", outside_folder());
    std::fs::write(dir.join("scripts/lib/env.sh"), &line).unwrap();
    std::fs::write(dir.join("target/debug/out.txt"), &line).unwrap();
    std::fs::write(dir.join("README.md"), "nothing here\n").unwrap();
    let found = files_mentioning(&dir, outside_folder().as_bytes());
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found, vec![dir.join("scripts/lib/env.sh")]);
}

#[test]
fn the_real_fixtures_are_in_the_repository() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real");
    for name in [
        "before-compaction.jsonl",
        "historical-compact.jsonl",
        "historical-session.jsonl",
        "large-session.jsonl",
        "README.md",
    ] {
        let meta = std::fs::metadata(dir.join(name)).expect(name);
        assert!(meta.len() > 0, "{name} is empty");
    }
}
