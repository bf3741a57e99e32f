//! Native measurements for the benchmark (`scripts/bench`, `bench/README.md`). Each
//! command prints one JSON object on stdout; times are milliseconds (wall clock, plus the
//! process's CPU time, all threads, on Linux).
//!
//! ```text
//! bench_native open   <FILE> <AGENT_DIR> <WARMUP> <REPS>  open read-only + stream the context's JSON
//! bench_native cat    <FILE> <WARMUP> <REPS>              read in 128 KiB chunks, discard (cat)
//! bench_native phases <FILE> <AGENT_DIR> <REPS>           the same, phase by phase (medians)
//! bench_native rss    <FILE> <AGENT_DIR>                  one open; peak RSS (VmHWM)
//! bench_native context <FILE> <AGENT_DIR> <scan|off|use> <WARMUP> <REPS>  through the index, streamed
//! bench_native append <BIG> <SMALL> <TMP_DIR> <REPS>      append_message + flush, both sizes
//! bench_native recent <AGENT_DIR> <PROJECT_DIR> <REPS>    recent_sessions, bytes read per file
//! bench_native parsers <MB> <REPS> <FILE>...               hand-written passes vs libraries
//! ```
use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;
use std::time::Instant;
use xcsh_session::fs::FsStorage;
use xcsh_session::internals;
use xcsh_session::internals::quote;
use xcsh_session::listing::{self, RecentSessionInfo, DEFAULT_RECENT_LIMIT};
use xcsh_session::storage::{DirEntry, FileStat, Layer, Storage, StorageResult};
use xcsh_session::{OpenOptions, Persistence, Session};

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// CPU time of this process so far, all threads (ns):
/// `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`, which is exact (the /proc schedstat
/// counters only advance at scheduler ticks). All threads, because large files are read
/// and parsed on every core.
#[cfg(target_os = "linux")]
fn cpu_ns() -> Option<u64> {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec (64-bit time_t and long on 64-bit Linux).
    let rc = unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    (rc == 0 && cfg!(target_pointer_width = "64"))
        .then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(not(target_os = "linux"))]
fn cpu_ns() -> Option<u64> {
    None
}

/// A field of /proc/self/status in KiB (`VmHWM`, `VmRSS`).
fn status_kib(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn list(xs: &[f64]) -> String {
    let items: Vec<String> = xs.iter().map(|x| format!("{x:.3}")).collect();
    format!("[{}]", items.join(","))
}

fn opt(x: Option<u64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_else(|| "null".into())
}

fn die(msg: impl std::fmt::Display) -> ! {
    eprintln!("bench_native: {msg}");
    std::process::exit(1);
}

fn read_only(agent_dir: &str) -> OpenOptions {
    OpenOptions {
        persistence: Persistence::ReadOnly,
        agent_dir: agent_dir.to_string(),
        cwd: String::new(),
    }
}

/// Load + migrate + index + build the context, and stream its JSON through a 1 MiB
/// buffer (as the CLI writes it to stdout; nothing holds the whole text). Returns the
/// session, the JSON's length and the number of messages.
fn open_context(file: &str, agent_dir: &str) -> (Session, usize, usize) {
    let s = Session::open(Rc::new(FsStorage::new()), file, &read_only(agent_dir))
        .unwrap_or_else(|e| die(e));
    let mut reader = s.context().into_json_reader();
    let messages = reader.context().messages.len();
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => bytes += std::hint::black_box(&buf[..n]).len(),
            Err(e) => die(e),
        }
    }
    drop(reader);
    (s, bytes, messages)
}

/// The context's JSON as one text, for its hash (outside the timed region).
fn context_json(s: &Session) -> String {
    s.context().to_json()
}

/// Wall and CPU times (ms) of the timed repetitions.
#[derive(Default)]
struct Times {
    wall: Vec<f64>,
    cpu: Vec<f64>,
}

impl Times {
    /// Run `f`; its times are kept when `keep` (past the warmup).
    fn run<T>(&mut self, keep: bool, f: impl FnOnce() -> T) -> T {
        let c0 = cpu_ns();
        let t = Instant::now();
        let out = f();
        let elapsed = ms(t.elapsed());
        let c1 = cpu_ns();
        if keep {
            self.wall.push(elapsed);
            if let (Some(a), Some(b)) = (c0, c1) {
                self.cpu.push((b - a) as f64 / 1e6);
            }
        }
        out
    }
}

fn cmd_open(file: &str, agent_dir: &str, warmup: usize, reps: usize) {
    let mut times = Times::default();
    let mut last = None;
    for i in 0..warmup + reps {
        let (s, bytes, messages) = times.run(i >= warmup, || open_context(file, agent_dir));
        // Hashing and freeing happen outside the timed region (as in the JS measurements).
        let json = context_json(&s);
        assert_eq!(
            json.len(),
            bytes,
            "the streamed context and to_json differ in length"
        );
        last = Some((s.entries().len(), messages, json));
    }
    let (entries, messages, json) = last.unwrap_or_else(|| die("no repetitions"));
    println!(
        "{{\"wallMs\":{},\"cpuMs\":{},\"entries\":{entries},\"messages\":{messages},\"contextBytes\":{},\"contextSha256\":\"{}\"}}",
        list(&times.wall),
        list(&times.cpu),
        json.len(),
        xcsh_session::internals::sha256_hex(json.as_bytes())
    );
}

/// `context <file> <agent-dir> <scan|off|use> <warmup> <reps>`: the context of a file's
/// last entry opened through its index (`xcsh_session::api::open_for_context`), streamed
/// as `open` streams it: `scan` deletes the cached index before each repetition (a first
/// open, which writes it), `off` neither reads nor writes it, `use` reopens with it.
fn cmd_context(file: &str, agent_dir: &str, mode: &str, warmup: usize, reps: usize) {
    let cache = match mode {
        "off" => xcsh_session::IndexCache::Off,
        "scan" | "use" => xcsh_session::IndexCache::Use,
        other => die(format!("expected scan, off or use, not {other:?}")),
    };
    let cache_dir = format!("{agent_dir}/cache/index");
    let mut times = Times::default();
    let mut last = None;
    for i in 0..warmup + reps {
        if mode == "scan" {
            let _ = std::fs::remove_dir_all(&cache_dir);
        }
        // The JSON streams into a reused buffer, never held whole: the peak memory is the
        // open's. It is streamed again, untimed, for its hash and message count.
        let stream = |opened: &xcsh_session::OpenedContext, each: &mut dyn FnMut(&[u8])| {
            let mut reader = opened.json_reader();
            let mut buf = Vec::with_capacity(1 << 20);
            let mut bytes = 0;
            loop {
                buf.clear();
                match reader.read_into(&mut buf, 1 << 20) {
                    Ok(0) => return bytes,
                    Ok(n) => {
                        bytes += n;
                        each(std::hint::black_box(&buf));
                    }
                    Err(e) => die(e),
                }
            }
        };
        let (opened, bytes) = times.run(i >= warmup, || {
            let storage = Rc::new(FsStorage::new());
            let opened = xcsh_session::api::open_for_context(storage, file, agent_dir, None, cache)
                .unwrap_or_else(|e| die(e));
            let bytes = stream(&opened, &mut |_| {});
            (opened, bytes)
        });
        use sha2::Digest;
        let mut hash = sha2::Sha256::new();
        stream(&opened, &mut |b| hash.update(b));
        let sha: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let messages = opened.json_reader().messages().unwrap_or_else(|e| die(e));
        last = Some((opened.through_index(), messages, bytes, sha));
    }
    let (through, messages, bytes, sha) = last.unwrap_or_else(|| die("no repetitions"));
    println!(
        "{{\"wallMs\":{},\"cpuMs\":{},\"throughIndex\":{through},\"messages\":{messages},\"contextBytes\":{bytes},\"contextSha256\":\"{sha}\",\"vmHwmKiB\":{}}}",
        list(&times.wall),
        list(&times.cpu),
        status_kib("VmHWM").map_or("null".to_string(), |k| k.to_string())
    );
}

/// What `cat file > /dev/null` does, in process (so its CPU time can be measured too).
fn cmd_cat(file: &str, warmup: usize, reps: usize) {
    let mut times = Times::default();
    let mut buf = vec![0u8; 128 * 1024];
    let mut total = 0u64;
    for i in 0..warmup + reps {
        // Closing the file is not timed.
        let (n, _file) = times.run(i >= warmup, || {
            let mut f = std::fs::File::open(file).unwrap_or_else(|e| die(e));
            let mut total = 0u64;
            loop {
                match f.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => total += n as u64,
                    Err(e) => die(e),
                }
            }
            (total, f)
        });
        total = n;
    }
    println!(
        "{{\"wallMs\":{},\"cpuMs\":{},\"bytes\":{total}}}",
        list(&times.wall),
        list(&times.cpu)
    );
}

/// One open, phase by phase.
fn phases_once(file: &str, agent_dir: &str) -> (Vec<(&'static str, f64)>, usize, usize) {
    let storage = Rc::new(FsStorage::new());
    let mut phases: Vec<(&'static str, f64)> = Vec::new();
    let t = Instant::now();
    let bytes = storage.read(file).unwrap_or_else(|e| die(e));
    phases.push(("read", ms(t.elapsed())));
    let t = Instant::now();
    let text = String::from_utf8(bytes).unwrap_or_else(|e| die(e));
    phases.push(("utf8Check", ms(t.elapsed())));
    let t = Instant::now();
    let records = internals::parse_lenient(&text).records.len();
    phases.push(("jsonlSplitAlone", ms(t.elapsed())));
    let t = Instant::now();
    let s = Session::from_string(storage.clone(), text, agent_dir);
    phases.push(("loadParseIndex", ms(t.elapsed())));
    let t = Instant::now();
    let ctx = s.context();
    phases.push(("buildContext", ms(t.elapsed())));
    let t = Instant::now();
    let json = ctx.to_json();
    phases.push(("toJson", ms(t.elapsed())));
    let t = Instant::now();
    drop(ctx);
    drop(s);
    phases.push(("drop", ms(t.elapsed())));
    (phases, records, json.len())
}

/// The phases of `open`: 1 untimed run, then the median of each phase over `reps` runs.
fn cmd_phases(file: &str, agent_dir: &str, reps: usize) {
    let (first, records, context_bytes) = phases_once(file, agent_dir);
    let mut runs: Vec<Vec<(&str, f64)>> = Vec::new();
    for _ in 0..reps {
        runs.push(phases_once(file, agent_dir).0);
    }
    let items: Vec<String> = first
        .iter()
        .enumerate()
        .map(|(i, (k, v))| {
            let mut xs: Vec<f64> = runs.iter().map(|r| r[i].1).collect();
            let m = if xs.is_empty() { *v } else { median(&mut xs) };
            format!("\"{k}\":{m:.3}")
        })
        .collect();
    let cold: Vec<String> = first
        .iter()
        .map(|(k, v)| format!("\"{k}\":{v:.3}"))
        .collect();
    println!(
        "{{\"phasesMs\":{{{}}},\"firstRunPhasesMs\":{{{}}},\"runs\":{reps},\"records\":{records},\"contextBytes\":{context_bytes},\"note\":\"jsonlSplitAlone is also part of loadParseIndex\"}}",
        items.join(","),
        cold.join(",")
    );
}

fn cmd_rss(file: &str, agent_dir: &str) {
    let before = status_kib("VmHWM");
    let t = Instant::now();
    let (s, context_bytes, _) = open_context(file, agent_dir);
    let elapsed = ms(t.elapsed());
    let hwm = status_kib("VmHWM");
    let rss = status_kib("VmRSS");
    let file_bytes = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    println!(
        "{{\"vmHwmKiB\":{},\"vmHwmBeforeKiB\":{},\"vmRssAfterKiB\":{},\"fileBytes\":{file_bytes},\"contextBytes\":{},\"entries\":{},\"wallMs\":{elapsed:.3}}}",
        opt(hwm),
        opt(before),
        opt(rss),
        context_bytes,
        s.entries().len()
    );
}

fn cmd_append(big: &str, small: &str, tmp: &str, reps: usize) {
    let _ = std::fs::remove_dir_all(tmp);
    std::fs::create_dir_all(tmp).unwrap_or_else(|e| die(e));
    let agent_dir = format!("{tmp}/agent");
    let copy = |src: &str, name: &str| -> String {
        let dst = format!("{tmp}/{name}.jsonl");
        std::fs::copy(src, &dst).unwrap_or_else(|e| die(format!("copy {src}: {e}")));
        // The copy is made durable before timing: the appends' fsync must not pay for it.
        std::fs::File::open(&dst)
            .and_then(|f| f.sync_all())
            .unwrap_or_else(|e| die(e));
        dst
    };
    let (big_copy, small_copy) = (copy(big, "big"), copy(small, "small"));
    let open = |path: &str| -> (Session, f64) {
        let t = Instant::now();
        let s = Session::open(
            Rc::new(FsStorage::new()),
            path,
            &OpenOptions {
                persistence: Persistence::Persistent,
                agent_dir: agent_dir.clone(),
                cwd: "/work/bench".into(),
            },
        )
        .unwrap_or_else(|e| die(e));
        (s, ms(t.elapsed()))
    };
    let (mut sb, open_big) = open(&big_copy);
    let (mut ss, open_small) = open(&small_copy);
    let mut n = 0u64;
    let mut message = || {
        n += 1;
        format!(
            "{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"timestamp\":{}}}",
            quote(&format!(
                "Benchmark append {n}: please run the tests again and summarize the failures."
            )),
            1_767_700_000_000u64 + n
        )
    };
    // (append only, append + flush) per sample
    let mut samples: [Vec<(f64, f64)>; 2] = [Vec::new(), Vec::new()];
    let warmup = 2;
    for i in 0..warmup + reps {
        // Alternate the order so drift on a busy machine hits both sizes alike.
        let order = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        for which in order {
            let s = if which == 0 { &mut sb } else { &mut ss };
            let m = message();
            let t = Instant::now();
            s.append_message(&m).unwrap_or_else(|e| die(e));
            let appended = ms(t.elapsed());
            s.flush().unwrap_or_else(|e| die(e));
            let total = ms(t.elapsed());
            if i >= warmup {
                samples[which].push((appended, total));
            }
        }
    }
    let big_bytes = std::fs::metadata(&big_copy).map(|m| m.len()).unwrap_or(0);
    let small_bytes = std::fs::metadata(&small_copy).map(|m| m.len()).unwrap_or(0);
    drop(sb);
    drop(ss);
    let _ = std::fs::remove_dir_all(tmp);
    let part = |v: &[(f64, f64)]| {
        format!(
            "{{\"appendMs\":{},\"appendFlushMs\":{}}}",
            list(&v.iter().map(|x| x.0).collect::<Vec<_>>()),
            list(&v.iter().map(|x| x.1).collect::<Vec<_>>())
        )
    };
    println!(
        "{{\"big\":{},\"small\":{},\"bigBytes\":{big_bytes},\"smallBytes\":{small_bytes},\"openPersistentMs\":{{\"big\":{open_big:.3},\"small\":{open_small:.3}}}}}",
        part(&samples[0]),
        part(&samples[1])
    );
}

/// FsStorage that counts what is read.
struct Counting {
    inner: FsStorage,
    bytes: Cell<u64>,
    full_reads: Cell<u64>,
    prefix_reads: Cell<u64>,
    stats: Cell<u64>,
    lists: Cell<u64>,
}

impl Counting {
    fn new() -> Counting {
        Counting {
            inner: FsStorage::new(),
            bytes: Cell::new(0),
            full_reads: Cell::new(0),
            prefix_reads: Cell::new(0),
            stats: Cell::new(0),
            lists: Cell::new(0),
        }
    }
    fn reset(&self) {
        for c in [
            &self.bytes,
            &self.full_reads,
            &self.prefix_reads,
            &self.stats,
            &self.lists,
        ] {
            c.set(0);
        }
    }
    fn add(c: &Cell<u64>, n: u64) {
        c.set(c.get() + n);
    }
    /// (bytes read, prefix reads, full reads, stats, directory lists) since the reset.
    fn counts(&self) -> (u64, u64, u64, u64, u64) {
        (
            self.bytes.get(),
            self.prefix_reads.get(),
            self.full_reads.get(),
            self.stats.get(),
            self.lists.get(),
        )
    }
}

impl Layer for Counting {
    fn inner(&self) -> &dyn Storage {
        &self.inner
    }
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        let r = self.inner.read(path)?;
        Self::add(&self.full_reads, 1);
        Self::add(&self.bytes, r.len() as u64);
        Ok(r)
    }
    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>> {
        let r = self.inner.read_prefix(path, max_bytes)?;
        Self::add(&self.prefix_reads, 1);
        Self::add(&self.bytes, r.len() as u64);
        Ok(r)
    }
    fn read_range(&self, path: &str, offset: u64, len: u64) -> StorageResult<Vec<u8>> {
        let r = self.inner.read_range(path, offset, len)?;
        Self::add(&self.prefix_reads, 1);
        Self::add(&self.bytes, r.len() as u64);
        Ok(r)
    }
    fn list_dir(&self, path: &str) -> StorageResult<Vec<DirEntry>> {
        Self::add(&self.lists, 1);
        self.inner.list_dir(path)
    }
    fn stat(&self, path: &str) -> StorageResult<FileStat> {
        Self::add(&self.stats, 1);
        self.inner.stat(path)
    }
}

/// The recent list across every project: `recent_sessions` per project directory,
/// merged newest first.
fn recent_all(storage: &dyn Storage, agent_dir: &str) -> Vec<RecentSessionInfo> {
    let root = xcsh_session::paths::sessions_root(agent_dir);
    let dirs: Vec<String> = storage
        .list_dir(&root)
        .unwrap_or_else(|e| die(e))
        .into_iter()
        .filter(|d| d.is_dir)
        .map(|d| xcsh_session::storage::join(&root, &d.name))
        .collect();
    listing::recent_sessions_in(storage, &dirs, DEFAULT_RECENT_LIMIT).unwrap_or_else(|e| die(e))
}

/// The floor: for each `.jsonl` file, open, read at most 4096 bytes, stat.
fn prefix_floor(dirs: &[String]) -> (u64, u64) {
    let (mut files, mut bytes) = (0u64, 0u64);
    let mut buf = vec![0u8; 4096];
    for dir in dirs {
        for item in std::fs::read_dir(dir).unwrap_or_else(|e| die(e)).flatten() {
            let name = item.file_name();
            if !name.to_string_lossy().ends_with(".jsonl") {
                continue;
            }
            let mut f = std::fs::File::open(item.path()).unwrap_or_else(|e| die(e));
            let mut got = 0;
            while got < buf.len() {
                match f.read(&mut buf[got..]) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) => die(e),
                }
            }
            let _ = f.metadata().and_then(|m| m.modified());
            files += 1;
            bytes += got as u64;
        }
    }
    (files, bytes)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn cmd_recent(agent_dir: &str, project_dir: &str, reps: usize) {
    let storage = Counting::new();
    let root = xcsh_session::paths::sessions_root(agent_dir);
    let mut dirs: Vec<String> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| die(e))
        .flatten()
        .filter(|d| d.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .map(|d| d.path().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut one = Vec::new();
    let mut all = Vec::new();
    let mut floor_one = Vec::new();
    let mut floor_all = Vec::new();
    let mut counts = [(0u64, 0u64, 0u64, 0u64, 0u64); 2];
    let mut found = [0usize; 2];
    let mut floor_files = [0u64; 2];
    let warmup = 1;
    for i in 0..warmup + reps {
        storage.reset();
        let t = Instant::now();
        let r = listing::recent_sessions(&storage, project_dir, DEFAULT_RECENT_LIMIT)
            .unwrap_or_else(|e| die(e));
        let e1 = ms(t.elapsed());
        found[0] = r.len();
        counts[0] = storage.counts();
        storage.reset();
        let t = Instant::now();
        let r = recent_all(&storage, agent_dir);
        let e2 = ms(t.elapsed());
        found[1] = r.len();
        counts[1] = storage.counts();
        let t = Instant::now();
        floor_files[0] = prefix_floor(&[project_dir.to_string()]).0;
        let f1 = ms(t.elapsed());
        let t = Instant::now();
        floor_files[1] = prefix_floor(&dirs).0;
        let f2 = ms(t.elapsed());
        if i >= warmup {
            one.push(e1);
            all.push(e2);
            floor_one.push(f1);
            floor_all.push(f2);
        }
    }
    let part = |name: &str,
                wall: &[f64],
                floor: &[f64],
                c: (u64, u64, u64, u64, u64),
                found: usize,
                files: u64| {
        format!(
            "\"{name}\":{{\"wallMs\":{},\"floorWallMs\":{},\"files\":{files},\"bytesRead\":{},\"prefixReads\":{},\"fullReads\":{},\"stats\":{},\"listDirs\":{},\"results\":{found}}}",
            list(wall), list(floor), c.0, c.1, c.2, c.3, c.4
        )
    };
    println!(
        "{{{},{},\"medianMs\":{{\"one\":{:.3},\"all\":{:.3}}}}}",
        part("one", &one, &floor_one, counts[0], found[0], floor_files[0]),
        part("all", &all, &floor_all, counts[1], found[1], floor_files[1]),
        median(&mut one.clone()),
        median(&mut all.clone())
    );
}

/// The median time (ms) of `reps` runs of `f`, after one untimed run.
fn time_median(reps: usize, mut f: impl FnMut() -> usize) -> (f64, usize) {
    let mut out = f();
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            out = std::hint::black_box(f());
            ms(t.elapsed())
        })
        .collect();
    (median(&mut times), out)
}

/// The hand-written passes kept for speed against the library alternatives, on the entry
/// lines of real sessions (the headers dropped) repeated to `mb` MB: UTF-8 validation of
/// the whole text, and validating each line while picking the fields the core indexes.
fn cmd_parsers(mb: usize, reps: usize, files: &[String]) {
    let mut lines: Vec<String> = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| die(format!("{file}: {e}")));
        lines.extend(
            text.lines()
                .skip(1)
                .filter(|l| !l.is_empty())
                .map(String::from),
        );
    }
    if lines.is_empty() {
        die("no entry lines in the given files");
    }
    let mut text = String::new();
    'fill: loop {
        for line in &lines {
            if text.len() >= mb << 20 {
                break 'fill;
            }
            text.push_str(line);
            text.push('\n');
        }
    }
    let bytes = text.as_bytes();
    let all: Vec<&str> = text.lines().collect();
    let (utf8_simdutf8, _) =
        time_median(reps, || simdutf8::basic::from_utf8(bytes).is_ok() as usize);
    let (utf8_std, _) = time_median(reps, || std::str::from_utf8(bytes).is_ok() as usize);
    let (scan, scanned) = time_median(reps, || {
        all.iter()
            .filter(|l| internals::scan_entry_fields(l).is_some())
            .count()
    });
    let (serde, parsed) = time_median(reps, || {
        all.iter()
            .filter(|l| internals::serde_entry_fields(l).is_ok())
            .count()
    });
    // The fixtures hold a few lines that are not JSON (as real files do): both passes
    // must reject the same ones.
    if scanned != parsed {
        die(format!(
            "of {} lines the scanner vouched for {scanned} and serde_json parsed {parsed}",
            all.len()
        ));
    }
    println!(
        "{{\"bytes\":{},\"lines\":{},\"validLines\":{parsed},\"utf8Simdutf8Ms\":{utf8_simdutf8},\"utf8StdMs\":{utf8_std},\"fieldsScanMs\":{scan},\"fieldsSerdeMs\":{serde}}}",
        bytes.len(),
        all.len()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a = |i: usize| -> &str {
        args.get(i)
            .map(String::as_str)
            .unwrap_or_else(|| die("missing argument (see the doc comment)"))
    };
    let n = |i: usize| -> usize { a(i).parse().unwrap_or_else(|_| die("expected a number")) };
    match a(0) {
        "open" => cmd_open(a(1), a(2), n(3), n(4)),
        "phases" => cmd_phases(a(1), a(2), n(3)),
        "context" => cmd_context(a(1), a(2), a(3), n(4), n(5)),
        "cat" => cmd_cat(a(1), n(2), n(3)),
        "rss" => cmd_rss(a(1), a(2)),
        "append" => cmd_append(a(1), a(2), a(3), n(4)),
        "recent" => cmd_recent(a(1), a(2), n(3)),
        "parsers" => cmd_parsers(n(1), n(2), &args[3..]),
        other => die(format!("unknown command {other:?}")),
    }
}
