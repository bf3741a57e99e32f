//! The JSON façade every shell calls: one function per CLI/JS/WIT operation, taking the
//! storage port and plain arguments and returning JSON text. Shells only convert
//! arguments and print; the three hosts therefore print identical bytes.

use crate::context::Leaf;
use crate::error::Result;
use crate::json::{push_quoted, quote};
use crate::jsonl::IssueKind;
use crate::session::{LoadReport, OpenOptions, Persistence, Session};
use crate::storage::Storage;
use std::rc::Rc;

fn open(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
    persistence: Persistence,
) -> Result<Session> {
    Session::open(
        storage,
        path,
        &OpenOptions {
            persistence,
            agent_dir: agent_dir.to_string(),
            cwd: String::new(),
        },
    )
}

/// The load report as JSON: issues, salvage, migration, backup, missing blobs.
pub fn report_json(report: &LoadReport) -> String {
    let mut out = String::from("{\"issues\":[");
    for (i, issue) in report.issues.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let kind = match issue.kind {
            IssueKind::Unparsable => "unparsable",
            IssueKind::TornTail => "tornTail",
            IssueKind::GluedRecord => "gluedRecord",
        };
        out.push_str(&format!(
            "{{\"line\":{},\"kind\":\"{kind}\",\"detail\":{}}}",
            issue.line,
            quote(&issue.detail)
        ));
    }
    out.push_str("],\"nonEntries\":");
    out.push_str(&report.non_entries.len().to_string());
    if let Some(h) = &report.header_problem {
        out.push_str(",\"headerProblem\":");
        push_quoted(&mut out, h);
    }
    if report.invalid_utf8 {
        out.push_str(",\"invalidUtf8\":true");
    }
    if !report.duplicate_ids.is_empty() {
        out.push_str(&format!(",\"duplicateIds\":{}", report.duplicate_ids.len()));
    }
    if let Some(m) = &report.migration {
        out.push_str(&format!(
            ",\"migration\":{{\"fromVersion\":{},\"toVersion\":{},\"entriesChanged\":{}}}",
            m.from_version, m.to_version, m.entries_changed
        ));
    }
    if let Some(b) = &report.backup_path {
        out.push_str(",\"backupPath\":");
        push_quoted(&mut out, b);
    }
    if !report.missing_blobs.is_empty() {
        out.push_str(",\"missingBlobs\":[");
        out.push_str(
            &report
                .missing_blobs
                .iter()
                .map(|h| quote(h))
                .collect::<Vec<_>>()
                .join(","),
        );
        out.push(']');
    }
    out.push('}');
    out
}

/// `show`: header, entry count, leaf id, version on disk, whether a migration is needed.
pub fn show_json(session: &Session) -> String {
    let r = session.report();
    format!(
        "{{\"header\":{},\"entryCount\":{},\"leafId\":{},\"version\":{},\"migrationNeeded\":{},\"report\":{}}}",
        session.header().to_json(),
        session.entries().len(),
        session.leaf_id().map(quote).unwrap_or_else(|| "null".into()),
        r.file_version,
        r.migration.is_some(),
        report_json(r)
    )
}

/// `context`: the SessionContext as the agent builds it.
pub fn context_json(session: &Session, leaf: Option<&str>) -> String {
    match leaf {
        Some(id) => session.context_at(Leaf::Id(id)).to_json(),
        None => session.context_at(Leaf::Last).to_json(),
    }
}

pub fn show_file(storage: Rc<dyn Storage>, path: &str, agent_dir: &str) -> Result<String> {
    Ok(show_json(&open(
        storage,
        path,
        agent_dir,
        Persistence::ReadOnly,
    )?))
}

pub fn context_file(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
    leaf: Option<&str>,
) -> Result<String> {
    let s = open(storage, path, agent_dir, Persistence::ReadOnly)?;
    if let Some(id) = leaf {
        s.entry(id)?;
    }
    Ok(context_json(&s, leaf))
}

pub fn tree_file(storage: Rc<dyn Storage>, path: &str, agent_dir: &str) -> Result<String> {
    let s = open(storage, path, agent_dir, Persistence::ReadOnly)?;
    Ok(s.tree().to_json(&s))
}

/// `migrate`: open for writing (which migrates and rewrites) and say what changed.
pub fn migrate_file(storage: Rc<dyn Storage>, path: &str, agent_dir: &str) -> Result<String> {
    let s = open(storage, path, agent_dir, Persistence::Persistent)?;
    Ok(report_json(s.report()))
}

/// `append`: one entry as the child of the current leaf; returns `{"id": ...}`.
pub fn append_file(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
    entry_json: &str,
) -> Result<String> {
    let mut s = open(storage, path, agent_dir, Persistence::Persistent)?;
    let id = s.append_entry_json(entry_json)?;
    s.flush()?;
    Ok(format!("{{\"id\":{}}}", quote(&id)))
}

/// The error categories every shell reports (WIT `error-kind`, JS `error.kind`, CLI exit
/// codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    EntryNotFound,
    NotFound,
    InvalidInput,
    ReadOnly,
    Persistence,
    Storage,
}

impl ErrorKind {
    pub fn of(e: &crate::error::SessionError) -> ErrorKind {
        use crate::error::SessionError as E;
        match e {
            E::EntryNotFound(_) => ErrorKind::EntryNotFound,
            E::Storage(s) if s.is_not_found() => ErrorKind::NotFound,
            E::Storage(_) => ErrorKind::Storage,
            E::InvalidInput(_) => ErrorKind::InvalidInput,
            E::ReadOnly(_) => ErrorKind::ReadOnly,
            E::Persistence { .. } => ErrorKind::Persistence,
        }
    }

    /// camelCase name used in JS errors and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::EntryNotFound => "entryNotFound",
            ErrorKind::NotFound => "notFound",
            ErrorKind::InvalidInput => "invalidInput",
            ErrorKind::ReadOnly => "readOnly",
            ErrorKind::Persistence => "persistence",
            ErrorKind::Storage => "storage",
        }
    }
}
