//! Prompt history: the parts of the agent's `HistoryStorage` that are not SQL.
//!
//! The agent keeps every prompt the user submits in `<agent-dir>/history.db` (SQLite,
//! table `history(id, prompt, created_at, cwd)` with the FTS5 index `history_fts`), for
//! recall and search in the prompt editor. It is separate from the session files.
//!
//! This module holds what every host shares, and does no I/O itself: the database lives
//! behind the [`HistoryStore`] port (SQLite in the native CLI host, over the WIT import
//! `xcsh:session/history`; [`MemoryHistory`] for tests and for hosts without SQLite).
//!
//! - **What is stored.** A prompt is trimmed (JavaScript `String.prototype.trim`
//!   semantics) and stored trimmed; an empty or all-blank prompt is ignored.
//! - **Consecutive duplicates are not stored twice** ([`LastPromptCache`]): a prompt equal
//!   (exactly, after trimming) to the last prompt stored is skipped, whatever its `cwd`.
//!   The cache is seeded from the database's newest row (highest id) on the first add, so
//!   it also holds across processes that run one after the other. A prompt that was
//!   stored before, but not last, is stored again.
//! - **`created_at` is epoch seconds**, as the agent writes it (its schema's default is
//!   `CAST(strftime('%s','now') AS INTEGER)`; its older schema's `unixepoch()` is seconds
//!   too). Values from `10^11` up are read as milliseconds ([`created_at_ms`]), so a
//!   database written by a tool that stored milliseconds still shows the right dates.
//! - **Queries are FTS5 syntax**, passed through to SQLite unchanged (`pars*`, `"exact
//!   phrase"`, `a OR b`, `a NOT b`, `NEAR(a b)`, `prompt:word`, `^start`). A syntax error
//!   is [`HistoryError::InvalidQuery`]. [`prefix_query`] turns plain words into a safe
//!   query (`foo bar` → `"foo"* "bar"*`) for callers that do not want the syntax.
//! - **Limits**: `0` gives an empty list; more than [`MAX_LIMIT`] is clamped to it.
//! - **An empty `cwd`** is the same as none (no cwd stored; no filter).
//! - **JSON**: `[{"id", "prompt", "createdAt", "cwd"}]`, `createdAt` ISO-8601 in UTC
//!   (`2026-02-16T10:20:30.000Z`), `cwd` `null` when the row has none. Search results
//!   are best match first (FTS5 `bm25`, ties newest first); recent ones newest first
//!   (`created_at`, then id).

use crate::api::{ApiError, ApiResult, ErrorKind};
use crate::json::push_quoted;
use std::cell::{Cell, RefCell};

/// The database's file name in the agent directory.
pub const HISTORY_DB_FILE: &str = "history.db";

/// The most rows one search or recent list returns (the agent's bound).
pub const MAX_LIMIT: usize = 1000;

/// `created_at` values from here up are epoch milliseconds, below it epoch seconds
/// (10^11 s is the year 5138; 10^11 ms is 1973).
pub const MS_THRESHOLD: i64 = 100_000_000_000;

/// `<agent-dir>/history.db`.
pub fn db_path(agent_dir: &str) -> String {
    if agent_dir.ends_with('/') {
        format!("{agent_dir}{HISTORY_DB_FILE}")
    } else {
        format!("{agent_dir}/{HISTORY_DB_FILE}")
    }
}

/// One stored prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    pub id: i64,
    pub prompt: String,
    /// As stored: epoch seconds (see [`created_at_ms`]).
    pub created_at: i64,
    pub cwd: Option<String>,
}

/// A row to insert (the store assigns the id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewHistoryRow<'a> {
    /// Already trimmed and non-empty.
    pub prompt: &'a str,
    pub cwd: Option<&'a str>,
    /// Epoch seconds.
    pub created_at: i64,
}

/// A failed history operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// The FTS5 query is malformed (SQLite's message, e.g. `fts5: syntax error near "("`).
    #[error("invalid history query: {0}")]
    InvalidQuery(String),
    /// The database is outside what the host allows, or the command may not write.
    #[error("history: permission denied: {0}")]
    PermissionDenied(String),
    #[error("history: {0}")]
    Other(String),
}

impl From<HistoryError> for ApiError {
    fn from(e: HistoryError) -> Self {
        let kind = match e {
            HistoryError::InvalidQuery(_) => ErrorKind::InvalidInput,
            HistoryError::PermissionDenied(_) | HistoryError::Other(_) => ErrorKind::Storage,
        };
        ApiError {
            kind,
            message: e.to_string(),
            details: None,
        }
    }
}

pub type HistoryResult<T> = Result<T, HistoryError>;

/// The history database port: one database.
///
/// `add` may return before the row is written (the native host queues it to a writer
/// thread so the agent's turn never waits on SQLite); reads made afterwards through the
/// same store see it. `limit` is already clamped to `1..=MAX_LIMIT` by the callers in
/// this module, `query` is non-blank, `cwd` is `None` or non-empty.
pub trait HistoryStore {
    fn add(&self, row: NewHistoryRow<'_>) -> HistoryResult<()>;
    /// Rows matching the FTS5 `query` (restricted to `cwd` when given), best match first.
    fn search(
        &self,
        query: &str,
        limit: usize,
        cwd: Option<&str>,
    ) -> HistoryResult<Vec<HistoryEntry>>;
    /// The newest rows (of `cwd` when given), newest first.
    fn recent(&self, limit: usize, cwd: Option<&str>) -> HistoryResult<Vec<HistoryEntry>>;
    /// The prompt of the row with the highest id (the last one inserted).
    fn last_prompt(&self) -> HistoryResult<Option<String>>;
}

/// `String.prototype.trim`: Unicode white space plus the BOM.
fn trim_js(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

/// The prompt as stored (trimmed), `None` when it is blank.
pub fn normalize_prompt(prompt: &str) -> Option<&str> {
    let t = trim_js(prompt);
    (!t.is_empty()).then_some(t)
}

/// An empty cwd is no cwd.
pub fn normalize_cwd(cwd: Option<&str>) -> Option<&str> {
    cwd.filter(|c| !c.is_empty())
}

/// A requested limit in `0..=MAX_LIMIT`.
pub fn clamp_limit(limit: usize) -> usize {
    limit.min(MAX_LIMIT)
}

/// `created_at` as epoch milliseconds: seconds are scaled, values already in
/// milliseconds (from [`MS_THRESHOLD`] up) kept.
pub fn created_at_ms(created_at: i64) -> i64 {
    if created_at.unsigned_abs() >= MS_THRESHOLD as u64 {
        created_at
    } else {
        created_at.saturating_mul(1000)
    }
}

/// The last-prompt cache that keeps consecutive identical prompts out of the database.
///
/// It is unseeded until the first add, which seeds it from the store's last row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LastPromptCache {
    seeded: bool,
    last: Option<String>,
}

/// What [`LastPromptCache::check`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission<'a> {
    /// Store this (the trimmed prompt).
    Store(&'a str),
    /// Blank: ignored.
    Empty,
    /// Equal to the last prompt stored: ignored.
    Duplicate,
}

impl LastPromptCache {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_seeded(&self) -> bool {
        self.seeded
    }

    /// Set the last prompt from the store (trimmed, as it would be compared).
    pub fn seed(&mut self, last: Option<String>) {
        self.last = last.and_then(|p| normalize_prompt(&p).map(str::to_string));
        self.seeded = true;
    }

    /// The last prompt stored, if known.
    pub fn last(&self) -> Option<&str> {
        self.last.as_deref()
    }

    /// Whether `prompt` is to be stored; changes nothing.
    pub fn check<'a>(&self, prompt: &'a str) -> Admission<'a> {
        match normalize_prompt(prompt) {
            None => Admission::Empty,
            Some(t) if self.last.as_deref() == Some(t) => Admission::Duplicate,
            Some(t) => Admission::Store(t),
        }
    }

    /// Record that `trimmed` was stored.
    pub fn record(&mut self, trimmed: &str) {
        self.last = Some(trimmed.to_string());
        self.seeded = true;
    }
}

/// The outcome of [`add`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    Stored,
    Empty,
    Duplicate,
}

/// Add a prompt: trim, skip blanks and consecutive duplicates, hand the row to the store.
/// `now_s` is the capture time, epoch seconds.
pub fn add(
    store: &dyn HistoryStore,
    cache: &mut LastPromptCache,
    prompt: &str,
    cwd: Option<&str>,
    now_s: i64,
) -> HistoryResult<Added> {
    if normalize_prompt(prompt).is_none() {
        return Ok(Added::Empty);
    }
    if !cache.is_seeded() {
        cache.seed(store.last_prompt()?);
    }
    let trimmed = match cache.check(prompt) {
        Admission::Store(t) => t,
        Admission::Empty => return Ok(Added::Empty),
        Admission::Duplicate => return Ok(Added::Duplicate),
    };
    store.add(NewHistoryRow {
        prompt: trimmed,
        cwd: normalize_cwd(cwd),
        created_at: now_s,
    })?;
    cache.record(trimmed);
    Ok(Added::Stored)
}

/// Search with an FTS5 query; a blank query or a zero limit gives no rows.
pub fn search(
    store: &dyn HistoryStore,
    query: &str,
    limit: usize,
    cwd: Option<&str>,
) -> HistoryResult<Vec<HistoryEntry>> {
    let limit = clamp_limit(limit);
    if limit == 0 || trim_js(query).is_empty() {
        return Ok(Vec::new());
    }
    store.search(query, limit, normalize_cwd(cwd))
}

/// The newest rows; a zero limit gives no rows.
pub fn recent(
    store: &dyn HistoryStore,
    limit: usize,
    cwd: Option<&str>,
) -> HistoryResult<Vec<HistoryEntry>> {
    let limit = clamp_limit(limit);
    if limit == 0 {
        return Ok(Vec::new());
    }
    store.recent(limit, normalize_cwd(cwd))
}

/// `[{"id", "prompt", "createdAt", "cwd"}]`.
pub fn entries_json(entries: &[HistoryEntry]) -> String {
    let mut out = String::from("[");
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("{{\"id\":{},\"prompt\":", e.id));
        push_quoted(&mut out, &e.prompt);
        out.push_str(",\"createdAt\":\"");
        out.push_str(&crate::time::iso_from_ms(created_at_ms(e.created_at)));
        out.push_str("\",\"cwd\":");
        match &e.cwd {
            Some(c) => push_quoted(&mut out, c),
            None => out.push_str("null"),
        }
        out.push('}');
    }
    out.push(']');
    out
}

/// [`add`] for the shells: `{"added":true}`, or `{"added":false,"reason":"empty"}` /
/// `"duplicate"`.
pub fn add_json(
    store: &dyn HistoryStore,
    cache: &mut LastPromptCache,
    prompt: &str,
    cwd: Option<&str>,
    now_ms: i64,
) -> ApiResult {
    Ok(
        match add(store, cache, prompt, cwd, now_ms.div_euclid(1000))? {
            Added::Stored => "{\"added\":true}".to_string(),
            Added::Empty => "{\"added\":false,\"reason\":\"empty\"}".to_string(),
            Added::Duplicate => "{\"added\":false,\"reason\":\"duplicate\"}".to_string(),
        },
    )
}

/// [`search`] for the shells, as [`entries_json`].
pub fn search_json(
    store: &dyn HistoryStore,
    query: &str,
    limit: usize,
    cwd: Option<&str>,
) -> ApiResult {
    Ok(entries_json(&search(store, query, limit, cwd)?))
}

/// [`recent`] for the shells, as [`entries_json`].
pub fn recent_json(store: &dyn HistoryStore, limit: usize, cwd: Option<&str>) -> ApiResult {
    Ok(entries_json(&recent(store, limit, cwd)?))
}

/// Characters that belong to a token, like FTS5's `unicode61` tokenizer (letters,
/// numbers; everything else separates). Its diacritic folding is not reproduced.
fn is_token_char(c: char) -> bool {
    c.is_alphanumeric()
}

/// The lowercased tokens of `text`, approximately as FTS5's default tokenizer splits it.
pub fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !is_token_char(c))
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A safe FTS5 query from plain words: every token quoted and made a prefix, all
/// required (`foo bar` → `"foo"* "bar"*`; `git-commit` → `"git"* "commit"*`). Empty
/// when `text` has no token.
pub fn prefix_query(text: &str) -> String {
    tokenize(text)
        .iter()
        .map(|t| format!("\"{}\"*", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The FTS5 query language, as far as [`MemoryHistory`] understands it.
mod fts {
    use super::tokenize;

    /// A sequence of terms that must appear consecutively; a prefix term matches any
    /// token it starts.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Phrase {
        pub terms: Vec<(String, bool)>,
        /// `^`: must start at the first token.
        pub initial: bool,
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Expr {
        Phrase(Phrase),
        And(Box<Expr>, Box<Expr>),
        Or(Box<Expr>, Box<Expr>),
        Not(Box<Expr>, Box<Expr>),
        /// NEAR(...): approximated as all phrases present (the distance is ignored).
        Near(Vec<Phrase>),
        /// A column filter that excludes the only column: matches nothing.
        Nothing,
        /// An empty phrase (`""`): FTS5 drops it from the expression; alone it matches
        /// nothing.
        Empty,
    }

    impl Expr {
        pub fn and(a: Expr, b: Expr) -> Expr {
            match (a, b) {
                (Expr::Empty, x) | (x, Expr::Empty) => x,
                (a, b) => Expr::And(Box::new(a), Box::new(b)),
            }
        }

        pub fn or(a: Expr, b: Expr) -> Expr {
            match (a, b) {
                (Expr::Empty, x) | (x, Expr::Empty) => x,
                (a, b) => Expr::Or(Box::new(a), Box::new(b)),
            }
        }

        pub fn not(a: Expr, b: Expr) -> Expr {
            match (a, b) {
                (Expr::Empty, _) => Expr::Empty,
                (a, Expr::Empty) => a,
                (a, b) => Expr::Not(Box::new(a), Box::new(b)),
            }
        }
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Tok {
        Str(String),
        Word(String),
        Star,
        Plus,
        Caret,
        LParen,
        RParen,
        Colon,
        Comma,
        LBrace,
        RBrace,
        Minus,
    }

    fn bareword_char(c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_' || c == '\u{1a}' || !c.is_ascii()
    }

    fn syntax(near: &str) -> String {
        format!("fts5: syntax error near \"{near}\"")
    }

    fn lex(q: &str) -> Result<Vec<Tok>, String> {
        let mut out = Vec::new();
        let mut chars = q.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let tok = match c {
                c if c.is_whitespace() => continue,
                '"' => {
                    let mut s = String::new();
                    loop {
                        match chars.next() {
                            Some((_, '"')) if matches!(chars.peek(), Some((_, '"'))) => {
                                chars.next();
                                s.push('"');
                            }
                            Some((_, '"')) => break,
                            Some((_, ch)) => s.push(ch),
                            None => return Err("unterminated string".to_string()),
                        }
                    }
                    Tok::Str(s)
                }
                '*' => Tok::Star,
                '+' => Tok::Plus,
                '^' => Tok::Caret,
                '(' => Tok::LParen,
                ')' => Tok::RParen,
                ':' => Tok::Colon,
                ',' => Tok::Comma,
                '{' => Tok::LBrace,
                '}' => Tok::RBrace,
                '-' => Tok::Minus,
                c if bareword_char(c) => {
                    let mut end = i + c.len_utf8();
                    while let Some(&(j, d)) = chars.peek() {
                        if !bareword_char(d) {
                            break;
                        }
                        end = j + d.len_utf8();
                        chars.next();
                    }
                    Tok::Word(q[i..end].to_string())
                }
                _ => return Err(syntax(&q[i..])),
            };
            out.push(tok);
        }
        Ok(out)
    }

    struct Parser {
        toks: Vec<Tok>,
        pos: usize,
    }

    fn is_keyword(w: &str) -> bool {
        matches!(w, "AND" | "OR" | "NOT")
    }

    impl Parser {
        fn peek(&self) -> Option<&Tok> {
            self.toks.get(self.pos)
        }

        fn peek_at(&self, n: usize) -> Option<&Tok> {
            self.toks.get(self.pos + n)
        }

        fn eat(&mut self, t: &Tok) -> bool {
            if self.peek() == Some(t) {
                self.pos += 1;
                true
            } else {
                false
            }
        }

        fn error_here(&self) -> String {
            match self.peek() {
                None => "fts5: syntax error near \"\"".to_string(),
                Some(t) => syntax(&match t {
                    Tok::Str(s) => format!("\"{s}\""),
                    Tok::Word(w) => w.clone(),
                    Tok::Star => "*".into(),
                    Tok::Plus => "+".into(),
                    Tok::Caret => "^".into(),
                    Tok::LParen => "(".into(),
                    Tok::RParen => ")".into(),
                    Tok::Colon => ":".into(),
                    Tok::Comma => ",".into(),
                    Tok::LBrace => "{".into(),
                    Tok::RBrace => "}".into(),
                    Tok::Minus => "-".into(),
                }),
            }
        }

        fn word_is(&self, w: &str) -> bool {
            matches!(self.peek(), Some(Tok::Word(x)) if x == w)
        }

        /// Whether a phrase group (`cnearset` in FTS5's grammar) starts here: these are
        /// the only things implicitly ANDed (`a b`, not `a (b)`).
        fn starts_group(&self) -> bool {
            match self.peek() {
                Some(Tok::Word(w)) => !is_keyword(w),
                Some(Tok::Str(_) | Tok::Caret | Tok::Minus | Tok::LBrace) => true,
                _ => false,
            }
        }

        fn or(&mut self) -> Result<Expr, String> {
            let mut left = self.and()?;
            while self.word_is("OR") {
                self.pos += 1;
                let right = self.and()?;
                left = Expr::or(left, right);
            }
            Ok(left)
        }

        fn and(&mut self) -> Result<Expr, String> {
            let mut left = self.not()?;
            while self.word_is("AND") {
                self.pos += 1;
                let right = self.not()?;
                left = Expr::and(left, right);
            }
            Ok(left)
        }

        fn not(&mut self) -> Result<Expr, String> {
            let mut left = self.unit()?;
            while self.word_is("NOT") {
                self.pos += 1;
                let right = self.unit()?;
                left = Expr::not(left, right);
            }
            Ok(left)
        }

        /// `( expr )`, `colset : ( expr )`, or a list of phrase groups (implicit AND,
        /// which binds tighter than NOT, AND and OR).
        fn unit(&mut self) -> Result<Expr, String> {
            if self.eat(&Tok::LParen) {
                return self.parenthesized();
            }
            let mut list = self.group()?;
            while self.starts_group() {
                let next = self.group()?;
                list = Expr::and(list, next);
            }
            Ok(list)
        }

        /// The rest of `( expr )` after the opening parenthesis.
        fn parenthesized(&mut self) -> Result<Expr, String> {
            let e = self.or()?;
            if !self.eat(&Tok::RParen) {
                return Err(self.error_here());
            }
            Ok(e)
        }

        /// `[colset :] nearset`, or `colset : ( expr )` (only as the first group of a
        /// list; FTS5 does not AND it implicitly either).
        fn group(&mut self) -> Result<Expr, String> {
            let negated = self.eat(&Tok::Minus);
            let colset = negated
                || matches!(self.peek(), Some(Tok::LBrace))
                || (matches!(self.peek(), Some(Tok::Word(_)))
                    && self.peek_at(1) == Some(&Tok::Colon));
            if colset {
                let names = self.column_names()?;
                for n in &names {
                    if !n.eq_ignore_ascii_case("prompt") {
                        return Err(format!("no such column: {n}"));
                    }
                }
                if !self.eat(&Tok::Colon) {
                    return Err(self.error_here());
                }
                let inner = if self.eat(&Tok::LParen) {
                    self.parenthesized()?
                } else {
                    self.nearset()?
                };
                return Ok(if negated { Expr::Nothing } else { inner });
            }
            self.nearset()
        }

        fn column_names(&mut self) -> Result<Vec<String>, String> {
            if self.eat(&Tok::LBrace) {
                let mut names = Vec::new();
                while let Some(Tok::Word(w)) = self.peek().cloned() {
                    self.pos += 1;
                    names.push(w);
                }
                if names.is_empty() || !self.eat(&Tok::RBrace) {
                    return Err(self.error_here());
                }
                return Ok(names);
            }
            match self.peek().cloned() {
                Some(Tok::Word(w)) => {
                    self.pos += 1;
                    Ok(vec![w])
                }
                _ => Err(self.error_here()),
            }
        }

        /// A phrase, `^phrase`, or `NEAR(phrase... [, N])`.
        fn nearset(&mut self) -> Result<Expr, String> {
            if self.word_is("NEAR") && self.peek_at(1) == Some(&Tok::LParen) {
                self.pos += 2;
                let mut phrases = Vec::new();
                while !matches!(self.peek(), Some(Tok::RParen | Tok::Comma) | None) {
                    phrases.push(self.phrase()?);
                }
                if self.eat(&Tok::Comma) {
                    match self.peek() {
                        Some(Tok::Word(n)) if n.bytes().all(|b| b.is_ascii_digit()) => {
                            self.pos += 1;
                        }
                        _ => return Err(self.error_here()),
                    }
                }
                if phrases.is_empty() || !self.eat(&Tok::RParen) {
                    return Err(self.error_here());
                }
                phrases.retain(|p| !p.terms.is_empty());
                return Ok(if phrases.is_empty() {
                    Expr::Empty
                } else {
                    Expr::Near(phrases)
                });
            }
            let p = self.phrase()?;
            Ok(if p.terms.is_empty() {
                Expr::Empty
            } else {
                Expr::Phrase(p)
            })
        }

        /// `[^] item [*] (+ item [*])*`, an item being a string or a bareword.
        fn phrase(&mut self) -> Result<Phrase, String> {
            let initial = self.eat(&Tok::Caret);
            let mut terms: Vec<(String, bool)> = Vec::new();
            loop {
                let text = match self.peek().cloned() {
                    Some(Tok::Str(s)) => s,
                    Some(Tok::Word(w)) if !is_keyword(&w) => w,
                    _ => return Err(self.error_here()),
                };
                self.pos += 1;
                let start = terms.len();
                terms.extend(tokenize(&text).into_iter().map(|t| (t, false)));
                if self.eat(&Tok::Star) && terms.len() > start {
                    if let Some(last) = terms.last_mut() {
                        last.1 = true;
                    }
                }
                if !self.eat(&Tok::Plus) {
                    break;
                }
            }
            Ok(Phrase { terms, initial })
        }
    }

    /// Parse an FTS5 query; the error is worded like SQLite's.
    pub fn parse(q: &str) -> Result<Expr, String> {
        let mut p = Parser {
            toks: lex(q)?,
            pos: 0,
        };
        let e = p.or()?;
        if p.pos < p.toks.len() {
            return Err(p.error_here());
        }
        Ok(e)
    }

    /// How often `phrase` occurs in `doc` (a token list).
    pub fn phrase_count(phrase: &Phrase, doc: &[String]) -> usize {
        let n = phrase.terms.len();
        if n == 0 || n > doc.len() {
            return 0;
        }
        let starts = if phrase.initial {
            0..1
        } else {
            0..doc.len() - n + 1
        };
        starts
            .filter(|&i| {
                phrase.terms.iter().enumerate().all(|(j, (t, prefix))| {
                    let tok = &doc[i + j];
                    if *prefix {
                        tok.starts_with(t.as_str())
                    } else {
                        tok == t
                    }
                })
            })
            .count()
    }

    pub fn matches(e: &Expr, doc: &[String]) -> bool {
        match e {
            Expr::Phrase(p) => phrase_count(p, doc) > 0,
            Expr::And(a, b) => matches(a, doc) && matches(b, doc),
            Expr::Or(a, b) => matches(a, doc) || matches(b, doc),
            Expr::Not(a, b) => matches(a, doc) && !matches(b, doc),
            Expr::Near(ps) => ps.iter().all(|p| phrase_count(p, doc) > 0),
            Expr::Nothing | Expr::Empty => false,
        }
    }

    /// The phrases that contribute to the rank (not those after NOT).
    pub fn scored_phrases<'a>(e: &'a Expr, out: &mut Vec<&'a Phrase>) {
        match e {
            Expr::Phrase(p) => out.push(p),
            Expr::And(a, b) | Expr::Or(a, b) => {
                scored_phrases(a, out);
                scored_phrases(b, out);
            }
            Expr::Not(a, _) => scored_phrases(a, out),
            Expr::Near(ps) => out.extend(ps.iter()),
            Expr::Nothing | Expr::Empty => {}
        }
    }
}

/// An in-memory [`HistoryStore`], for tests and for hosts without SQLite (the browser).
///
/// Search **approximates** FTS5: the query is parsed as FTS5 syntax (phrases, `*`
/// prefixes, `^`, `+`, AND/OR/NOT, parentheses, the `prompt` column filter; NEAR is taken
/// as "all of these phrases", ignoring the distance), text is split into lowercased
/// letter/number runs like the `unicode61` tokenizer but without its diacritic folding,
/// and ranking is an Okapi BM25 (k1 = 1.2, b = 0.75) like FTS5's `bm25()`, ties newest
/// first. Rows live as long as the store.
#[derive(Debug, Default)]
pub struct MemoryHistory {
    rows: RefCell<Vec<HistoryEntry>>,
    next_id: Cell<i64>,
}

impl MemoryHistory {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every row, in insertion order.
    pub fn rows(&self) -> Vec<HistoryEntry> {
        self.rows.borrow().clone()
    }
}

/// Newest first: `created_at`, then id.
fn newest_first(a: &HistoryEntry, b: &HistoryEntry) -> std::cmp::Ordering {
    (b.created_at, b.id).cmp(&(a.created_at, a.id))
}

impl HistoryStore for MemoryHistory {
    fn add(&self, row: NewHistoryRow<'_>) -> HistoryResult<()> {
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        self.rows.borrow_mut().push(HistoryEntry {
            id,
            prompt: row.prompt.to_string(),
            created_at: row.created_at,
            cwd: row.cwd.map(str::to_string),
        });
        Ok(())
    }

    fn search(
        &self,
        query: &str,
        limit: usize,
        cwd: Option<&str>,
    ) -> HistoryResult<Vec<HistoryEntry>> {
        let expr = fts::parse(query).map_err(HistoryError::InvalidQuery)?;
        let rows = self.rows.borrow();
        let docs: Vec<Vec<String>> = rows.iter().map(|r| tokenize(&r.prompt)).collect();
        // Statistics over the whole table, as FTS5 keeps them.
        let n = docs.len() as f64;
        let avg_len = (docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0)).max(1.0);
        let mut phrases = Vec::new();
        fts::scored_phrases(&expr, &mut phrases);
        let idf: Vec<f64> = phrases
            .iter()
            .map(|p| {
                let with = docs.iter().filter(|d| fts::phrase_count(p, d) > 0).count() as f64;
                let v = ((n - with + 0.5) / (with + 0.5)).ln();
                if v <= 0.0 {
                    1e-6
                } else {
                    v
                }
            })
            .collect();
        let (k1, b) = (1.2, 0.75);
        let mut hits: Vec<(f64, &HistoryEntry)> = rows
            .iter()
            .zip(&docs)
            .filter(|(r, _)| cwd.is_none() || r.cwd.as_deref() == cwd)
            .filter(|(_, d)| fts::matches(&expr, d))
            .map(|(r, d)| {
                let len = d.len() as f64;
                let score = phrases
                    .iter()
                    .zip(&idf)
                    .map(|(p, idf)| {
                        let tf = fts::phrase_count(p, d) as f64;
                        idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / avg_len))
                    })
                    .sum::<f64>();
                (score, r)
            })
            .collect();
        hits.sort_by(|(sa, a), (sb, b)| sb.total_cmp(sa).then_with(|| newest_first(a, b)));
        Ok(hits
            .into_iter()
            .take(limit)
            .map(|(_, r)| r.clone())
            .collect())
    }

    fn recent(&self, limit: usize, cwd: Option<&str>) -> HistoryResult<Vec<HistoryEntry>> {
        let mut rows: Vec<HistoryEntry> = self
            .rows
            .borrow()
            .iter()
            .filter(|r| cwd.is_none() || r.cwd.as_deref() == cwd)
            .cloned()
            .collect();
        rows.sort_by(newest_first);
        rows.truncate(limit);
        Ok(rows)
    }

    fn last_prompt(&self) -> HistoryResult<Option<String>> {
        Ok(self
            .rows
            .borrow()
            .iter()
            .max_by_key(|r| r.id)
            .map(|r| r.prompt.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompts(rows: &[HistoryEntry]) -> Vec<&str> {
        rows.iter().map(|r| r.prompt.as_str()).collect()
    }

    /// A store with prompts added at t = 1000, 1001, ... seconds.
    fn store_with(items: &[(&str, Option<&str>)]) -> MemoryHistory {
        let store = MemoryHistory::new();
        let mut cache = LastPromptCache::new();
        for (i, (p, cwd)) in items.iter().enumerate() {
            add(&store, &mut cache, p, *cwd, 1000 + i as i64).expect("add");
        }
        store
    }

    #[test]
    fn db_path_is_in_the_agent_dir() {
        assert_eq!(db_path("/h/.xcsh/agent"), "/h/.xcsh/agent/history.db");
        assert_eq!(db_path("/h/.xcsh/agent/"), "/h/.xcsh/agent/history.db");
    }

    #[test]
    fn cache_skips_consecutive_duplicates_after_trimming_and_blanks() {
        let mut c = LastPromptCache::new();
        assert!(!c.is_seeded());
        c.seed(None);
        assert_eq!(
            c.check("  fix the parser \n"),
            Admission::Store("fix the parser")
        );
        c.record("fix the parser");
        assert_eq!(c.check("fix the parser"), Admission::Duplicate);
        assert_eq!(c.check("\tfix the parser  "), Admission::Duplicate);
        // Case and inner spaces count.
        assert_eq!(
            c.check("Fix the parser"),
            Admission::Store("Fix the parser")
        );
        assert_eq!(
            c.check("fix  the parser"),
            Admission::Store("fix  the parser")
        );
        assert_eq!(c.check(""), Admission::Empty);
        assert_eq!(c.check(" \n\t\u{feff}\u{a0}"), Admission::Empty);
        // Checking changes nothing; recording does.
        assert_eq!(c.last(), Some("fix the parser"));
        c.record("other");
        assert_eq!(
            c.check("fix the parser"),
            Admission::Store("fix the parser")
        );
    }

    #[test]
    fn cache_is_seeded_from_the_store_on_the_first_add() {
        let store = MemoryHistory::new();
        store
            .add(NewHistoryRow {
                prompt: "from an earlier process",
                cwd: None,
                created_at: 5,
            })
            .expect("add");
        let mut cache = LastPromptCache::new();
        let r = add(&store, &mut cache, " from an earlier process ", None, 6);
        assert_eq!(r, Ok(Added::Duplicate));
        assert!(cache.is_seeded());
        assert_eq!(store.rows().len(), 1);
    }

    #[test]
    fn add_stores_trimmed_prompts_and_only_non_consecutive_repeats() {
        let store = MemoryHistory::new();
        let mut cache = LastPromptCache::new();
        let mut add = |p: &str| add(&store, &mut cache, p, Some("/w"), 7).expect("add");
        assert_eq!(add("a"), Added::Stored);
        assert_eq!(add(" a "), Added::Duplicate);
        assert_eq!(add("   "), Added::Empty);
        assert_eq!(add("b"), Added::Stored);
        assert_eq!(add("a"), Added::Stored);
        assert_eq!(add("a"), Added::Duplicate);
        let rows = store.rows();
        assert_eq!(prompts(&rows), ["a", "b", "a"]);
        assert_eq!(rows[0].cwd.as_deref(), Some("/w"));
        assert_eq!(rows[0].created_at, 7);
    }

    #[test]
    fn a_duplicate_in_another_cwd_is_still_a_duplicate_and_empty_cwd_is_none() {
        let store = MemoryHistory::new();
        let mut cache = LastPromptCache::new();
        assert_eq!(add(&store, &mut cache, "x", Some(""), 1), Ok(Added::Stored));
        assert_eq!(
            add(&store, &mut cache, "x", Some("/b"), 2),
            Ok(Added::Duplicate)
        );
        assert_eq!(store.rows()[0].cwd, None);
    }

    #[test]
    fn a_failed_insert_does_not_update_the_cache() {
        struct Failing;
        impl HistoryStore for Failing {
            fn add(&self, _: NewHistoryRow<'_>) -> HistoryResult<()> {
                Err(HistoryError::Other("disk full".into()))
            }
            fn search(
                &self,
                _: &str,
                _: usize,
                _: Option<&str>,
            ) -> HistoryResult<Vec<HistoryEntry>> {
                Ok(vec![])
            }
            fn recent(&self, _: usize, _: Option<&str>) -> HistoryResult<Vec<HistoryEntry>> {
                Ok(vec![])
            }
            fn last_prompt(&self) -> HistoryResult<Option<String>> {
                Ok(None)
            }
        }
        let mut cache = LastPromptCache::new();
        let e = add(&Failing, &mut cache, "p", None, 1).unwrap_err();
        assert_eq!(e.to_string(), "history: disk full");
        assert_eq!(cache.last(), None);
        let api: ApiError = e.into();
        assert_eq!(api.kind, ErrorKind::Storage);
    }

    #[test]
    fn prefix_query_quotes_every_token_as_a_prefix() {
        assert_eq!(prefix_query("foo bar"), "\"foo\"* \"bar\"*");
        assert_eq!(prefix_query("  Git-Commit  "), "\"git\"* \"commit\"*");
        assert_eq!(
            prefix_query("a\"b (c) OR NOT d*"),
            "\"a\"* \"b\"* \"c\"* \"or\"* \"not\"* \"d\"*"
        );
        assert_eq!(prefix_query("héllo wörld"), "\"héllo\"* \"wörld\"*");
        assert_eq!(prefix_query("  -- ** "), "");
        assert_eq!(prefix_query(""), "");
        // Whatever the input, the result parses.
        for text in ["x\"y", "((", "NEAR(", "a:b", "^-+*", "日本語 テキスト"] {
            let q = prefix_query(text);
            assert!(q.is_empty() || fts::parse(&q).is_ok(), "{text:?} -> {q:?}");
        }
    }

    #[test]
    fn tokenizer_splits_on_non_alphanumerics_and_lowercases() {
        assert_eq!(
            tokenize("Parse the JSON-lines file_name.rs"),
            ["parse", "the", "json", "lines", "file", "name", "rs"]
        );
        assert!(fts::parse("é_x").is_ok());
    }

    #[test]
    fn memory_search_handles_prefixes_phrases_and_operators() {
        let s = store_with(&[
            ("parse the config file", Some("/a")),
            ("the parser fails on empty input", Some("/a")),
            ("write an exact phrase here", Some("/b")),
            ("phrase exact, reversed", Some("/b")),
            ("unrelated", None),
        ]);
        let q = |query: &str| {
            let rows = search(&s, query, 10, None).expect(query);
            let mut p: Vec<String> = prompts(&rows).iter().map(|s| s.to_string()).collect();
            p.sort();
            p
        };
        assert_eq!(
            q("pars*"),
            ["parse the config file", "the parser fails on empty input"]
        );
        assert_eq!(q("parse"), ["parse the config file"]);
        assert_eq!(q("\"exact phrase\""), ["write an exact phrase here"]);
        assert_eq!(
            q("exact phrase"),
            ["phrase exact, reversed", "write an exact phrase here"]
        );
        assert_eq!(q("exact + phrase"), ["write an exact phrase here"]);
        assert_eq!(q("\"exact ph\"*"), ["write an exact phrase here"]);
        assert_eq!(
            q("parse OR unrelated"),
            ["parse the config file", "unrelated"]
        );
        assert_eq!(q("pars* NOT config"), ["the parser fails on empty input"]);
        assert_eq!(
            q("pars* AND (empty OR nothing)"),
            ["the parser fails on empty input"]
        );
        assert_eq!(q("^the"), ["the parser fails on empty input"]);
        assert_eq!(q("prompt:unrelated"), ["unrelated"]);
        assert_eq!(
            q("NEAR(exact phrase, 3)"),
            ["phrase exact, reversed", "write an exact phrase here"]
        );
        assert_eq!(q("PARSE"), ["parse the config file"]);
        assert_eq!(
            q("prompt:(parse OR unrelated)"),
            ["parse the config file", "unrelated"]
        );
        assert_eq!(q("{prompt} : parse"), ["parse the config file"]);
        assert_eq!(
            q("parse \"\""),
            ["parse the config file"],
            "an empty phrase is dropped"
        );
        assert_eq!(
            q("pars*config"),
            ["parse the config file"],
            "`a*b` is `a* b`"
        );
        assert_eq!(q("(pars* OR exact) NOT config").len(), 3);
        assert!(q("\"\"").is_empty());
        assert!(q("pars* -prompt:x").is_empty());
        assert!(q("-prompt:parse").is_empty());
        assert!(q("nothing*").is_empty());
    }

    #[test]
    fn memory_search_rejects_malformed_queries_like_fts5() {
        let s = store_with(&[("x", None)]);
        for bad in [
            "(",
            "a)",
            "\"open",
            "AND x",
            "NOT x",
            "x OR",
            "x NOT",
            "foo-bar",
            "a:b",
            "NEAR(a b,)",
            "x . y",
            "x (y)",
            "(x) y",
            "+x",
            "x ,",
            "near(a b)",
            "x +",
        ] {
            match search(&s, bad, 10, None) {
                Err(HistoryError::InvalidQuery(m)) => assert!(!m.is_empty()),
                other => panic!("{bad:?}: expected invalid-query, got {other:?}"),
            }
        }
        let e: ApiError = search(&s, "(", 1, None).unwrap_err().into();
        assert_eq!(e.kind, ErrorKind::InvalidInput);
        assert!(
            e.message
                .starts_with("invalid history query: fts5: syntax error"),
            "{}",
            e.message
        );
    }

    #[test]
    fn memory_search_ranks_best_match_first_then_newest() {
        let s = store_with(&[
            ("parser", None),
            ("parser parser parser", None),
            (
                "a long prompt that mentions the parser once among many other words",
                None,
            ),
            ("parser", None),
        ]);
        let rows = search(&s, "parser", 10, None).expect("search");
        // Short documents and repeated terms rank higher; equal ones newest first.
        let got: Vec<(&str, i64)> = rows.iter().map(|r| (r.prompt.as_str(), r.id)).collect();
        assert_eq!(
            got,
            [
                ("parser parser parser", 2),
                ("parser", 4),
                ("parser", 1),
                (
                    "a long prompt that mentions the parser once among many other words",
                    3
                )
            ]
        );
    }

    #[test]
    fn cwd_filter_limit_and_ordering() {
        let s = store_with(&[
            ("one", Some("/a")),
            ("two", Some("/b")),
            ("three", Some("/a")),
            ("four", None),
            ("five", Some("/a")),
        ]);
        assert_eq!(
            prompts(&recent(&s, 10, None).unwrap()),
            ["five", "four", "three", "two", "one"]
        );
        assert_eq!(
            prompts(&recent(&s, 2, Some("/a")).unwrap()),
            ["five", "three"]
        );
        assert_eq!(
            prompts(&recent(&s, 10, Some("")).unwrap()).len(),
            5,
            "empty cwd: no filter"
        );
        assert!(recent(&s, 0, None).unwrap().is_empty());
        assert!(recent(&s, 10, Some("/none")).unwrap().is_empty());
        assert_eq!(
            prompts(&search(&s, "t*", 10, Some("/a")).unwrap()),
            ["three"]
        );
        assert_eq!(
            search(&s, "one OR two OR three OR four OR five", 3, None)
                .unwrap()
                .len(),
            3
        );
        assert!(search(&s, "   ", 10, None).unwrap().is_empty());
        assert!(search(&s, "one", 0, None).unwrap().is_empty());
        // Same second: the higher id is newer.
        let t = MemoryHistory::new();
        let mut cache = LastPromptCache::new();
        for p in ["x", "y", "z"] {
            add(&t, &mut cache, p, None, 50).unwrap();
        }
        assert_eq!(prompts(&recent(&t, 3, None).unwrap()), ["z", "y", "x"]);
    }

    #[test]
    fn limits_are_clamped() {
        assert_eq!(clamp_limit(5), 5);
        assert_eq!(clamp_limit(usize::MAX), MAX_LIMIT);
        let s = MemoryHistory::new();
        let mut cache = LastPromptCache::new();
        for i in 0..MAX_LIMIT + 5 {
            add(&s, &mut cache, &format!("p{i}"), None, i as i64).unwrap();
        }
        assert_eq!(recent(&s, usize::MAX, None).unwrap().len(), MAX_LIMIT);
    }

    #[test]
    fn created_at_is_seconds_and_milliseconds_are_recognised() {
        assert_eq!(created_at_ms(1_700_000_000), 1_700_000_000_000);
        assert_eq!(created_at_ms(1_700_000_000_123), 1_700_000_000_123);
        assert_eq!(created_at_ms(0), 0);
    }

    #[test]
    fn json_shape() {
        let rows = vec![
            HistoryEntry {
                id: 2,
                prompt: "say \"hi\"\n".into(),
                created_at: 1_771_237_230,
                cwd: Some("/w".into()),
            },
            HistoryEntry {
                id: 1,
                prompt: "x".into(),
                created_at: 1_771_237_230_123,
                cwd: None,
            },
        ];
        assert_eq!(
            entries_json(&rows),
            r#"[{"id":2,"prompt":"say \"hi\"\n","createdAt":"2026-02-16T10:20:30.000Z","cwd":"/w"},{"id":1,"prompt":"x","createdAt":"2026-02-16T10:20:30.123Z","cwd":null}]"#
        );
        assert_eq!(entries_json(&[]), "[]");
        let v: serde_json::Value = serde_json::from_str(&entries_json(&rows)).expect("valid JSON");
        assert_eq!(v[0]["prompt"], "say \"hi\"\n");
    }

    #[test]
    fn add_json_reports_what_happened() {
        let s = MemoryHistory::new();
        let mut c = LastPromptCache::new();
        assert_eq!(
            add_json(&s, &mut c, "p", None, 1_500).unwrap(),
            r#"{"added":true}"#
        );
        assert_eq!(s.rows()[0].created_at, 1, "milliseconds to seconds");
        assert_eq!(
            add_json(&s, &mut c, "p", None, 2_000).unwrap(),
            r#"{"added":false,"reason":"duplicate"}"#
        );
        assert_eq!(
            add_json(&s, &mut c, " ", None, 2_000).unwrap(),
            r#"{"added":false,"reason":"empty"}"#
        );
        assert_eq!(
            recent_json(&s, 5, None).unwrap(),
            r#"[{"id":1,"prompt":"p","createdAt":"1970-01-01T00:00:01.000Z","cwd":null}]"#
        );
        assert_eq!(
            search_json(&s, "p*", 5, None).unwrap(),
            recent_json(&s, 5, None).unwrap()
        );
    }
}
