//! `sync`: the agent directory's sessions with a remote, through the core's sync
//! (`xcsh_session::sync`) over the confined filesystem storage and an `object_store`
//! remote ([`crate::remote`]). Runs natively, as `history` does: the core decides
//! everything, this file converts the arguments and prints the report.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use xcsh_session::sync::{sync_with_progress, Scope, SessionSync, SyncOptions, SyncReport};

use crate::{confine, fshost, progress, remote};

#[derive(Args, Debug)]
pub struct SyncArgs {
    /// The remote: `s3://BUCKET/PREFIX` (credentials and region from the standard `AWS_*`
    /// variables) or `file:///DIR` (a shared folder).
    #[arg(long, value_name = "URL")]
    remote: String,
    /// The S3 endpoint of a store other than AWS (Garage, MinIO, R2, ...); default
    /// `$AWS_ENDPOINT_URL`.
    #[arg(long, value_name = "URL")]
    endpoint: Option<String>,
    /// The project whose sessions to sync (default: the current directory's).
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    cwd: Option<PathBuf>,
    /// Every session of the agent directory and of the remote.
    #[arg(long)]
    all: bool,
    /// Say what would move; move nothing, change nothing.
    #[arg(long)]
    dry_run: bool,
    /// The report as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(agent_dir: PathBuf, args: &SyncArgs) -> Result<ExitCode> {
    let (store, prefix) = remote::open(&args.remote, args.endpoint.as_deref())?;
    if !args.dry_run {
        std::fs::create_dir_all(&agent_dir)
            .with_context(|| format!("creating the agent directory {}", agent_dir.display()))?;
    }
    let agent = confine::absolute_dir(&agent_dir)
        .with_context(|| format!("the agent directory {}", agent_dir.display()))?;
    let roots = confine::Roots::new(std::slice::from_ref(&agent))
        .map_err(|e| anyhow::anyhow!("resolving the roots: {e}"))?;
    let storage = fshost::confined_storage(roots, !args.dry_run);
    let agent = agent
        .to_str()
        .context("the agent directory is not valid UTF-8")?
        .to_string();
    let scope = if args.all {
        Scope::All
    } else {
        let cwd = match &args.cwd {
            Some(d) => confine::absolute_cwd(d)
                .with_context(|| format!("resolving the directory {}", d.display()))?,
            None => std::env::current_dir().context("reading the current directory")?,
        };
        let cwd = cwd.to_str().context("the directory is not valid UTF-8")?;
        let dir = xcsh_session::paths::session_dir_for_cwd(&agent, cwd);
        Scope::Project(xcsh_session::storage::basename(&dir).to_string())
    };
    let opts = SyncOptions {
        remote: store.id().to_string(),
        prefix,
        scope,
        dry_run: args.dry_run,
    };
    let bar = progress::bar(0, "{spinner} syncing sessions {pos}/{len} ({elapsed})");
    let report = sync_with_progress(
        std::rc::Rc::new(storage),
        &agent,
        &store,
        &opts,
        &mut |done, total, _| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        },
    );
    bar.finish_and_clear();
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            eprintln!("xcsh-session sync: {e}");
            return Ok(ExitCode::from(crate::EXIT_ERROR));
        }
    };
    if args.json {
        println!("{}", json(&report, args.dry_run));
    } else {
        print!("{}", summary(&report, args.dry_run));
    }
    Ok(ExitCode::SUCCESS)
}

fn session_json(s: &SessionSync) -> serde_json::Value {
    serde_json::json!({
        "project": s.project, "session": s.session, "file": s.file,
        "pushedEntries": s.pushed_entries, "pushedBytes": s.pushed_bytes, "pulledEntries": s.pulled_entries,
        "created": s.created, "rewritten": s.rewritten, "held": s.held, "branches": s.branches,
        "refused": s.refused, "inUse": s.in_use, "migrated": s.migrated,
    })
}

fn json(r: &SyncReport, dry_run: bool) -> serde_json::Value {
    serde_json::json!({
        "machine": r.machine,
        "dryRun": dry_run,
        "sessions": r.sessions.iter().map(session_json).collect::<Vec<_>>(),
    })
}

/// What moved and what diverged, for a person.
fn summary(r: &SyncReport, dry_run: bool) -> String {
    let pushed: usize = r.sessions.iter().map(|s| s.pushed_entries).sum();
    let bytes: u64 = r.sessions.iter().map(|s| s.pushed_bytes).sum();
    let pulled: usize = r.sessions.iter().map(|s| s.pulled_entries).sum();
    let changed = r.sessions.iter().filter(|s| s.changed()).count();
    let mut out = format!(
        "{}{} session{} compared, {changed} changed: {pushed} entr{} sent ({}), {pulled} received\n",
        if dry_run { "dry run (nothing moved): " } else { "" },
        r.sessions.len(),
        if r.sessions.len() == 1 { "" } else { "s" },
        if pushed == 1 { "y" } else { "ies" },
        human(bytes),
    );
    for s in &r.sessions {
        let name = s.file.as_deref().unwrap_or(&s.session);
        if s.migrated {
            out += &format!("  migrated to the current format first: {name}\n");
        }
        if s.created {
            out += &format!("  new here: {name}\n");
        }
        if !s.branches.is_empty() {
            out += &format!(
                "  {name}: another machine went on elsewhere; its branch{} to switch to: {}\n",
                if s.branches.len() == 1 { "" } else { "es" },
                s.branches.join(", ")
            );
        }
        if s.in_use {
            out += &format!("  {name}: open in the agent; sent, merged at the next sync\n");
        }
        if s.held > 0 {
            out += &format!(
                "  {name}: {} entr{} wait for their parents (next sync)\n",
                s.held,
                if s.held == 1 { "y" } else { "ies" }
            );
        }
        for why in &s.refused {
            out += &format!("  refused: {why}\n");
        }
    }
    out
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1 << 20 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
    }
}
