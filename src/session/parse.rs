//! Parsing a session's text into its header and entry candidates: the fast reader (one
//! record per line, on all cores for large files), the lenient reader with header salvage
//! and migrations, and fast UTF-8 validation.

use super::{LoadReport, NonEntry, Session};
use crate::entry::{Entry, Header, Text};
use crate::jsonl::{self, next_line};
use crate::migration;
use crate::storage::Storage;
use std::sync::Arc;

/// A record on its way to becoming an entry (with its byte offset in the file).
pub(super) enum Candidate {
    /// Already read (the fast path validated and parsed it in one go).
    Parsed(Entry, usize),
    /// JSON text still to parse (lenient path, possibly migrated).
    Raw(Text, usize),
    /// Another header line, kept in its place (see [`crate::entry::Record`]).
    Header(Text, usize),
}

impl Candidate {
    fn read(record: crate::entry::Record, offset: usize) -> Candidate {
        match record {
            crate::entry::Record::Entry(e) => Candidate::Parsed(e, offset),
            crate::entry::Record::Header(t) => Candidate::Header(t, offset),
        }
    }
}

/// Below this, parsing on one thread is fast enough.
#[cfg(not(target_arch = "wasm32"))]
const PARALLEL_MIN_BYTES: usize = 8 << 20;

/// Run `work(start, stop)` on all cores over `b[from..]` cut into one chunk per core,
/// each cut just after a newline, and return the results in order. `None` when the text
/// is small, there is one core, or a worker panicked.
#[cfg(not(target_arch = "wasm32"))]
fn on_line_chunks<T: Send>(
    b: &[u8],
    from: usize,
    work: impl Fn(usize, usize) -> T + Sync,
) -> Option<Vec<T>> {
    let len = b.len().checked_sub(from)?;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if threads < 2 || len < PARALLEL_MIN_BYTES {
        return None;
    }
    let mut bounds = vec![from];
    for k in 1..threads {
        let p = from + len * k / threads;
        let cut = memchr::memchr(b'\n', &b[p..]).map_or(b.len(), |i| p + i + 1);
        if cut > *bounds.last()? {
            bounds.push(cut);
        }
    }
    bounds.push(b.len());
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .windows(2)
            .map(|w| (w[0], w[1]))
            .map(|(a, z)| scope.spawn(move || work(a, z)))
            .collect();
        handles.into_iter().map(|h| h.join().ok()).collect()
    })
}

/// `String::from_utf8`, faster: checked with SIMD (`simdutf8`), and large
/// inputs on all cores (native builds) in chunks cut after newlines (a newline byte
/// never sits inside a multi-byte character).
pub fn utf8(bytes: Vec<u8>) -> std::result::Result<String, std::string::FromUtf8Error> {
    #[cfg(not(target_arch = "wasm32"))]
    if let Some(valid) = on_line_chunks(&bytes, 0, |a, z| {
        simdutf8::basic::from_utf8(&bytes[a..z]).is_ok()
    }) {
        if valid.into_iter().all(|v| v) {
            // SAFETY: every chunk is valid UTF-8 and the cuts fall after ASCII newlines,
            // so the whole is valid UTF-8.
            return Ok(unsafe { String::from_utf8_unchecked(bytes) });
        }
    }
    if simdutf8::basic::from_utf8(&bytes).is_ok() {
        // SAFETY: just checked.
        return Ok(unsafe { String::from_utf8_unchecked(bytes) });
    }
    String::from_utf8(bytes)
}

/// Large current files, one record per line: the lines are independent, so they are
/// parsed on all cores (native builds) in order-preserving chunks. `None` when the file is
/// small, or when a chunk meets a line that is not a complete JSON value (the sequential
/// reader then handles the file, lenient tail included).
#[cfg(not(target_arch = "wasm32"))]
fn parse_lines_parallel(
    text: &Arc<String>,
    from: usize,
) -> Option<(Vec<Candidate>, Vec<NonEntry>)> {
    let b = text.as_bytes();
    let chunk = |start: usize, stop: usize| -> Option<(Vec<Candidate>, Vec<NonEntry>)> {
        let mut out = Vec::with_capacity((stop - start) / 1024 + 16);
        let mut non_entries = Vec::new();
        let mut pos = start;
        while let Some((s, e)) = next_line(&b[..stop], &mut pos) {
            match Entry::parse_record(Text::Shared {
                buf: text.clone(),
                start: s,
                end: e,
            }) {
                Ok(record) => out.push(Candidate::read(record, s)),
                Err(crate::entry::EntryError::NotAnObject(_))
                    if serde_json::from_str::<serde::de::IgnoredAny>(&text[s..e]).is_err() =>
                {
                    return None
                }
                Err(err) => non_entries.push(NonEntry {
                    offset: s,
                    reason: err.to_string(),
                }),
            }
        }
        Some((out, non_entries))
    };
    let parts: Vec<(Vec<Candidate>, Vec<NonEntry>)> = on_line_chunks(b, from, chunk)?
        .into_iter()
        .collect::<Option<_>>()?;
    // The first chunk's vector grows to hold the others (a large one is remapped, not
    // copied), each freed once moved: never two copies of the whole index.
    let mut parts = parts.into_iter();
    let (mut out, mut non_entries) = parts.next()?;
    for (mut o, n) in parts {
        out.append(&mut o);
        non_entries.extend(n);
    }
    Some((out, non_entries))
}

/// Progress reports while parsing: one per ~1% of the text (at least 256 KiB apart).
pub(super) struct ProgressTick {
    total: usize,
    step: usize,
    next: usize,
}

impl ProgressTick {
    pub(super) fn new(total: usize) -> ProgressTick {
        let step = (total / 100).max(256 << 10);
        ProgressTick {
            total,
            step,
            next: step,
        }
    }

    #[inline]
    pub(super) fn at(&mut self, done: usize, progress: &mut dyn FnMut(usize, usize)) {
        if done >= self.next {
            progress(done, self.total);
            self.next = done + self.step;
        }
    }
}

impl Session {
    /// The common case, one record per line in a current file: each line is validated and
    /// read in a single pass by `Entry::parse`. `None` when the file does not start with a
    /// current header line. The first line that is not a complete JSON value (glued
    /// records, a pretty-printed value, a torn write) hands the rest of the file to the
    /// lenient reader.
    pub(super) fn read_fast(
        text: &Arc<String>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Option<(Header, Vec<Candidate>, LoadReport)> {
        let b = text.as_bytes();
        let mut pos = if text.starts_with('\u{feff}') { 3 } else { 0 };
        let (hs, he) = next_line(b, &mut pos)?;
        let header = Header::from_json(&text[hs..he])?;
        if header.version() < crate::entry::CURRENT_SESSION_VERSION {
            return None;
        }
        let mut report = LoadReport {
            file_version: header.version(),
            ..LoadReport::default()
        };
        #[cfg(not(target_arch = "wasm32"))]
        if let Some((out, non_entries)) = parse_lines_parallel(text, pos) {
            report.non_entries = non_entries;
            return Some((header, out, report));
        }
        let mut out = Vec::with_capacity(b.len() / 1024 + 16);
        let mut tick = ProgressTick::new(b.len());
        while let Some((start, end)) = next_line(b, &mut pos) {
            tick.at(start, progress);
            let line = Text::Shared {
                buf: text.clone(),
                start,
                end,
            };
            match Entry::parse_record(line) {
                Ok(record) => out.push(Candidate::read(record, start)),
                Err(crate::entry::EntryError::NotAnObject(_))
                    if serde_json::from_str::<serde::de::IgnoredAny>(&text[start..end])
                        .is_err() =>
                {
                    let rest = jsonl::parse_lenient(&text[start..]);
                    let lines_before = jsonl::line_of(text, start) - 1;
                    report.issues.extend(rest.issues.into_iter().map(|mut i| {
                        i.offset += start;
                        i.line += lines_before;
                        i
                    }));
                    out.extend(rest.records.iter().map(|r| {
                        Candidate::Raw(
                            Text::Shared {
                                buf: text.clone(),
                                start: r.start + start,
                                end: r.end + start,
                            },
                            r.start + start,
                        )
                    }));
                    break;
                }
                Err(e) => report.non_entries.push(NonEntry {
                    offset: start,
                    reason: e.to_string(),
                }),
            }
        }
        Some((header, out, report))
    }

    /// Any file: the lenient JSONL reader, header salvage and migrations.
    pub(super) fn read_lenient(
        storage: &dyn Storage,
        cwd: &str,
        text: &Arc<String>,
    ) -> (Header, Vec<Candidate>, LoadReport) {
        let parsed = jsonl::parse_lenient(text);
        let mut report = LoadReport {
            issues: parsed.issues,
            ..LoadReport::default()
        };
        let shared = |r: &jsonl::Record| Text::Shared {
            buf: text.clone(),
            start: r.start,
            end: r.end,
        };
        let mut records = parsed.records.iter();
        let first = records.next();
        let header = first.and_then(|r| Header::from_json(&text[r.start..r.end]));
        let (mut header, rest): (Header, Vec<&jsonl::Record>) = match header {
            Some(h) => (h, records.collect()),
            None => {
                // A salvaged header (the file had none) gets xcsh's id.
                let mut h = Self::new_header(storage, crate::flavour::Flavour::Xcsh, cwd, None);
                if first.is_none() && !text.trim().is_empty() {
                    report.header_problem = Some(
                        "no session header found: nothing in the file could be read as JSON".into(),
                    );
                }
                if first.is_some() {
                    report.header_problem = Some("the first record is not a session header (type \"session\" with a string id); a new header was made and the entries salvaged".into());
                }
                let all: Vec<&jsonl::Record> = parsed.records.iter().collect();
                // Salvaged entries without ids are treated like a v1 file.
                let has_ids = all.iter().any(|r| {
                    crate::entry::pick(&text[r.start..r.end], &["id"])
                        .ok()
                        .and_then(|f| f[0])
                        .is_some()
                });
                if !has_ids && !all.is_empty() {
                    h.remove("version");
                }
                (h, all)
            }
        };
        report.file_version = header.version();

        // Records that can be entries or headers: JSON objects with a string type. Only v1
        // files need this sorted out before parsing (their entries have
        // no ids yet); later versions are classified by `Entry::parse` itself.
        let mut candidates: Vec<Text> = Vec::with_capacity(rest.len());
        let needs_ids = header.version() < 2;
        for r in rest {
            if !needs_ids {
                candidates.push(shared(r));
                continue;
            }
            let raw = &text[r.start..r.end];
            let ty = crate::entry::pick(raw, &["type"])
                .ok()
                .and_then(|f| f[0].and_then(crate::json::raw_str).map(|s| s.into_owned()));
            match ty {
                Some(_) => candidates.push(shared(r)),
                None => report.non_entries.push(NonEntry {
                    offset: r.start,
                    reason: "not an object with a string \"type\"".into(),
                }),
            }
        }
        report.migration = migration::migrate(&mut header, &mut candidates);
        let candidates = candidates
            .into_iter()
            .map(|t| {
                let offset = match &t {
                    Text::Shared { start, .. } => *start,
                    Text::Owned(_) => 0,
                };
                Candidate::Raw(t, offset)
            })
            .collect();
        (header, candidates, report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemoryStorage;
    use std::rc::Rc;

    /// The fast line reader and the lenient reader agree on every v3 text: same entries
    /// (text and offset), same issues and non-entries.
    fn same_reading(text: &str) {
        let text = Arc::new(text.to_string());
        let storage = MemoryStorage::new();
        let Some((fh, fast, freport)) = Session::read_fast(&text, &mut |_, _| {}) else {
            panic!("fast path expected for {text:?}")
        };
        let (lh, lenient, lreport) = Session::read_lenient(&storage, "", &text);
        assert_eq!(fh, lh);
        let norm = |c: Vec<Candidate>| -> Vec<(std::result::Result<String, String>, usize)> {
            c.into_iter()
                .map(|c| match c {
                    Candidate::Parsed(e, o) => (Ok(e.json().to_string()), o),
                    Candidate::Header(t, o) => (Err(format!("header {}", t.as_str())), o),
                    Candidate::Raw(t, o) => (
                        match Entry::parse_record(t) {
                            Ok(crate::entry::Record::Entry(e)) => Ok(e.json().to_string()),
                            Ok(crate::entry::Record::Header(t)) => {
                                Err(format!("header {}", t.as_str()))
                            }
                            Err(e) => Err(e.to_string()),
                        },
                        o,
                    ),
                })
                .map(|(r, o)| match r {
                    Ok(j) => (Ok(j), o),
                    Err(e) => (Err(e), o),
                })
                .collect()
        };
        let (mut f, mut l) = (norm(fast), norm(lenient));
        // The fast path reports non-entries in `report`, the lenient one as failed parses.
        for n in &freport.non_entries {
            f.push((Err(n.reason.clone()), n.offset));
        }
        f.sort_by_key(|x| x.1);
        l.sort_by_key(|x| x.1);
        assert_eq!(f, l, "{text}");
        let kinds = |r: &LoadReport| {
            r.issues
                .iter()
                .map(|i| (i.line, i.offset, i.kind.clone()))
                .collect::<Vec<_>>()
        };
        let mut fk = kinds(&freport);
        let mut lk = kinds(&lreport);
        fk.sort();
        lk.sort();
        // The lenient reader reports an unparsable middle line; the fast one hands the
        // rest to the lenient reader from that line on, which reports it the same way.
        assert_eq!(fk, lk, "{text}");
    }

    const H: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    const A: &str = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#;
    const B: &str =
        r#"{"type":"label","id":"b1","parentId":"a1","timestamp":"t","targetId":"a1","label":"l"}"#;

    #[test]
    fn fast_and_lenient_readers_agree() {
        for text in [
            format!("{H}\n{A}\n{B}\n"),
            format!("\u{feff}{H}\r\n\r\n{A}\r\n{B}"),
            format!("{H}\n{A}{B}\n{B}\n"),
            format!("{H}\n{A}\nnot json\n{B}\n"),
            format!("{H}\n42\n[1]\n{{\"type\":\"x\"}}\n{A}\n"),
            format!("{H}\n{A}\n{{\n  \"type\": \"label\",\n  \"id\": \"p1\"\n}}\n{B}\n"),
            format!("{H}\n{A}\n{{\"type\":\"message\",\"id\":\"t"),
            format!("{H}\n{H}\n{A}\n"),
        ] {
            same_reading(&text);
        }
    }

    #[test]
    fn large_files_read_in_parallel_agree_with_the_lenient_reader() {
        let mut text = format!("{H}\n");
        let mut n = 0;
        while text.len() < super::PARALLEL_MIN_BYTES + (1 << 20) {
            n += 1;
            text.push_str(&format!(
                r#"{{"type":"message","id":"m{n}","parentId":"m{}","timestamp":"t","message":{{"role":"user","content":"{}"}}}}"#,
                n - 1,
                "x".repeat(n % 97)
            ));
            text.push('\n');
            if n % 1000 == 0 {
                text.push_str("42\n{\"type\":\"x\"}\n");
            }
        }
        same_reading(&text);
        let s = Session::from_string(Rc::new(MemoryStorage::new()), text, "/agent");
        assert_eq!(s.entries().len(), n);
        assert_eq!(
            s.entries().last().map(|e| e.id.clone()),
            Some(format!("m{n}"))
        );
        assert_eq!(s.report().non_entries.len(), 2 * (n / 1000));
    }

    /// `utf8` agrees with std: on small inputs (one pass) with broken sequences anywhere,
    /// and on large ones validated in chunks on all cores, broken at chunk edges too.
    #[test]
    fn utf8_verdicts_match_std() {
        let pieces: [&[u8]; 9] = [
            b"plain ascii text ",
            "é".as_bytes(),
            "日本".as_bytes(),
            "🎉".as_bytes(),
            &[0xff],
            &[0xe6, 0x97],
            &[0x80],
            &[0xed, 0xa0, 0x80],
            &[0xf4, 0x90, 0x80, 0x80],
        ];
        let mut seed = 11u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for _ in 0..5_000 {
            let mut b = Vec::new();
            let ascii_run = next() % 200;
            for _ in 0..next() % 12 {
                b.extend(std::iter::repeat_n(b'a', next() % (ascii_run + 1)));
                let piece = pieces[next() % pieces.len()];
                // Mostly valid pieces, sometimes broken ones.
                if !next().is_multiple_of(4)
                    || piece.is_ascii()
                    || std::str::from_utf8(piece).is_ok()
                {
                    b.extend_from_slice(piece);
                }
            }
            assert_eq!(
                utf8(b.clone()).is_ok(),
                std::str::from_utf8(&b).is_ok(),
                "{b:?}"
            );
            for cut in [b.len() / 3, b.len() / 2] {
                assert_eq!(
                    utf8(b[cut..].to_vec()).is_ok(),
                    std::str::from_utf8(&b[cut..]).is_ok()
                );
            }
        }
        for bytes in [
            vec![b'a'; 64],
            vec![b'a'; 63],
            vec![0x80; 64],
            [vec![b'a'; 63], vec![0xc3]].concat(),
        ] {
            assert_eq!(
                utf8(bytes.clone()).is_ok(),
                std::str::from_utf8(&bytes).is_ok()
            );
        }
        let line = "an entry with é, 日本 and 🎉 in it\n";
        let mut big = line
            .repeat((PARALLEL_MIN_BYTES + (1 << 20)) / line.len())
            .into_bytes();
        assert!(utf8(big.clone()).is_ok());
        // The ends, and the middle where two cores cut the chunks.
        for k in [0, 2, 4, 6, 8] {
            let at = (big.len() - 1) * k / 8;
            let kept = big[at];
            big[at] = 0xff;
            assert!(utf8(big.clone()).is_err(), "0xff at {at}");
            big[at] = kept;
            // A character cut short just before a newline (a chunk may be cut after it).
            let nl = at + memchr::memchr(b'\n', &big[at..]).unwrap_or(0);
            let kept = big[nl - 1];
            big[nl - 1] = 0xe6;
            assert!(utf8(big.clone()).is_err(), "cut short before {nl}");
            big[nl - 1] = kept;
        }
    }
}
