//! Deterministic generator of real-content sessions for the benchmark (`scripts/bench`,
//! `bench/README.md`): the four real fixtures (`tests/fixtures/real/*.jsonl`) replayed
//! in order, again and again, as one long v3 session, as if the agent had kept working.
//!
//! ```sh
//! cargo run --release --example gen_real -- --out target/bench/data \
//!     --fixtures tests/fixtures/real --session 100MB:nocompact --session 100MB:compact [--seed 42]
//! ```
//!
//! - The fixtures are v1 files: each is loaded by the core (which migrates it and splits
//!   glued records), its inline images are moved to the blob store as the agent's writer
//!   does (`<out>/real/agent/blobs/`), and its compactions are dropped (their children are
//!   re-parented onto the compaction's parent).
//! - Every copy of an entry gets a fresh unique 8-hex id; a fixture's roots hang under the
//!   previous copy's leaf, so the result is one long path (side branches, if a fixture had
//!   any, stay side branches: parents are remapped within a copy). Timestamps are shifted
//!   copy by copy so that they increase (a message's own `timestamp` moves by the same
//!   amount); `targetId` / `fromId` are remapped too.
//! - `nocompact`: no compaction at all, the context is the whole path.
//! - `compact`: a compaction at the fixtures' rhythm. Theirs come when the context reaches
//!   848–941 kB of entry lines (~175–186k tokens) and keep the last 100–165 kB (66–108
//!   entries) from a user or assistant message; here, once the context since the last
//!   compaction passes a threshold drawn in 845–940 kB, a compaction follows the next
//!   assistant message, keeping the last 100–165 kB (drawn) back to a user or assistant
//!   message after the previous compaction. Summary and `tokensBefore` are the fixtures'
//!   own, in turn.
//!
//! Each session records its parameters in `<out>/real-<SIZE>-<VARIANT>.json` and is
//! reused when they match (the fixtures' sha256 is one of them); `<out>/real-manifest.json`
//! lists the sessions of the last call and is printed on stdout, with what the generator
//! knows about each (entries, entries and messages on the leaf's path, the number of
//! messages the leaf's context must have).
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use xcsh_session::fs::FsStorage;
use xcsh_session::internals::{
    iso_from_ms, prepare_for_persistence, quote, sha256_hex, Transforms,
};
use xcsh_session::paths::session_file_name;
use xcsh_session::{BlobError, BlobStore, MemoryStorage, Session};

/// Bump when the output changes: cached sessions are then regenerated.
pub const GENERATOR_VERSION: u32 = 1;
/// 2026-02-02T09:00:00.000Z: where the first copy starts.
const START_MS: i64 = 1_770_022_800_000;
const EPOCH_2015_MS: i64 = 1_420_070_400_000;
/// Between two copies (and before the first entry): the agent's user coming back.
const COPY_GAP_MS: i64 = 90_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Variant {
    NoCompact,
    Compact,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::NoCompact => "nocompact",
            Variant::Compact => "compact",
        }
    }
    pub fn parse(s: &str) -> Option<Variant> {
        match s {
            "nocompact" => Some(Variant::NoCompact),
            "compact" => Some(Variant::Compact),
            _ => None,
        }
    }
}

/// splitmix64 (the same on every machine).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

// ---------------------------------------------------------------- the fixtures

/// One fixture entry, ready to be copied.
struct Tpl {
    ty: String,
    old_id: String,
    /// After dropping compactions: the nearest kept ancestor.
    old_parent: Option<String>,
    ts_ms: i64,
    /// The entry's other keys (not type, id, parentId, timestamp), in the file's order.
    rest: Map<String, Value>,
    is_message: bool,
    /// User or assistant message: where a compaction may start keeping.
    cut_point: bool,
    is_assistant: bool,
    /// On the path from the fixture's root to its last entry.
    on_main: bool,
    images: u64,
}

struct Fixture {
    entries: Vec<Tpl>,
    first_ts: i64,
}

struct Summary {
    summary: Value,
    tokens_before: Value,
}

struct Source {
    fixtures: Vec<Fixture>,
    summaries: Vec<Summary>,
}

/// `Date.parse` of the agent's `YYYY-MM-DDTHH:MM:SS(.mmm)Z` (days from civil, Hinnant).
fn ms_from_iso(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> { s.get(r)?.parse().ok() };
    if b.len() < 20 || b[4] != b'-' || b[10] != b'T' {
        return None;
    }
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let ms = if b[19] == b'.' { num(20..23)? } else { 0 };
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + hh) * 60 + mm) * 60_000 + ss * 1000 + ms)
}

/// Image blocks (`"type":"image"` objects) in a value.
fn count_images(v: &Value) -> u64 {
    match v {
        Value::Object(o) => {
            u64::from(o.get("type").and_then(Value::as_str) == Some("image"))
                + o.values().map(count_images).sum::<u64>()
        }
        Value::Array(a) => a.iter().map(count_images).sum(),
        _ => 0,
    }
}

/// Load the fixtures (sorted by name), images externalized into `blobs`.
fn load_fixtures(files: &[PathBuf], blobs: &BlobStore) -> Source {
    let mut fixtures = Vec::new();
    let mut summaries = Vec::new();
    for file in files {
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let session = Session::from_string(Rc::new(MemoryStorage::new()), text, "/nowhere");
        let mut values = Vec::new();
        for e in session.entries() {
            let mut put = |bytes: &[u8]| {
                blobs.put(bytes).map(|p| p.reference).map_err(|e| match e {
                    BlobError::Storage(s) => s,
                    other => panic!("blob: {other}"),
                })
            };
            let json = prepare_for_persistence(e.json(), &mut put, Transforms::Lossless)
                .expect("externalize images");
            let v: Value = serde_json::from_str(&json).expect("entry JSON");
            values.push(v);
        }
        // Drop compactions: who hung under one hangs under its parent.
        let mut skip_to: HashMap<String, Option<String>> = HashMap::new();
        let mut kept: Vec<Value> = Vec::new();
        for v in values {
            let id = v["id"].as_str().unwrap_or_default().to_string();
            let parent = v["parentId"].as_str().map(str::to_string);
            if v["type"] == "compaction" {
                summaries.push(Summary {
                    summary: v["summary"].clone(),
                    tokens_before: v["tokensBefore"].clone(),
                });
                let up = parent.and_then(|p| skip_to.get(&p).cloned().unwrap_or(Some(p)));
                skip_to.insert(id, up);
            } else {
                kept.push(v);
            }
        }
        let mut entries = Vec::new();
        for v in kept {
            let Value::Object(mut o) = v else { continue };
            let ty = o
                .remove("type")
                .and_then(|t| t.as_str().map(str::to_string))
                .unwrap_or_default();
            let old_id = o
                .remove("id")
                .and_then(|t| t.as_str().map(str::to_string))
                .unwrap_or_default();
            let parent = o
                .remove("parentId")
                .and_then(|t| t.as_str().map(str::to_string));
            let old_parent = parent.and_then(|p| skip_to.get(&p).cloned().unwrap_or(Some(p)));
            let ts = o.remove("timestamp");
            let ts_ms = ts
                .as_ref()
                .and_then(Value::as_str)
                .and_then(ms_from_iso)
                .unwrap_or(0);
            let role = o
                .get("message")
                .and_then(|m| m.get("role"))
                .and_then(Value::as_str);
            let is_message = ty == "message" && o.get("message").is_some_and(Value::is_object);
            entries.push(Tpl {
                cut_point: is_message && matches!(role, Some("user" | "assistant")),
                is_assistant: is_message && role == Some("assistant"),
                images: count_images(&Value::Object(o.clone())),
                ty,
                old_id,
                old_parent,
                ts_ms,
                rest: o,
                is_message,
                on_main: false,
            });
        }
        // The fixture's main line: its last entry and that entry's ancestors.
        let index: HashMap<&str, usize> = entries
            .iter()
            .enumerate()
            .map(|(i, t)| (t.old_id.as_str(), i))
            .collect();
        let mut main = vec![false; entries.len()];
        let mut at = entries.len().checked_sub(1);
        while let Some(i) = at {
            if main[i] {
                break;
            }
            main[i] = true;
            at = entries[i]
                .old_parent
                .as_deref()
                .and_then(|p| index.get(p).copied());
        }
        for (t, m) in entries.iter_mut().zip(main) {
            t.on_main = m;
        }
        let first_ts = entries
            .iter()
            .map(|t| t.ts_ms)
            .filter(|&t| t > 0)
            .min()
            .unwrap_or(0);
        fixtures.push(Fixture { entries, first_ts });
    }
    Source {
        fixtures,
        summaries,
    }
}

// ---------------------------------------------------------------- writing

/// What one generated session holds (for the manifest and the test).
#[derive(Debug, Default, Clone)]
pub struct Generated {
    pub path: PathBuf,
    pub bytes: u64,
    pub entries: u64,
    /// Entries on the leaf's path (root → last entry).
    pub path_entries: u64,
    /// Message entries on the leaf's path.
    pub path_messages: u64,
    /// How many messages the leaf's context has (compaction summary included).
    pub context_messages: u64,
    pub compactions: u64,
    /// Image blocks written (each a blob reference).
    pub images: u64,
    /// How many times the fixtures were replayed (a fraction for the last pass).
    pub copies: f64,
}

/// A main-path entry since the last compaction.
struct MainRec {
    id: String,
    bytes: u64,
    is_message: bool,
    cut_point: bool,
}

struct Writer {
    out: BufWriter<fs::File>,
    rng: Rng,
    ids: HashSet<u32>,
    g: Generated,
    last_ms: i64,
    /// Main-path entries after the last compaction (or from the start).
    since: Vec<MainRec>,
    /// Bytes and messages kept by the last compaction (0 without one).
    kept_bytes: u64,
    kept_messages: u64,
    threshold: u64,
}

impl Writer {
    fn new_id(&mut self) -> String {
        loop {
            let v = self.rng.next() as u32;
            if self.ids.insert(v) {
                return format!("{v:08x}");
            }
        }
    }

    fn line(&mut self, line: &str) {
        self.out.write_all(line.as_bytes()).expect("write");
        self.out.write_all(b"\n").expect("write");
        self.g.bytes += line.len() as u64 + 1;
    }

    /// Write an entry: type, id, parentId, timestamp, then its other keys.
    fn entry(
        &mut self,
        ty: &str,
        parent: Option<&str>,
        ms: i64,
        rest: Map<String, Value>,
    ) -> (String, u64) {
        let id = self.new_id();
        let mut o = Map::with_capacity(rest.len() + 4);
        o.insert("type".into(), Value::String(ty.into()));
        o.insert("id".into(), Value::String(id.clone()));
        o.insert(
            "parentId".into(),
            parent.map_or(Value::Null, |p| Value::String(p.into())),
        );
        o.insert("timestamp".into(), Value::String(iso_from_ms(ms)));
        o.extend(rest);
        let line = serde_json::to_string(&Value::Object(o)).expect("serialize");
        self.line(&line);
        self.g.entries += 1;
        self.last_ms = ms;
        (id, line.len() as u64 + 1)
    }

    fn context_bytes(&self) -> u64 {
        self.kept_bytes + self.since.iter().map(|r| r.bytes).sum::<u64>()
    }

    /// A compaction under `parent` (the last main entry), keeping 100–165 kB back to a cut
    /// point after the previous compaction. Returns its id.
    fn compaction(&mut self, parent: &str, summary: &Summary) -> String {
        let keep = self.rng.range(100_000, 165_000);
        let mut first = self.since.len() - 1;
        let mut acc = 0;
        for i in (0..self.since.len()).rev() {
            acc += self.since[i].bytes;
            first = i;
            if acc >= keep {
                break;
            }
        }
        while first > 0 && !self.since[first].cut_point {
            first -= 1;
        }
        let kept = &self.since[first..];
        let first_kept = kept[0].id.clone();
        let kept_bytes = kept.iter().map(|r| r.bytes).sum();
        let kept_messages = kept.iter().filter(|r| r.is_message).count() as u64;
        let mut rest = Map::new();
        rest.insert("summary".into(), summary.summary.clone());
        rest.insert("firstKeptEntryId".into(), Value::String(first_kept));
        rest.insert("tokensBefore".into(), summary.tokens_before.clone());
        let ms = self.last_ms + 20_000;
        let (id, _) = self.entry("compaction", Some(parent), ms, rest);
        self.g.compactions += 1;
        self.g.path_entries += 1;
        self.kept_bytes = kept_bytes;
        self.kept_messages = kept_messages;
        self.since.clear();
        self.threshold = self.rng.range(845_000, 940_000);
        id
    }
}

/// Rewrite the ids an entry names (`targetId`, `fromId`) into this copy's.
fn remap_refs(rest: &mut Map<String, Value>, ids: &HashMap<&str, String>) {
    for key in ["targetId", "fromId"] {
        if let Some(Value::String(s)) = rest.get_mut(key) {
            if let Some(new) = ids.get(s.as_str()) {
                *s = new.clone();
            }
        }
    }
}

fn session_id(rng: &mut Rng, ms: i64) -> String {
    let t = (ms - EPOCH_2015_MS).max(0) as u64;
    format!("{:016x}", (t << 22) | (rng.next() & 0x3F_FFFF))
}

/// Write one session of about `target` bytes into `<agent>/sessions/--work-real--/`,
/// images into `<agent>/blobs/`.
pub fn generate(
    fixture_files: &[PathBuf],
    agent: &Path,
    target: u64,
    variant: Variant,
    seed: u64,
) -> Generated {
    let blobs_dir = agent.join("blobs");
    let dir = agent.join("sessions").join("--work-real--");
    fs::create_dir_all(&blobs_dir).expect("mkdir");
    fs::create_dir_all(&dir).expect("mkdir");
    let storage = FsStorage::new();
    let blobs = BlobStore::new(&storage, blobs_dir.to_string_lossy().into_owned());
    let src = load_fixtures(fixture_files, &blobs);
    assert!(
        variant == Variant::NoCompact || !src.summaries.is_empty(),
        "the fixtures have no compaction to take a summary from"
    );

    let mut rng = Rng(seed ^ target.wrapping_mul(0xA076_1D64_78BD_642F) ^ variant as u64);
    rng.next();
    let start_ms = START_MS + (target % 86_400_000) as i64 + variant as i64 * 3_600_000;
    let sid = session_id(&mut rng, start_ms);
    let iso = iso_from_ms(start_ms);
    let path = dir.join(session_file_name(&iso, &sid));
    let file = fs::File::create(&path).expect("create session file");
    let threshold = rng.range(845_000, 940_000);
    let mut w = Writer {
        out: BufWriter::with_capacity(1 << 20, file),
        rng,
        ids: HashSet::new(),
        g: Generated {
            path: path.clone(),
            ..Generated::default()
        },
        last_ms: start_ms,
        since: Vec::new(),
        kept_bytes: 0,
        kept_messages: 0,
        threshold,
    };
    w.line(&format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{sid}\",\"timestamp\":\"{iso}\",\"cwd\":\"/work/real\"}}"
    ));

    let total: usize = src.fixtures.iter().map(|f| f.entries.len()).sum();
    let mut done = 0usize;
    let mut tail: Option<String> = None;
    let mut next_summary = 0usize;
    // A compaction was just written: the next main entry hangs under it.
    let mut pending_compaction = false;
    'outer: loop {
        for fx in &src.fixtures {
            let delta = w.last_ms + COPY_GAP_MS - fx.first_ts;
            let mut ids: HashMap<&str, String> = HashMap::new();
            for t in &fx.entries {
                let parent = match &t.old_parent {
                    _ if t.on_main && pending_compaction => tail.clone(),
                    None => tail.clone(),
                    Some(p) => ids.get(p.as_str()).cloned().or_else(|| tail.clone()),
                };
                pending_compaction &= !t.on_main;
                let mut rest = t.rest.clone();
                remap_refs(&mut rest, &ids);
                if let Some(Value::Object(m)) = rest.get_mut("message") {
                    if let Some(ms) = m.get("timestamp").and_then(Value::as_i64) {
                        m.insert("timestamp".into(), Value::from(ms + delta));
                    }
                }
                let ms = if t.ts_ms > 0 {
                    (t.ts_ms + delta).max(w.last_ms + 1)
                } else {
                    w.last_ms + 1
                };
                let (id, bytes) = w.entry(&t.ty, parent.as_deref(), ms, rest);
                ids.insert(&t.old_id, id.clone());
                w.g.images += t.images;
                done += 1;
                if !t.on_main {
                    continue;
                }
                tail = Some(id.clone());
                w.g.path_entries += 1;
                w.g.path_messages += u64::from(t.is_message);
                w.since.push(MainRec {
                    id: id.clone(),
                    bytes,
                    is_message: t.is_message,
                    cut_point: t.cut_point,
                });
                if w.g.bytes >= target {
                    break 'outer;
                }
                if variant == Variant::Compact && t.is_assistant && w.context_bytes() >= w.threshold
                {
                    let summary = &src.summaries[next_summary % src.summaries.len()];
                    next_summary += 1;
                    tail = Some(w.compaction(&id, summary));
                    pending_compaction = true;
                }
            }
        }
    }
    w.out.flush().expect("flush");
    w.g.context_messages = if w.g.compactions > 0 {
        1 + w.kept_messages + w.since.iter().filter(|r| r.is_message).count() as u64
    } else {
        w.g.path_messages
    };
    w.g.copies = done as f64 / total as f64;
    w.g
}

// ---------------------------------------------------------------- artifacts

fn parse_size(s: &str) -> Option<u64> {
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let mult = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return None,
    };
    Some(num.parse::<u64>().ok()? * mult)
}

/// The stored info of a session when its parameters match and its file is intact.
fn reusable(info_path: &Path, params: &Value) -> Option<String> {
    let text = fs::read_to_string(info_path).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    if v.get("params")? != params {
        return None;
    }
    let p = v.get("path")?.as_str()?;
    (fs::metadata(p).ok()?.len() == v.get("bytes")?.as_u64()?).then(|| text.trim().to_string())
}

fn abs(p: &Path) -> String {
    fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

fn gen_cached(
    out: &Path,
    fixtures: &[PathBuf],
    seed: u64,
    label: &str,
    variant: Variant,
) -> String {
    let target = parse_size(label).unwrap_or_else(|| usage());
    let name = format!("real-{label}-{}", variant.name());
    let info_path = out.join(format!("{name}.json"));
    let mut all = Vec::new();
    for f in fixtures {
        all.extend(fs::read(f).expect("read fixture"));
    }
    let params = serde_json::json!({
        "generator": GENERATOR_VERSION, "seed": seed, "target": target,
        "variant": variant.name(), "fixturesSha256": sha256_hex(&all),
    });
    if let Some(info) = reusable(&info_path, &params) {
        eprintln!("[gen_real] {name}: reusing");
        return info;
    }
    // A stale file of an earlier run with other parameters.
    if let Some(p) = fs::read_to_string(&info_path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("path").and_then(Value::as_str).map(str::to_string))
    {
        let _ = fs::remove_file(p);
    }
    let agent = out.join("real").join("agent");
    let t = std::time::Instant::now();
    let g = generate(fixtures, &agent, target, variant, seed);
    eprintln!(
        "[gen_real] {name}: {} bytes, {} entries, {} compactions in {:.1?}",
        g.bytes,
        g.entries,
        g.compactions,
        t.elapsed()
    );
    let info = format!(
        "{{\"params\":{params},\"path\":{},\"agentDir\":{},\"bytes\":{},\"variant\":\"{}\",\"entries\":{},\"pathEntries\":{},\"pathMessages\":{},\"contextMessages\":{},\"compactions\":{},\"images\":{},\"copies\":{:.2}}}",
        quote(&abs(&g.path)),
        quote(&abs(&agent)),
        g.bytes,
        variant.name(),
        g.entries,
        g.path_entries,
        g.path_messages,
        g.context_messages,
        g.compactions,
        g.images,
        g.copies
    );
    fs::write(&info_path, format!("{info}\n")).expect("write info");
    info
}

fn usage() -> ! {
    eprintln!(
        "usage: gen_real --out DIR --fixtures DIR [--seed N] --session SIZE:nocompact|compact ..."
    );
    std::process::exit(2);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut out, mut fixtures_dir, mut seed, mut sessions) = (None, None, 42u64, Vec::new());
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(val())),
            "--fixtures" => fixtures_dir = Some(PathBuf::from(val())),
            "--seed" => seed = val().parse().unwrap_or_else(|_| usage()),
            "--session" => {
                let v = val();
                let (size, variant) = v.split_once(':').unwrap_or_else(|| usage());
                sessions.push((
                    size.to_string(),
                    Variant::parse(variant).unwrap_or_else(|| usage()),
                ));
            }
            _ => usage(),
        }
    }
    let (Some(out), Some(fixtures_dir)) = (out, fixtures_dir) else {
        usage()
    };
    fs::create_dir_all(&out).expect("mkdir out");
    let fixtures = fixture_files(&fixtures_dir);
    let items: Vec<String> = sessions
        .iter()
        .map(|(size, v)| {
            format!(
                "\"{size}-{}\":{}",
                v.name(),
                gen_cached(&out, &fixtures, seed, size, *v)
            )
        })
        .collect();
    let manifest = format!(
        "{{\"generator\":{GENERATOR_VERSION},\"seed\":{seed},\"sessions\":{{{}}}}}",
        items.join(",")
    );
    fs::write(out.join("real-manifest.json"), format!("{manifest}\n")).expect("write manifest");
    println!("{manifest}");
}

/// The `*.jsonl` files of a directory, sorted by name.
pub fn fixture_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}
