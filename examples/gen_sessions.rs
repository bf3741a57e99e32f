//! Deterministic generator of realistic v3 session files for the benchmark
//! (`scripts/bench`, `bench/README.md`). No randomness from the OS: everything, including
//! file names, ids, timestamps and mtimes, derives from `--seed`.
//!
//! ```sh
//! cargo run --release --example gen_sessions -- --out target/bench/data \
//!     --session 1KB --session 100MB --list 10000:100 [--seed 42]
//! ```
//!
//! - `--session SIZE` (repeatable; `1KB`, `10MB`, `100MB`, decimal units, `KiB`/`MiB` too):
//!   one session of about SIZE bytes in `<out>/agent/sessions/--work-bench--/`, blobs in
//!   `<out>/agent/blobs/`. Header + v3 entries as the agent writes them (compact JSON
//!   lines, 8-hex ids, ISO timestamps with ms, a parentId chain): user / assistant /
//!   toolResult messages with text, thinking and toolCall blocks, images externalized as
//!   `blob:sha256:<hex>`, side branches (about 1 entry in 10 starts one from an earlier
//!   entry), labels, custom entries, model / thinking-level changes and, from 200 kB on,
//!   two compactions on the final path whose `firstKeptEntryId` points back along it.
//! - `--list FILES:PROJECTS` (repeatable): an agent dir `<out>/list-FxP/agent` with FILES
//!   small sessions (1–64 kB, log-uniform) spread evenly over PROJECTS project directories
//!   `sessions/--work-pN--/<ts>_<16hex>.jsonl`, with varied mtimes (last 120 days).
//!
//! Each artifact records its parameters in `<out>/<artifact>.json` and is reused when they
//! match (delete the directory or bump GENERATOR_VERSION to regenerate). The combined
//! manifest is written to `<out>/manifest.json` and printed on stdout.
use std::collections::HashSet;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};
use xcsh_session::internals::compose_line;
use xcsh_session::internals::iso_from_ms;
use xcsh_session::internals::quote;
use xcsh_session::internals::sha256_hex;
use xcsh_session::paths::session_file_name;

/// Bump when the output format changes: cached data is then regenerated.
const GENERATOR_VERSION: u32 = 1;
/// 2026-01-05T09:00:00.000Z
const START_MS: i64 = 1_767_603_600_000;
const EPOCH_2015_MS: i64 = 1_420_070_400_000;

// ---------------------------------------------------------------- randomness

/// splitmix64: small, fast, and the same on every machine.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Rng {
        let mut r = Rng(seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F));
        r.next();
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.next() % (hi - lo + 1)
    }
    /// Log-uniform in `lo..=hi` (many small values, a few large ones).
    fn log_range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let (a, b) = ((lo.max(1) as f64).ln(), (hi as f64).ln());
        ((a + self.unit() * (b - a)).exp() as u64).clamp(lo, hi)
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

// ---------------------------------------------------------------- text

const WORDS: &[&str] = &[
    "the",
    "session",
    "file",
    "entry",
    "parser",
    "we",
    "need",
    "to",
    "update",
    "function",
    "returns",
    "value",
    "compaction",
    "branch",
    "leaf",
    "context",
    "message",
    "tool",
    "result",
    "error",
    "test",
    "build",
    "should",
    "when",
    "because",
    "config",
    "path",
    "index",
    "map",
    "string",
    "async",
    "await",
    "import",
    "export",
    "type",
    "interface",
    "this",
    "that",
    "with",
    "from",
    "into",
    "check",
    "fix",
    "bug",
    "agent",
    "model",
    "token",
    "stream",
    "render",
    "widget",
    "cache",
    "storage",
    "append",
    "flush",
    "read",
    "write",
    "line",
    "json",
    "is",
    "a",
    "an",
    "and",
    "or",
    "not",
    "it",
    "in",
    "of",
    "for",
    "on",
    "be",
    "can",
    "will",
    "then",
    "now",
    "also",
    "only",
    "first",
    "last",
    "new",
    "old",
    "all",
    "each",
    "every",
    "handler",
    "component",
    "state",
    "props",
    "request",
    "response",
    "server",
    "client",
    "timeout",
    "retry",
    "queue",
    "worker",
    "thread",
    "lock",
    "header",
    "footer",
    "layout",
    "selector",
    "theme",
    "color",
    "terminal",
    "editor",
    "command",
    "output",
    "input",
    "schema",
    "field",
    "migration",
    "version",
    "release",
    "package",
    "module",
    "workspace",
    "directory",
    "extension",
    "provider",
    "usage",
    "cost",
    "prompt",
    "summary",
    "label",
    "tree",
    "node",
];
const ODD_WORDS: &[&str] = &[
    "café",
    "naïve",
    "→",
    "✓",
    "—",
    "日本語",
    "🚀",
    "über",
    "Größe",
    "résumé",
    "±",
    "…",
];
const IDENTS: &[&str] = &[
    "session", "entries", "leafId", "parentId", "byId", "context", "messages", "options",
    "storage", "result", "value", "items", "path", "text", "line", "index", "buffer", "offset",
    "config", "model", "provider", "handler", "state", "theme", "selector", "output",
];
const TOOLS: &[&str] = &["bash", "read", "edit", "write", "grep", "find", "ls"];

/// Words until `len` bytes: sentences, paragraphs, `code`, "quotes", some non-ASCII.
fn prose(rng: &mut Rng, len: usize) -> String {
    let mut out = String::with_capacity(len + 32);
    while out.len() < len {
        let words = rng.range(5, 22);
        for w in 0..words {
            if w > 0 {
                out.push(' ');
            }
            let word = if rng.chance(0.01) {
                *rng.pick(ODD_WORDS)
            } else {
                *rng.pick(WORDS)
            };
            match rng.range(0, 40) {
                0 => {
                    out.push('`');
                    out.push_str(rng.pick::<&str>(IDENTS));
                    out.push_str("()`");
                }
                1 => {
                    out.push('"');
                    out.push_str(word);
                    out.push('"');
                }
                _ if w == 0 => {
                    let mut c = word.chars();
                    if let Some(f) = c.next() {
                        out.extend(f.to_uppercase());
                        out.push_str(c.as_str());
                    }
                }
                _ => out.push_str(word),
            }
        }
        out.push_str(if rng.chance(0.1) { "?" } else { "." });
        out.push_str(match rng.range(0, 9) {
            0 => "\n\n",
            1 => "\n- ",
            _ => " ",
        });
    }
    cut(out, len)
}

/// Source-code-like lines until `len` bytes (indentation, quotes, backslashes, tabs).
fn code(rng: &mut Rng, len: usize) -> String {
    let mut out = String::with_capacity(len + 64);
    let mut depth = 0usize;
    while out.len() < len {
        let indent = if rng.chance(0.05) { "\t" } else { "  " };
        for _ in 0..depth {
            out.push_str(indent);
        }
        let a = rng.pick(IDENTS);
        let b = rng.pick(IDENTS);
        match rng.range(0, 9) {
            0 if depth < 6 => {
                out.push_str(&format!("if ({a}.{b} !== undefined) {{"));
                depth += 1;
            }
            1 if depth > 0 => {
                out.truncate(out.trim_end_matches([' ', '\t']).len());
                depth -= 1;
                for _ in 0..depth {
                    out.push_str("  ");
                }
                out.push('}');
            }
            2 => out.push_str(&format!("// {}", prose(rng, 40).trim_end())),
            3 => out.push_str(&format!("import {{ {a} }} from \"./{b}.js\";")),
            4 => out.push_str(&format!("const re = /\\\\d+\\.{a}/; // matches \"{b}\\n\"")),
            5 => out.push_str(&format!("return {{ {a}, {b}: {} }};", rng.range(0, 9999))),
            _ => out.push_str(&format!(
                "const {a} = await {b}.get(\"{}\", {});",
                rng.pick(WORDS),
                rng.range(0, 512)
            )),
        }
        out.push('\n');
    }
    cut(out, len)
}

fn markdown(rng: &mut Rng, len: usize) -> String {
    let mut out = String::with_capacity(len + 64);
    while out.len() < len {
        out.push_str("## ");
        out.push_str(prose(rng, 24).trim_end_matches(['.', ' ', '\n', '-']));
        out.push_str("\n\n");
        for _ in 0..rng.range(1, 5) {
            out.push_str("- ");
            out.push_str(prose(rng, 60).trim_end());
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&prose(rng, 200));
        out.push_str("\n\n");
    }
    cut(out, len)
}

/// At most `len` bytes, on a char boundary.
fn cut(mut s: String, len: usize) -> String {
    if s.len() > len {
        let mut i = len;
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        s.truncate(i);
    }
    s
}

fn base64ish(rng: &mut Rng, len: usize) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s: String = (0..len)
        .map(|_| A[(rng.next() % 64) as usize] as char)
        .collect();
    s.push_str("==");
    s
}

fn tool_call_id(rng: &mut Rng) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let tail: String = (0..22)
        .map(|_| A[(rng.next() % 62) as usize] as char)
        .collect();
    format!("toolu_01{tail}")
}

/// A cost in micro-dollars as JSON (as `JSON.stringify` prints it).
fn dollars(micro: u64) -> String {
    if micro == 0 {
        return "0".into();
    }
    let s = format!("{}.{:06}", micro / 1_000_000, micro % 1_000_000);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

// ---------------------------------------------------------------- one session

#[derive(Default, Clone, Copy)]
struct Stats {
    entries: u64,
    messages: u64,
    side_branches: u64,
    side_entries: u64,
    labels: u64,
    compactions: u64,
    images: u64,
    blobs_written: u64,
    blob_bytes: u64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.entries += o.entries;
        self.messages += o.messages;
        self.side_branches += o.side_branches;
        self.side_entries += o.side_entries;
        self.labels += o.labels;
        self.compactions += o.compactions;
        self.images += o.images;
        self.blobs_written += o.blobs_written;
        self.blob_bytes += o.blob_bytes;
    }
}

/// Sizes scale with the target so that a 1 kB session is still a session.
struct Profile {
    max_text: usize,
    images: bool,
    compactions: bool,
}

impl Profile {
    fn for_target(target: u64) -> Profile {
        Profile {
            max_text: ((target / 8) as usize).clamp(64, 40_000),
            images: target >= 16_000,
            compactions: target >= 200_000,
        }
    }
}

#[derive(Clone)]
struct PathEntry {
    id: String,
    bytes: u64,
    is_user: bool,
}

struct Writer<'a> {
    rng: Rng,
    out: BufWriter<fs::File>,
    bytes: u64,
    target: u64,
    ms: i64,
    ids: HashSet<u32>,
    blobs_dir: &'a Path,
    blob_hashes: Vec<String>,
    profile: Profile,
    stats: Stats,
    /// The line the session continues on (root → leaf).
    main: Vec<PathEntry>,
    /// Index in `main` of the last compaction: adopted branches never start before it,
    /// so both compactions stay on the final path.
    last_compaction: usize,
    /// The last line written is on the main line.
    last_on_main: bool,
}

const MODELS: &[(&str, &str)] = &[
    ("anthropic", "claude-opus-4-5"),
    ("anthropic", "claude-sonnet-4-5"),
    ("openai", "gpt-5.1-codex"),
];

impl<'a> Writer<'a> {
    fn text_len(&mut self, lo: u64, hi: u64) -> usize {
        (self.rng.log_range(lo, hi) as usize).min(self.profile.max_text)
    }

    fn new_id(&mut self) -> String {
        loop {
            let v = self.rng.next() as u32;
            if self.ids.insert(v) {
                return format!("{v:08x}");
            }
        }
    }

    fn tick(&mut self, lo_ms: u64, hi_ms: u64) -> i64 {
        self.ms += self.rng.log_range(lo_ms.max(1), hi_ms) as i64;
        self.ms
    }

    fn line(&mut self, line: &str) {
        self.out.write_all(line.as_bytes()).expect("write");
        self.out.write_all(b"\n").expect("write");
        self.bytes += line.len() as u64 + 1;
    }

    /// Write an entry under `parent`; returns (id, bytes).
    fn entry(
        &mut self,
        ty: &str,
        parent: Option<&str>,
        fields: &[(&str, String)],
    ) -> (String, u64) {
        let id = self.new_id();
        let ts = iso_from_ms(self.ms);
        let borrowed: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let line = compose_line(ty, &id, parent, &ts, &borrowed);
        self.line(&line);
        self.stats.entries += 1;
        self.last_on_main = false;
        if ty == "message" {
            self.stats.messages += 1;
        }
        (id, line.len() as u64 + 1)
    }

    /// Append to the main line.
    fn main_entry(&mut self, ty: &str, fields: &[(&str, String)], is_user: bool) -> String {
        let parent = self.main.last().map(|e| e.id.clone());
        let (id, bytes) = self.entry(ty, parent.as_deref(), fields);
        self.main.push(PathEntry {
            id: id.clone(),
            bytes,
            is_user,
        });
        self.last_on_main = true;
        id
    }

    /// An image block: a blob (random bytes behind a PNG signature) stored under its
    /// sha256, referenced as the agent writes externalized images. One in ten reuses an
    /// earlier image (the same screenshot pasted again).
    fn image_block(&mut self) -> String {
        self.stats.images += 1;
        let hash = if !self.blob_hashes.is_empty() && self.rng.chance(0.1) {
            let i = (self.rng.next() % self.blob_hashes.len() as u64) as usize;
            self.blob_hashes[i].clone()
        } else {
            let len = self.rng.log_range(2_000, 48_000) as usize;
            let mut data = Vec::with_capacity(len);
            data.extend_from_slice(b"\x89PNG\r\n\x1a\n");
            while data.len() < len {
                data.extend_from_slice(&self.rng.next().to_le_bytes());
            }
            let hash = sha256_hex(&data);
            let path = self.blobs_dir.join(&hash);
            if !path.exists() {
                fs::write(&path, &data).expect("write blob");
                self.stats.blobs_written += 1;
                self.stats.blob_bytes += data.len() as u64;
            }
            self.blob_hashes.push(hash.clone());
            hash
        };
        format!("{{\"type\":\"image\",\"data\":\"blob:sha256:{hash}\",\"mimeType\":\"image/png\"}}")
    }

    fn user_message(&mut self) -> String {
        let len = self.text_len(20, 1_500);
        let text = if self.rng.chance(0.15) {
            format!(
                "{}\n\n```\n{}```",
                prose(&mut self.rng, len / 3),
                code(&mut self.rng, len)
            )
        } else {
            prose(&mut self.rng, len)
        };
        let mut content = format!("[{{\"type\":\"text\",\"text\":{}}}", quote(&text));
        if self.profile.images && self.rng.chance(1.0 / 25.0) {
            content.push(',');
            content.push_str(&self.image_block());
        }
        content.push(']');
        let ts = self.tick(2_000, 600_000);
        format!(
            "{{\"role\":\"user\",\"content\":{content},\"timestamp\":{}}}",
            ts - 3
        )
    }

    /// An assistant message; returns (JSON, tool calls as (id, name)).
    fn assistant_message(&mut self, max_calls: u64) -> (String, Vec<(String, &'static str)>) {
        let (provider, model) = *self.rng.pick(MODELS);
        let mut blocks: Vec<String> = Vec::new();
        if provider == "anthropic" && self.target >= 4_000 && self.rng.chance(0.7) {
            let len = self.text_len(50, 4_000);
            let sig_len = self.rng.range(200, 800) as usize;
            blocks.push(format!(
                "{{\"type\":\"thinking\",\"thinking\":{},\"thinkingSignature\":\"{}\"}}",
                quote(&prose(&mut self.rng, len)),
                base64ish(&mut self.rng, sig_len)
            ));
        }
        if max_calls == 0 || self.rng.chance(0.6) {
            let len = self.text_len(20, 2_000);
            let text = if self.rng.chance(0.2) {
                markdown(&mut self.rng, len)
            } else {
                prose(&mut self.rng, len)
            };
            blocks.push(format!("{{\"type\":\"text\",\"text\":{}}}", quote(&text)));
        }
        let n_calls = if max_calls == 0 {
            0
        } else {
            self.rng.range(1, max_calls)
        };
        let mut calls = Vec::new();
        for _ in 0..n_calls {
            let id = tool_call_id(&mut self.rng);
            let name = *self.rng.pick::<&'static str>(TOOLS);
            let file = format!(
                "packages/{}/src/{}.ts",
                self.rng.pick(IDENTS),
                self.rng.pick(IDENTS)
            );
            let args = match name {
                "bash" => format!(
                    "{{\"command\":{}}}",
                    quote(&format!(
                        "cd /work/bench && npm run {} -- --filter \"{}\" 2>&1 | tail -n {}",
                        self.rng.pick(WORDS),
                        self.rng.pick(IDENTS),
                        self.rng.range(5, 200)
                    ))
                ),
                "edit" => {
                    let (a, b) = (self.text_len(20, 2_000), self.text_len(20, 2_000));
                    format!(
                        "{{\"path\":{},\"oldText\":{},\"newText\":{}}}",
                        quote(&file),
                        quote(&code(&mut self.rng, a)),
                        quote(&code(&mut self.rng, b))
                    )
                }
                "write" => {
                    let n = self.text_len(100, 8_000);
                    format!(
                        "{{\"path\":{},\"content\":{}}}",
                        quote(&file),
                        quote(&code(&mut self.rng, n))
                    )
                }
                "grep" => format!(
                    "{{\"pattern\":{},\"path\":\"packages\"}}",
                    quote(&format!("{}\\(", self.rng.pick(IDENTS)))
                ),
                _ => format!("{{\"path\":{}}}", quote(&file)),
            };
            blocks.push(format!(
                "{{\"type\":\"toolCall\",\"id\":\"{id}\",\"name\":\"{name}\",\"arguments\":{args}}}"
            ));
            calls.push((id, name));
        }
        let (input, output) = (self.rng.range(1, 40), self.rng.range(20, 4_000));
        let (cache_read, cache_write) = (self.rng.range(0, 200_000), self.rng.range(0, 8_000));
        let (ci, co, cr, cw) = (
            input * 3,
            output * 15,
            cache_read * 3 / 10,
            cache_write * 375 / 100,
        );
        let api = if provider == "openai" {
            "openai-responses"
        } else {
            "anthropic-messages"
        };
        let stop = if calls.is_empty() { "stop" } else { "toolUse" };
        let ts = self.tick(500, 90_000);
        let json = format!(
            "{{\"role\":\"assistant\",\"content\":[{}],\"api\":\"{api}\",\"provider\":\"{provider}\",\"model\":\"{model}\",\"usage\":{{\"input\":{input},\"output\":{output},\"cacheRead\":{cache_read},\"cacheWrite\":{cache_write},\"totalTokens\":{},\"cost\":{{\"input\":{},\"output\":{},\"cacheRead\":{},\"cacheWrite\":{},\"total\":{}}}}},\"stopReason\":\"{stop}\",\"timestamp\":{}}}",
            blocks.join(","),
            input + output + cache_read + cache_write,
            dollars(ci),
            dollars(co),
            dollars(cr),
            dollars(cw),
            dollars(ci + co + cr + cw),
            ts - 400
        );
        (json, calls)
    }

    fn tool_result(&mut self, call_id: &str, name: &str) -> String {
        let len = match name {
            "read" => self.text_len(200, 30_000),
            "bash" | "grep" | "find" => self.text_len(40, 12_000),
            _ => self.text_len(20, 300),
        };
        let text = match name {
            "read" => code(&mut self.rng, len),
            "edit" | "write" => format!("Successfully wrote {len} bytes"),
            _ => prose(&mut self.rng, len),
        };
        let mut content = format!("[{{\"type\":\"text\",\"text\":{}}}", quote(&text));
        if self.profile.images && name == "read" && self.rng.chance(1.0 / 30.0) {
            content.push(',');
            content.push_str(&self.image_block());
        }
        content.push(']');
        let is_error = self.rng.chance(0.04);
        let ts = self.tick(10, 30_000);
        format!(
            "{{\"role\":\"toolResult\",\"toolCallId\":\"{call_id}\",\"toolName\":\"{name}\",\"content\":{content},\"isError\":{is_error},\"timestamp\":{ts}}}"
        )
    }

    /// After a main-line entry: sometimes a side branch from an earlier entry (a retry
    /// from there), usually abandoned, one in five times adopted as the new main line.
    fn maybe_branch(&mut self) {
        let n = self.main.len();
        if n < 4 || !self.rng.chance(0.33) {
            return;
        }
        let back = self.rng.range(1, (n as u64 - 1).min(30)) as usize;
        let mut anchor = n - 1 - back;
        let adopt = self.rng.chance(0.2);
        if adopt && anchor < self.last_compaction {
            anchor = self.last_compaction.min(n - 1);
        }
        self.stats.side_branches += 1;
        let mut side: Vec<PathEntry> = Vec::new();
        if adopt && self.rng.chance(0.5) {
            let len = self.text_len(100, 1_500);
            let summary = prose(&mut self.rng, len);
            self.tick(1_000, 60_000);
            let from = quote(&self.main[anchor].id);
            let fields = [("fromId", from), ("summary", quote(&summary))];
            self.side_entry(&mut side, anchor, "branch_summary", &fields, false);
        }
        let user = self.user_message();
        self.side_entry(&mut side, anchor, "message", &[("message", user)], true);
        for _ in 0..self.rng.range(0, 3) {
            let (a, calls) = self.assistant_message(1);
            self.side_entry(&mut side, anchor, "message", &[("message", a)], false);
            for (cid, name) in calls {
                let r = self.tool_result(&cid, name);
                self.side_entry(&mut side, anchor, "message", &[("message", r)], false);
            }
        }
        self.stats.side_entries += side.len() as u64;
        if adopt {
            self.main.truncate(anchor + 1);
            self.main.extend(side);
        }
    }

    /// Write an entry after the last one of `side` (the first after `main[anchor]`) and
    /// add it to `side`.
    fn side_entry(
        &mut self,
        side: &mut Vec<PathEntry>,
        anchor: usize,
        ty: &str,
        fields: &[(&str, String)],
        is_user: bool,
    ) {
        let parent = side.last().unwrap_or(&self.main[anchor]).id.clone();
        let (id, bytes) = self.entry(ty, Some(&parent), fields);
        side.push(PathEntry { id, bytes, is_user });
    }

    fn compaction(&mut self) {
        // Keep about 2% of the target (at least a few entries), from a user message.
        let keep = (self.target / 50).max(2_000);
        let mut acc = 0;
        let mut first = self.main.len() - 1;
        for i in (self.last_compaction..self.main.len()).rev() {
            acc += self.main[i].bytes;
            first = i;
            if acc >= keep {
                break;
            }
        }
        while first > self.last_compaction && !self.main[first].is_user {
            first -= 1;
        }
        let first_kept = self.main[first].id.clone();
        let len = self.text_len(1_500, 6_000).max(200);
        let summary = format!("# Context Checkpoint\n\n{}", markdown(&mut self.rng, len));
        let short = prose(&mut self.rng, 80);
        let details = format!(
            "{{\"readFiles\":[\"packages/{}/src/index.ts\"],\"modifiedFiles\":[\"packages/{}/src/{}.ts\"]}}",
            self.rng.pick(IDENTS),
            self.rng.pick(IDENTS),
            self.rng.pick(IDENTS)
        );
        self.tick(5_000, 60_000);
        let tokens = self.rng.range(120_000, 190_000);
        self.main_entry(
            "compaction",
            &[
                ("summary", quote(&summary)),
                ("shortSummary", quote(short.trim())),
                ("firstKeptEntryId", quote(&first_kept)),
                ("tokensBefore", tokens.to_string()),
                ("details", details),
            ],
            false,
        );
        self.last_compaction = self.main.len() - 1;
        self.stats.compactions += 1;
    }

    /// Occasional state entries between turns.
    fn between_turns(&mut self) {
        if self.rng.chance(0.03) {
            self.tick(100, 10_000);
            let level = *self.rng.pick(&["off", "low", "medium", "high"]);
            self.main_entry(
                "thinking_level_change",
                &[("thinkingLevel", quote(level))],
                false,
            );
        }
        if self.rng.chance(0.015) {
            self.tick(100, 10_000);
            let (p, m) = *self.rng.pick(MODELS);
            self.main_entry(
                "model_change",
                &[("model", quote(&format!("{p}/{m}")))],
                false,
            );
        }
        if self.rng.chance(0.25) && self.main.len() > 2 {
            self.tick(100, 10_000);
            let i = (self.rng.next() % self.main.len() as u64) as usize;
            let target = self.main[i].id.clone();
            let label = format!("checkpoint {}", self.stats.labels + 1);
            self.main_entry(
                "label",
                &[("targetId", quote(&target)), ("label", quote(&label))],
                false,
            );
            self.stats.labels += 1;
        }
        if self.rng.chance(0.02) {
            self.tick(10, 1_000);
            let data = format!(
                "{{\"todos\":[{{\"text\":{},\"done\":{}}}]}}",
                quote(&prose(&mut self.rng, 40)),
                self.rng.chance(0.5)
            );
            self.main_entry(
                "custom",
                &[("customType", quote("todo-state")), ("data", data)],
                false,
            );
        }
    }

    /// One user turn on the main line: user, then steps of assistant + tool results,
    /// then a closing assistant message.
    fn turn(&mut self) {
        let u = self.user_message();
        self.main_entry("message", &[("message", u)], true);
        self.maybe_branch();
        let steps = if self.target < 16_000 {
            0
        } else {
            self.rng.range(0, 6)
        };
        for _ in 0..steps {
            if self.bytes >= self.target {
                break;
            }
            let (a, calls) = self.assistant_message(3);
            self.main_entry("message", &[("message", a)], false);
            for (cid, name) in calls {
                let r = self.tool_result(&cid, name);
                self.main_entry("message", &[("message", r)], false);
            }
            self.maybe_branch();
        }
        let (a, _) = self.assistant_message(0);
        self.main_entry("message", &[("message", a)], false);
        self.maybe_branch();
    }
}

/// What one generated session looks like (for the manifest).
struct Generated {
    path: PathBuf,
    bytes: u64,
    header_ms: i64,
    stats: Stats,
    main_path_entries: usize,
}

struct SessionSpec<'a> {
    dir: &'a Path,
    blobs_dir: &'a Path,
    cwd: &'a str,
    target: u64,
    start_ms: i64,
    title: Option<String>,
    /// A long `session_init` first (pushes the first user message past a 4 kB prefix).
    long_init: bool,
}

fn session_id(rng: &mut Rng, ms: i64) -> String {
    let t = (ms - EPOCH_2015_MS).max(0) as u64;
    format!("{:016x}", (t << 22) | (rng.next() & 0x3F_FFFF))
}

fn write_session(rng: Rng, spec: &SessionSpec) -> Generated {
    let mut rng = rng;
    let id = session_id(&mut rng, spec.start_ms);
    let iso = iso_from_ms(spec.start_ms);
    let path = spec.dir.join(session_file_name(&iso, &id));
    let file = fs::File::create(&path).expect("create session file");
    let mut w = Writer {
        rng,
        out: BufWriter::with_capacity(1 << 20, file),
        bytes: 0,
        target: spec.target,
        ms: spec.start_ms,
        ids: HashSet::new(),
        blobs_dir: spec.blobs_dir,
        blob_hashes: Vec::new(),
        profile: Profile::for_target(spec.target),
        stats: Stats::default(),
        main: Vec::new(),
        last_compaction: 0,
        last_on_main: false,
    };
    let mut header = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"{iso}\",\"cwd\":{}",
        quote(spec.cwd)
    );
    if let Some(t) = &spec.title {
        header.push_str(&format!(",\"title\":{},\"titleSource\":\"auto\"", quote(t)));
    }
    header.push('}');
    w.line(&header);
    w.tick(5, 200);
    if spec.long_init {
        let len = w.rng.range(5_000, 9_000) as usize;
        let prompt = markdown(&mut w.rng, len);
        w.main_entry(
            "session_init",
            &[
                ("systemPrompt", quote(&prompt)),
                ("task", quote("review the open pull requests")),
                ("tools", "[\"read\",\"grep\",\"bash\"]".into()),
            ],
            false,
        );
    }
    w.main_entry(
        "model_change",
        &[("model", quote("anthropic/claude-opus-4-5"))],
        false,
    );
    if spec.target >= 2_000 {
        w.main_entry(
            "thinking_level_change",
            &[("thinkingLevel", quote("high"))],
            false,
        );
    }
    let mut next_compaction = [0.45, 0.8].into_iter().peekable();
    while w.bytes < spec.target {
        if w.profile.compactions {
            if let Some(&at) = next_compaction.peek() {
                if w.bytes as f64 >= at * spec.target as f64 {
                    next_compaction.next();
                    w.compaction();
                }
            }
        }
        w.turn();
        w.between_turns();
    }
    // End on the main line (the last entry is the leaf the context is built for).
    if !w.last_on_main {
        let (a, _) = w.assistant_message(0);
        w.main_entry("message", &[("message", a)], false);
    }
    w.out.flush().expect("flush");
    Generated {
        path,
        bytes: w.bytes,
        header_ms: spec.start_ms,
        stats: w.stats,
        main_path_entries: w.main.len(),
    }
}

// ---------------------------------------------------------------- artifacts

fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" | "k" => 1_000,
        "mb" | "m" => 1_000_000,
        "gb" | "g" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        _ => return None,
    };
    Some(n * mult)
}

fn stats_json(s: &Stats) -> String {
    format!(
        "{{\"entries\":{},\"messages\":{},\"sideBranches\":{},\"sideEntries\":{},\"labels\":{},\"compactions\":{},\"images\":{},\"blobsWritten\":{},\"blobBytes\":{}}}",
        s.entries, s.messages, s.side_branches, s.side_entries, s.labels, s.compactions, s.images, s.blobs_written, s.blob_bytes
    )
}

/// The stored info of an artifact when its parameters match.
fn reusable(info_path: &Path, params: &str) -> Option<String> {
    let text = fs::read_to_string(info_path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let wanted: serde_json::Value = serde_json::from_str(params).ok()?;
    if v.get("params")? != &wanted {
        return None;
    }
    for key in ["path", "agentDir"] {
        if let Some(p) = v.get(key).and_then(|p| p.as_str()) {
            if !Path::new(p).exists() {
                return None;
            }
        }
    }
    if let (Some(p), Some(b)) = (
        v.get("path").and_then(|p| p.as_str()),
        v.get("bytes").and_then(|b| b.as_u64()),
    ) {
        if fs::metadata(p).ok()?.len() != b {
            return None;
        }
    }
    Some(text.trim().to_string())
}

fn abs(p: &Path) -> String {
    fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

fn gen_session(out: &Path, seed: u64, label: &str, target: u64) -> String {
    let info_path = out.join(format!("session-{label}.json"));
    let params =
        format!("{{\"generator\":{GENERATOR_VERSION},\"seed\":{seed},\"target\":{target}}}");
    if let Some(info) = reusable(&info_path, &params) {
        eprintln!("[gen_sessions] session {label}: reusing");
        return info;
    }
    // A stale file of an earlier run with other parameters.
    if let Ok(old) = fs::read_to_string(&info_path) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&old) {
            if let Some(p) = v.get("path").and_then(|p| p.as_str()) {
                let _ = fs::remove_file(p);
            }
        }
    }
    let agent = out.join("agent");
    let dir = agent.join("sessions").join("--work-bench--");
    let blobs = agent.join("blobs");
    fs::create_dir_all(&dir).expect("mkdir");
    fs::create_dir_all(&blobs).expect("mkdir");
    let t = std::time::Instant::now();
    let g = write_session(
        Rng::new(seed, target),
        &SessionSpec {
            dir: &dir,
            blobs_dir: &blobs,
            cwd: "/work/bench",
            target,
            start_ms: START_MS + (target % 86_400_000) as i64,
            title: None,
            long_init: false,
        },
    );
    eprintln!(
        "[gen_sessions] session {label}: {} bytes, {} entries in {:.1?}",
        g.bytes,
        g.stats.entries,
        t.elapsed()
    );
    let info = format!(
        "{{\"params\":{params},\"path\":{},\"agentDir\":{},\"bytes\":{},\"mainPathEntries\":{},\"stats\":{}}}",
        quote(&abs(&g.path)),
        quote(&abs(&agent)),
        g.bytes,
        g.main_path_entries,
        stats_json(&g.stats)
    );
    fs::write(&info_path, format!("{info}\n")).expect("write info");
    info
}

fn gen_list(out: &Path, seed: u64, files: u64, projects: u64) -> String {
    let name = format!("list-{files}x{projects}");
    let info_path = out.join(format!("{name}.json"));
    let params = format!(
        "{{\"generator\":{GENERATOR_VERSION},\"seed\":{seed},\"files\":{files},\"projects\":{projects}}}"
    );
    if let Some(info) = reusable(&info_path, &params) {
        eprintln!("[gen_sessions] {name}: reusing");
        return info;
    }
    let root = out.join(&name);
    let _ = fs::remove_dir_all(&root);
    let agent = root.join("agent");
    let blobs = agent.join("blobs");
    fs::create_dir_all(&blobs).expect("mkdir");
    let t = std::time::Instant::now();
    let mut total_bytes = 0u64;
    let mut totals = Stats::default();
    let mut dirs = Vec::new();
    let mut rng = Rng::new(seed, 0x4c49_5354);
    for p in 0..projects {
        let cwd = format!("/work/p{p}");
        let dir = agent.join("sessions").join(format!("--work-p{p}--"));
        fs::create_dir_all(&dir).expect("mkdir");
        dirs.push(abs(&dir));
        let count = files / projects + u64::from(p < files % projects);
        for _ in 0..count {
            let target = rng.log_range(1_000, 64_000);
            let start_ms = START_MS - rng.range(0, 120 * 86_400_000) as i64;
            let title = rng
                .chance(0.15)
                .then(|| prose(&mut rng, 30).trim().to_string());
            let long_init = rng.chance(0.05);
            let g = write_session(
                Rng::new(rng.next(), 1),
                &SessionSpec {
                    dir: &dir,
                    blobs_dir: &blobs,
                    cwd: &cwd,
                    target,
                    start_ms,
                    title,
                    long_init,
                },
            );
            let mtime = g.header_ms + rng.log_range(60_000, 3 * 86_400_000) as i64;
            let f = fs::File::options().write(true).open(&g.path).expect("open");
            f.set_modified(UNIX_EPOCH + Duration::from_millis(mtime as u64))
                .expect("set mtime");
            total_bytes += g.bytes;
            totals.add(&g.stats);
        }
    }
    eprintln!(
        "[gen_sessions] {name}: {files} files, {total_bytes} bytes in {:.1?}",
        t.elapsed()
    );
    let info = format!(
        "{{\"params\":{params},\"agentDir\":{},\"files\":{files},\"projects\":{projects},\"bytes\":{total_bytes},\"projectDirs\":[{}],\"stats\":{}}}",
        quote(&abs(&agent)),
        dirs.iter().map(|d| quote(d)).collect::<Vec<_>>().join(","),
        stats_json(&totals)
    );
    fs::write(&info_path, format!("{info}\n")).expect("write info");
    info
}

fn usage() -> ! {
    eprintln!(
        "usage: gen_sessions --out DIR [--seed N] [--session SIZE]... [--list FILES:PROJECTS]..."
    );
    std::process::exit(2);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut out: Option<PathBuf> = None;
    let mut seed = 42u64;
    let mut sessions: Vec<String> = Vec::new();
    let mut lists: Vec<(u64, u64)> = Vec::new();
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(val())),
            "--seed" => seed = val().parse().unwrap_or_else(|_| usage()),
            "--session" => sessions.push(val()),
            "--list" => {
                let v = val();
                let (f, p) = v.split_once(':').unwrap_or_else(|| usage());
                let (Ok(f), Ok(p)) = (f.parse::<u64>(), p.parse::<u64>()) else {
                    usage()
                };
                if p == 0 {
                    usage();
                }
                lists.push((f, p));
            }
            _ => usage(),
        }
    }
    let Some(out) = out else { usage() };
    fs::create_dir_all(&out).expect("mkdir out");
    let mut manifest_sessions = Vec::new();
    for label in &sessions {
        let Some(target) = parse_size(label) else {
            usage()
        };
        let info = gen_session(&out, seed, label, target);
        manifest_sessions.push(format!("{}:{info}", quote(label)));
    }
    let mut manifest_lists = Vec::new();
    for (f, p) in &lists {
        let info = gen_list(&out, seed, *f, *p);
        manifest_lists.push(format!("\"{f}x{p}\":{info}"));
    }
    let manifest = format!(
        "{{\"generator\":{GENERATOR_VERSION},\"seed\":{seed},\"sessions\":{{{}}},\"lists\":{{{}}}}}",
        manifest_sessions.join(","),
        manifest_lists.join(",")
    );
    fs::write(out.join("manifest.json"), format!("{manifest}\n")).expect("write manifest");
    println!("{manifest}");
}
