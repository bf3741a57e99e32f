//! `Storage::read_range`: every storage answers a range as a slice of the whole file
//! would be (short at its end, empty past it, `not-found` for a missing file), so an open
//! that reads only the lines it needs sees exactly the bytes a whole read would.

use xcsh_session::storage::{range_of, MemoryStorage, Storage};

/// Bytes that are not all alike, so a range read from the wrong place shows.
fn content(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

/// Offsets and lengths around the edges of a file of `len` bytes.
fn probes(len: u64) -> Vec<(u64, u64)> {
    let points = [
        0,
        1,
        2,
        len / 3,
        len.saturating_sub(1),
        len,
        len + 1,
        len + 4096,
        u64::MAX,
    ];
    let lens = [0, 1, 7, 4096, len, len + 1, u64::MAX];
    points
        .iter()
        .flat_map(|&o| lens.iter().map(move |&n| (o, n)))
        .collect()
}

fn check(storage: &dyn Storage, path: &str, data: &[u8]) {
    assert_eq!(storage.read(path).unwrap(), data);
    for (offset, len) in probes(data.len() as u64) {
        let got = storage.read_range(path, offset, len).unwrap();
        let start = (offset.min(data.len() as u64)) as usize;
        let end = (offset.saturating_add(len).min(data.len() as u64)) as usize;
        let want = &data[start..end.max(start)];
        assert_eq!(
            got,
            want,
            "read_range({offset}, {len}) of {} bytes",
            data.len()
        );
        assert_eq!(range_of(data, offset, len), want);
    }
    let missing = format!("{path}.missing");
    assert!(storage
        .read_range(&missing, 0, 10)
        .unwrap_err()
        .is_not_found());
}

#[test]
fn the_memory_storage_reads_a_range_as_a_slice_of_the_file() {
    let storage = MemoryStorage::new();
    storage.mkdir_all("/d").unwrap();
    for len in [0, 1, 100, 70_001] {
        let path = format!("/d/f{len}");
        let data = content(len);
        storage.write(&path, &data).unwrap();
        check(&storage, &path, &data);
    }
}

#[cfg(all(unix, feature = "native-fs"))]
#[test]
fn the_filesystem_storage_reads_a_range_by_position() {
    let dir = std::env::temp_dir().join(format!("xcsh-read-range-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let storage: std::rc::Rc<dyn Storage> = std::rc::Rc::new(xcsh_session::fs::FsStorage::new());
    // Larger than one read of the OS, so the positioned read has to loop.
    for len in [0, 1, 100, 70_001, 5 << 20] {
        let path = dir.join(format!("f{len}"));
        let data = content(len);
        std::fs::write(&path, &data).unwrap();
        check(&*storage, path.to_str().unwrap(), &data);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
