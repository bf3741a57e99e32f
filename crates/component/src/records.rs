//! The core's typed results as `session-api`'s WIT records: one function per record,
//! field for field. Every value is the core's (its structs and accessors); nothing is
//! derived here but the integer widths WIT asks for.

use xcsh_session::history::{Added, HistoryEntry};
use xcsh_session::listing::{RecentSessionInfo, SessionInfo as CoreSessionInfo};
use xcsh_session::resume::ContinueSource as CoreContinueSource;
use xcsh_session::session::{
    ForkResult, LoadReport as CoreLoadReport, Session, TreeNode as CoreTreeNode,
};
use xcsh_session::{
    BlobPut, GcReport as CoreGcReport, Header, IssueKind as CoreIssueKind, Resource,
};

use crate::exports::xcsh::session::session_api::{
    BlobRef, ContinueSource, Continued, ForkOutcome, GcReport, HistoryAddOutcome, HistoryRow,
    HistorySkip, IssueKind, LoadIssue, LoadReport, Migration, NonEntry, RecentSession, ResolvedUrl,
    ScoredSession, SessionHeader, SessionInfo, SessionSummary, TreeNode,
};

/// A count as WIT's `u32`, saturating (no session holds 2^32 of anything).
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A byte size or offset as WIT's `u64` (lossless: `usize` is at most 64 bits).
fn bytes(n: usize) -> u64 {
    n as u64
}

pub fn header(h: &Header) -> SessionHeader {
    SessionHeader {
        id: h.id().to_string(),
        version: h.version(),
        timestamp: h.timestamp().map(str::to_string),
        cwd: h.cwd().map(str::to_string),
        parent_session: h.parent_session().map(str::to_string),
        title: h.title().map(str::to_string),
        json: h.to_json(),
    }
}

fn issue_kind(k: &CoreIssueKind) -> IssueKind {
    match k {
        CoreIssueKind::Unparsable => IssueKind::Unparsable,
        CoreIssueKind::TornTail => IssueKind::TornTail,
        CoreIssueKind::GluedRecord => IssueKind::GluedRecord,
    }
}

pub fn load_report(r: &CoreLoadReport) -> LoadReport {
    LoadReport {
        file_existed: r.file_existed,
        issues: r
            .issues
            .iter()
            .map(|i| LoadIssue {
                line: count(i.line),
                offset: bytes(i.offset),
                kind: issue_kind(&i.kind),
                detail: i.detail.clone(),
            })
            .collect(),
        non_entries: r
            .non_entries
            .iter()
            .map(|n| NonEntry {
                offset: bytes(n.offset),
                reason: n.reason.clone(),
            })
            .collect(),
        header_problem: r.header_problem.clone(),
        invalid_utf8: r.invalid_utf8,
        duplicate_ids: r.duplicate_ids.clone(),
        migration: r.migration.as_ref().map(|m| Migration {
            from_version: m.from_version,
            to_version: m.to_version,
            entries_changed: count(m.entries_changed),
        }),
        backup_path: r.backup_path.clone(),
        missing_blobs: r.missing_blobs.clone(),
        file_version: r.file_version,
    }
}

/// `show`, from the record the JSON prints.
pub fn summary(s: &Session) -> SessionSummary {
    let shown = s.show_record();
    SessionSummary {
        header: header(s.header()),
        entry_count: count(shown.entry_count),
        leaf_id: shown.leaf_id.map(str::to_string),
        version: shown.version,
        migration_needed: shown.migration_needed,
        report: load_report(s.report()),
    }
}

/// A recent-list item, named and dated as the core shows it at `now_ms`.
pub fn recent(item: &RecentSessionInfo, now_ms: i64) -> RecentSession {
    let shown = item.record(now_ms);
    RecentSession {
        path: item.head.path.clone(),
        id: item.head.id.clone(),
        cwd: item.head.cwd.clone(),
        title: item.head.title.clone(),
        name: shown.name,
        full_name: shown.full_name,
        time_ago: shown.time_ago,
        modified_ms: item.mtime_ms,
    }
}

pub fn session_info(i: CoreSessionInfo) -> SessionInfo {
    SessionInfo {
        path: i.head.path,
        id: i.head.id,
        cwd: i.head.cwd,
        title: i.head.title,
        parent_session_path: i.parent_session_path,
        created: i.created,
        modified_ms: i.modified_ms,
        message_count: count(i.message_count),
        first_message: i.first_message,
        all_messages_text: i.all_messages_text.unwrap_or_default(),
    }
}

pub fn scored((info, score): (CoreSessionInfo, u32)) -> ScoredSession {
    ScoredSession {
        score,
        session: session_info(info),
    }
}

pub fn continued((path, source): (String, CoreContinueSource)) -> Continued {
    Continued {
        path,
        source: match source {
            CoreContinueSource::Breadcrumb => ContinueSource::Breadcrumb,
            CoreContinueSource::MostRecent => ContinueSource::MostRecent,
            CoreContinueSource::New => ContinueSource::New,
        },
    }
}

pub fn blob_ref(b: BlobPut) -> BlobRef {
    BlobRef {
        hash: b.hash,
        ref_: b.reference,
        path: b.path,
    }
}

pub fn resolved_url(r: Resource) -> ResolvedUrl {
    ResolvedUrl {
        content: r.content,
        mime_type: r.mime_type.to_string(),
        size: bytes(r.size),
    }
}

pub fn fork_outcome(r: ForkResult) -> ForkOutcome {
    ForkOutcome {
        old_file: r.old_file,
        new_file: r.new_file,
        warnings: r.warnings,
    }
}

pub fn gc_report(r: CoreGcReport) -> GcReport {
    GcReport {
        dry_run: r.dry_run,
        scanned_files: count(r.scanned_files),
        referenced: count(r.referenced),
        deleted: r.deleted,
        kept_recent: r.kept_recent,
        kept_pinned: r.kept_pinned,
        missing: r.missing,
        forgotten: r.forgotten,
        stale_files: r.stale_files,
        stale_indexes: r.stale_indexes,
    }
}

pub fn history_row(r: HistoryEntry) -> HistoryRow {
    HistoryRow {
        id: r.id,
        created_at: r.created_at_seconds(),
        prompt: r.prompt,
        cwd: r.cwd,
    }
}

pub fn history_added(a: Added) -> HistoryAddOutcome {
    match a {
        Added::Stored => HistoryAddOutcome::Added,
        Added::Empty => HistoryAddOutcome::Skipped(HistorySkip::Empty),
        Added::Duplicate => HistoryAddOutcome::Skipped(HistorySkip::Duplicate),
    }
}

pub fn tree_node(n: CoreTreeNode) -> TreeNode {
    TreeNode {
        index: count(n.index),
        id: n.id,
        parent_id: n.parent_id,
        entry_type: n.entry_type,
        timestamp: n.timestamp,
        label: n.label,
        depth: count(n.depth),
        child_count: count(n.child_count),
    }
}
