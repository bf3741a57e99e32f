//! `xcsh-session`: the native CLI of xcsh-session. It runs the session component
//! (`xcsh_session_component.wasm`) on wasmtime and gives it the real filesystem, confined
//! to a list of root directories, and the prompt-history database (`history.db`) through
//! SQLite (`history.rs`). Output is the JSON text the component returns.
//!
//! The component is embedded in the executable when it is built with
//! `XCSH_SESSION_EMBED=<file.wasm>` (`scripts/install`, `scripts/test-component`; see
//! build.rs and [`aot::locate_component`]), so the binary is self-contained.

mod aot;
mod confine;
mod fshost;
mod history;
#[cfg(target_os = "linux")]
mod hugemem;
mod progress;
mod remote;
mod rpc;
mod sync;

mod bindings {
    wasmtime::component::bindgen!({
        world: "session-component",
        path: "../wit",
        with: {
            "xcsh:session/storage.reader": crate::fshost::Reader,
        },
    });
}

use anyhow::{Context, Result};
use bindings::exports::xcsh::session::session_api::{ApiError, ErrorKind, GuestContextReader};
use bindings::exports::xcsh::session::session_json::GuestSessionSearch;
use bindings::SessionComponent;
use clap::{Args, Parser, Subcommand};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use wasmtime::component::{HasSelf, Linker, ResourceAny};
use wasmtime::{Config, Engine, Store};

#[derive(Parser, Debug)]
#[command(
    name = "xcsh-session",
    version,
    about = "Read, list, resume, migrate and append to xcsh/pi agent session files; search the prompt history"
)]
struct Cli {
    /// The agent directory (blobs live in `<DIR>/blobs`). Default: `$HOME/.xcsh/agent`.
    #[arg(long, global = true, value_name = "DIR")]
    agent_dir: Option<PathBuf>,
    /// Confine all file access to DIR (default: the agent directory, plus the directory
    /// of the session file for commands that take one).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The component to run (default: $XCSH_SESSION_COMPONENT, then the one embedded in
    /// this binary, then `xcsh_session_component.wasm` next to it).
    #[arg(long, global = true, value_name = "PATH")]
    component: Option<PathBuf>,
    /// Say on stderr which component runs and whether its compiled code came from the
    /// cache.
    #[arg(short, long, global = true)]
    verbose: bool,
    /// Neither read nor write the session index cache (`<agent-dir>/cache`): every open
    /// of a session scans its file. By default an open that had to scan keeps the index
    /// there, read-only commands included (it is a cache, never session data).
    #[arg(long, global = true)]
    no_index_cache: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Sync the sessions with a remote (an S3-compatible store or a shared folder): this
    /// machine's new entries go up, the other machines' are merged in by entry id;
    /// nothing is lost, the leaf stays where you left it.
    Sync(sync::SyncArgs),
    /// Header, entry count, leaf, version, whether a migration is needed, load report.
    Show {
        /// The session file (`.jsonl`).
        file: PathBuf,
        /// Output JSON (always on; accepted for symmetry).
        #[arg(long)]
        json: bool,
    },
    /// The context the agent would build for a leaf (default: the last entry).
    Context {
        /// The session file (`.jsonl`).
        file: PathBuf,
        #[arg(long, value_name = "ID")]
        leaf: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The entry tree.
    Tree {
        /// The session file (`.jsonl`).
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Migrate the file in place to the current version; prints the load report.
    ///
    /// On a terminal, stderr shows how much of the file has been read.
    Migrate {
        /// The session file (`.jsonl`).
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Append one entry (JSON without id/parentId/timestamp) as the child of the leaf.
    Append {
        /// The session file (`.jsonl`).
        file: PathBuf,
        /// The entry as JSON, or `-` to read it from stdin.
        #[arg(
            long = "json",
            value_name = "ENTRY-JSON | -",
            allow_hyphen_values = true
        )]
        entry: String,
        /// The cwd a new session file's header records.
        #[command(flatten)]
        cwd: CwdArg,
    },
    /// The newest sessions of a project, newest first (reads 4 KiB of each file).
    ///
    /// Prints `[{path, id, cwd, title?, name, timeAgo, modified}]`.
    Recent {
        #[command(flatten)]
        cwd: CwdArg,
        /// At most N sessions.
        #[arg(long, value_name = "N", default_value_t = 3)]
        limit: u32,
        /// Output JSON (always on; accepted for symmetry).
        #[arg(long)]
        json: bool,
    },
    /// The sessions of a project (or of all projects), with their SessionInfo.
    ///
    /// Prints `[{path, id, cwd, title?, parentSessionPath?, created, modified,
    /// messageCount, firstMessage, allMessagesText?}]`. Each session is read through its
    /// index (cached in `<agent-dir>/cache/index/`): its header line, its first user
    /// message, its message count, and, untitled, its last compaction; a session without
    /// a cached index is scanned once and its index written (unless --no-index-cache). On
    /// a terminal, stderr shows how many files and bytes have been read.
    List {
        #[command(flatten)]
        scope: Scope,
        /// Add `allMessagesText` (the text of every user and assistant message, what
        /// `search` ranks by): reads every message line of every session.
        #[arg(long, conflicts_with = "limit")]
        with_text: bool,
        /// Only the newest N sessions (a picker's first screen): the files are ordered
        /// by their modification time and only those N are read.
        #[arg(long, value_name = "N")]
        limit: Option<u32>,
        /// Output JSON (always on; accepted for symmetry).
        #[arg(long)]
        json: bool,
    },
    /// Rank the sessions of a project (or of all projects) for QUERY, like the picker.
    ///
    /// Prints the matching SessionInfo objects, best first, each with a `score` (no
    /// `allMessagesText`). Sessions are searched newest first, each one's text a piece at
    /// a time and only as far as the score needs; on a terminal, stderr shows progress.
    Search {
        /// What to look for (fuzzy; in titles, ids and message text).
        query: String,
        #[command(flatten)]
        scope: Scope,
        /// Output JSON (always on; accepted for symmetry).
        #[arg(long)]
        json: bool,
    },
    /// The session file to resume for an id prefix or a path; prints its path.
    ///
    /// An argument containing `/` or ending in `.jsonl` is a path (made absolute, not
    /// checked). Otherwise it is a prefix of a session id or file name, searched in this
    /// project first, then in all projects. Several matches: exit 2, the candidates as
    /// JSON on stdout. A session of another project: exit 4, unless --yes forks it into
    /// this project (the path of the copy is printed).
    Resume {
        /// A session id prefix, or a session file path.
        #[arg(value_name = "ID-PREFIX|PATH")]
        arg: String,
        #[command(flatten)]
        cwd: CwdArg,
        /// Fork a session of another project into this one.
        #[arg(long)]
        yes: bool,
        /// Print `{"path"}` instead of the bare path.
        #[arg(long)]
        json: bool,
    },
    /// The session `--continue` would open; prints its path.
    ///
    /// This terminal's last session when it was in the same project (the terminal is
    /// identified by the tty on stdin, else $KITTY_WINDOW_ID, $TMUX_PANE,
    /// $TERM_SESSION_ID or $WT_SESSION), else the project's newest session, else the path
    /// of a new session (not created). Records the choice for this terminal in
    /// `<agent-dir>/terminal-sessions/`.
    Continue {
        #[command(flatten)]
        cwd: CwdArg,
        /// Print `{"path", "source"}` (source: breadcrumb, mostRecent or new).
        #[arg(long)]
        json: bool,
    },
    /// The content-addressed blob store (`<agent-dir>/blobs`).
    Blob {
        #[command(subcommand)]
        op: BlobCommand,
    },
    /// Resolve an artifact:// or agent:// URL of a session; prints the content.
    ///
    /// `artifact://N`: the full output of tool call N; `agent://ID`, `agent://ID/PATH` or
    /// `agent://ID?q=QUERY`: a subagent's output, or one value extracted from its JSON
    /// (printed as pretty JSON). Prints the content itself, not JSON-wrapped; a final
    /// newline is added when missing. Errors: the agent's exact message on stderr, exit 3
    /// when the artifact or output does not exist, 1 otherwise.
    Url {
        /// The URL.
        url: String,
        /// The session file whose artifacts directory the URL refers to.
        #[arg(long, value_name = "FILE")]
        session: PathBuf,
        /// First line to print (1-based).
        #[arg(long, value_name = "N")]
        offset: Option<u32>,
        /// At most N lines.
        #[arg(long, value_name = "N")]
        limit: Option<u32>,
    },
    /// Copy a session (and its artifacts directory) to a new file next to it.
    ///
    /// Prints `{"oldFile", "newFile", "warnings"}`.
    Fork {
        /// The session file (`.jsonl`).
        file: PathBuf,
    },
    /// Move a session (and its artifacts directory) to another project.
    ///
    /// Prints `{"newFile"}`.
    Move {
        /// The session file (`.jsonl`).
        file: PathBuf,
        /// The project (working directory) to move it to; made absolute, symlinks kept.
        #[arg(long, value_name = "DIR")]
        to_cwd: PathBuf,
    },
    /// Find blobs no session references (older than an hour); deletes them with --delete.
    ///
    /// Prints `{"dryRun", "scannedFiles", "referenced", "deleted", "keptRecent"}`
    /// (`deleted`: the blobs deleted, or that would be). On a terminal, stderr shows how
    /// many files and bytes have been read.
    Gc {
        /// Only report (the default).
        #[arg(long, conflicts_with = "delete")]
        dry_run: bool,
        /// Really delete the unreferenced blobs.
        #[arg(long)]
        delete: bool,
        /// Forget the recorded sessions outside `<agent-dir>/sessions` whose files are
        /// gone (deleted or moved): the blobs they pin may then be collected.
        #[arg(long)]
        forget_missing: bool,
    },
    /// The prompt history (`<agent-dir>/history.db`, SQLite with an FTS5 index).
    History {
        #[command(subcommand)]
        op: HistoryCommand,
    },
    /// Compile the component ahead of time into the cache; prints the cache file.
    Precompile,
    /// Print the shell completion script for SHELL, made from these definitions.
    ///
    /// bash: `xcsh-session completions bash >
    /// ~/.local/share/bash-completion/completions/xcsh-session`; zsh: `_xcsh-session` in a
    /// directory of `$fpath`; fish: `~/.config/fish/completions/xcsh-session.fish`.
    /// `scripts/install` installs the bash, zsh and fish ones.
    Completions {
        /// The shell.
        #[arg(value_enum, value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), made from these definitions; `man -l` shows it.
    ///
    /// With --dir, write `xcsh-session.1` and one page per command (`xcsh-session-list.1`,
    /// `xcsh-session-history-add.1`, …) into DIR instead and print their paths
    /// (`scripts/install` puts them in PREFIX/share/man/man1).
    Man {
        /// Write every page into DIR (created).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Drive the component's session API over JSON lines: one request per stdin line
    /// (`{"id", "call", "self"?, "args"}`, e.g. `{"id": 1, "call": "session.create",
    /// "args": [AGENT_DIR, CWD, null, null]}`), one answer per stdout line (`{"id", "ok"}`
    /// or `{"id", "error": {"kind", "message"}}`). Sessions stay open between lines;
    /// what is still open at the end of stdin is closed.
    Session {
        /// Also allow file access under DIR (repeatable; the agent directory always is,
        /// unless --root replaces both).
        #[arg(long = "dir", value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Add to each answer `"us"`: the microseconds the host spent on the request
        /// (arguments converted, the component called, its result converted), without
        /// the reading and writing of the lines.
        #[arg(long)]
        timings: bool,
    },
}

/// `history add | search | recent`.
#[derive(Subcommand, Debug)]
enum HistoryCommand {
    /// Add prompts, in order. Each is trimmed; a blank prompt, or one equal to the
    /// prompt stored just before it, is skipped. Written before the command exits.
    ///
    /// Prints nothing, or with --json `[{"added": true} | {"added": false, "reason":
    /// "empty" | "duplicate"}, ...]`, one per prompt.
    Add {
        /// The prompt text (several: several prompts; `-`: read one from stdin; put
        /// `--` before a prompt that starts with `-`).
        #[arg(value_name = "TEXT", required = true)]
        prompts: Vec<String>,
        #[command(flatten)]
        cwd: CwdArg,
        #[arg(long)]
        json: bool,
    },
    /// Search with an FTS5 query (`pars*`, `"exact phrase"`, `a OR b`, `a NOT b`,
    /// `NEAR(a b)`), best match first.
    ///
    /// Prints `[{id, prompt, createdAt, cwd}]` (`createdAt` ISO-8601, `cwd` null when
    /// none). A malformed query: the database's message on stderr, exit 1. Like
    /// `recent`, never creates history.db, but brings an older schema up to date as the
    /// agent does when it opens the file.
    Search {
        /// The FTS5 query.
        query: String,
        #[command(flatten)]
        read: HistoryRead,
    },
    /// The newest prompts, newest first; prints `[{id, prompt, createdAt, cwd}]`.
    Recent {
        #[command(flatten)]
        read: HistoryRead,
    },
}

/// `[--limit N] [--cwd DIR] [--json]` of `history search | recent`.
#[derive(Args, Debug)]
struct HistoryRead {
    /// At most N prompts (at most 1000).
    #[arg(long, value_name = "N", default_value_t = 20)]
    limit: u32,
    /// Only prompts entered in DIR (made absolute and free of `.`/`..`). Default: all.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Output JSON (always on; accepted for symmetry).
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand, Debug)]
enum BlobCommand {
    /// Store FILE's bytes; prints `{"hash", "ref", "path"}`.
    Put {
        /// The file to store (read by the CLI, not confined).
        file: PathBuf,
    },
    /// Write a blob's raw bytes to stdout.
    Get {
        /// A sha256 hex hash or a `blob:sha256:<hash>` reference.
        #[arg(value_name = "HASH|REF")]
        hash: String,
    },
}

/// `--cwd DIR`: the project.
#[derive(Args, Debug)]
struct CwdArg {
    /// The project's working directory (default: the current directory as the OS reports
    /// it). Made absolute and free of `.`/`..`; symlinks are kept as written.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

/// `--cwd DIR | --all`: one project or every project.
#[derive(Args, Debug)]
struct Scope {
    /// The project's working directory (default: the current directory as the OS reports
    /// it). Made absolute and free of `.`/`..`; symlinks are kept as written.
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    cwd: Option<PathBuf>,
    /// Every project.
    #[arg(long)]
    all: bool,
}

/// Exit codes: 1 for errors, 2 for usage errors and ambiguous resume prefixes, 3 when an
/// entry or a file does not exist (a session file given to show, context, tree, migrate,
/// fork or move), 4 for a session of another project. Output cut short by its reader
/// (`| head`) is a normal end.
pub(crate) const EXIT_ERROR: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_NOT_FOUND: u8 = 3;
const EXIT_OTHER_PROJECT: u8 = 4;

/// The terminal variables `continue` passes to the component.
const TERMINAL_VARS: [&str; 4] = [
    "KITTY_WINDOW_ID",
    "TMUX_PANE",
    "TERM_SESSION_ID",
    "WT_SESSION",
];

fn engine() -> Result<Engine> {
    #[allow(unused_mut)]
    let mut config = Config::new();
    // Linear memory on huge pages (custom memories are filled eagerly, not copy-on-write).
    #[cfg(target_os = "linux")]
    config
        .with_host_memory(std::sync::Arc::new(hugemem::HugePageMemoryCreator))
        .memory_init_cow(false);
    Ok(Engine::new(&config)?)
}

fn report_cache(verbose: bool, outcome: &aot::CacheOutcome) {
    if !verbose {
        return;
    }
    match outcome {
        aot::CacheOutcome::Hit(f) => eprintln!("xcsh-session: cache hit: {}", f.display()),
        aot::CacheOutcome::Compiled {
            file,
            why,
            write_error,
        } => {
            let target = file
                .as_ref()
                .map(|f| f.display().to_string())
                .unwrap_or_else(|| "-".into());
            eprintln!("xcsh-session: compiled ({why}); cache file: {target}");
            if let Some(e) = write_error {
                eprintln!("xcsh-session: cache not written: {e}");
            }
        }
    }
}

fn default_agent_dir() -> Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("HOME is not set; pass --agent-dir")?;
    Ok(PathBuf::from(home).join(".xcsh/agent"))
}

fn to_guest(p: &Path) -> Result<String> {
    p.to_str()
        .map(str::to_string)
        .with_context(|| format!("{} is not valid UTF-8", p.display()))
}

/// Where the command runs: the agent dir and the file arguments as guest (= host) paths,
/// and the roots the storage is confined to.
struct Target {
    agent_dir: String,
    files: Vec<String>,
    roots: confine::Roots,
}

/// Roots: `--root` alone when given; else the agent dir (created first by a command that
/// may write; a read-only one creates nothing) and the directory of each file argument
/// (`files`: session files, made absolute with their last component kept).
fn target(cli: &Cli, files: &[&Path], writable: bool) -> Result<Target> {
    let files = files
        .iter()
        .map(|f| confine::absolute_file(f))
        .collect::<std::io::Result<Vec<_>>>()?;
    let agent_dir = match &cli.agent_dir {
        Some(d) => d.clone(),
        None => default_agent_dir()?,
    };
    let roots = match &cli.root {
        Some(root) => vec![confine::absolute_dir(root)?],
        None => {
            if writable {
                std::fs::create_dir_all(&agent_dir).with_context(|| {
                    format!("creating the agent directory {}", agent_dir.display())
                })?;
            }
            let mut roots: Vec<PathBuf> = files
                .iter()
                .map(|f| f.parent().unwrap_or(Path::new("/")).to_path_buf())
                .collect();
            roots.push(confine::absolute_dir(&agent_dir)?);
            roots
        }
    };
    let roots =
        confine::Roots::new(&roots).map_err(|e| anyhow::anyhow!("resolving the roots: {e}"))?;
    let agent_dir = confine::absolute_dir(&agent_dir)?;
    Ok(Target {
        agent_dir: to_guest(&agent_dir)?,
        files: files
            .iter()
            .map(|f| to_guest(f))
            .collect::<Result<Vec<_>>>()?,
        roots,
    })
}

/// A project directory: `--cwd DIR` made absolute (against the current directory) and
/// free of `.` and `..` (see [`confine::absolute_cwd`]), else the current directory as the
/// OS reports it (`getcwd`: symlinks resolved, as the agent's `process.cwd()` sees it).
fn project_dir(dir: Option<&Path>) -> Result<String> {
    let dir = match dir {
        Some(d) => confine::absolute_cwd(d)
            .with_context(|| format!("resolving the directory {}", d.display()))?,
        None => std::env::current_dir().context("reading the current directory")?,
    };
    to_guest(&dir)
}

fn read_entry(arg: &str) -> Result<String> {
    if arg != "-" {
        return Ok(arg.to_string());
    }
    let mut s = String::new();
    std::io::stdin()
        .read_to_string(&mut s)
        .context("reading the entry from stdin")?;
    Ok(s)
}

/// The `history add` prompts, `-` replaced by stdin (read once).
fn read_prompts(args: &[String]) -> Result<Vec<String>> {
    let mut stdin: Option<String> = None;
    args.iter()
        .map(|a| {
            if a != "-" {
                return Ok(a.clone());
            }
            if stdin.is_none() {
                let mut s = String::new();
                std::io::stdin()
                    .read_to_string(&mut s)
                    .context("reading the prompt from stdin")?;
                stdin = Some(s);
            }
            Ok(stdin.clone().unwrap_or_default())
        })
        .collect()
}

/// The terminal on stdin (`/dev/pts/N`, `/dev/ttyN`), if stdin is one.
fn stdin_tty() -> Option<String> {
    let link = std::fs::read_link("/proc/self/fd/0").ok()?;
    let link = link.to_str()?;
    (link.starts_with("/dev/pts/") || link.starts_with("/dev/tty")).then(|| link.to_string())
}

/// The terminal variables that are set.
fn terminal_env() -> Vec<(String, String)> {
    TERMINAL_VARS
        .iter()
        .filter_map(|k| {
            std::env::var(k)
                .ok()
                .filter(|v| !v.is_empty())
                .map(|v| (k.to_string(), v))
        })
        .collect()
}

/// A `resume` argument: path-like ones (the core's rule: containing `/` or `\`, or
/// ending in `.jsonl`) are made absolute against the current directory.
fn resume_arg(arg: &str) -> Result<String> {
    if arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl") {
        let abs = std::path::absolute(arg).with_context(|| format!("resolving {arg}"))?;
        return to_guest(&abs);
    }
    Ok(arg.to_string())
}

/// What the CLI prints on success.
enum Output {
    /// The component's JSON text, and a newline.
    Json(String),
    /// One field of the component's JSON (a path), as a plain line.
    Field(String, &'static str),
    /// A resolved URL's `content`, with a final newline when missing.
    Content(String),
    /// Raw bytes.
    Bytes(Vec<u8>),
    /// Nothing.
    Nothing,
    /// A context's JSON, read from the component in chunks, and a newline.
    Context(ResourceAny),
}

fn field(json: &str, name: &str) -> Result<String> {
    let v: serde_json::Value = serde_json::from_str(json)
        .with_context(|| format!("the component returned invalid JSON: {json}"))?;
    v.get(name)
        .and_then(|s| s.as_str())
        .map(str::to_string)
        .with_context(|| format!("the component's answer has no \"{name}\": {json}"))
}

fn print(output: Output) -> Result<()> {
    let (body, newline) = match output {
        Output::Json(json) => (json.into_bytes(), true),
        Output::Field(json, name) => (field(&json, name)?.into_bytes(), true),
        Output::Content(json) => {
            let content = field(&json, "content")?;
            let newline = !content.is_empty() && !content.ends_with('\n');
            (content.into_bytes(), newline)
        }
        Output::Bytes(bytes) => (bytes, false),
        Output::Nothing => return Ok(()),
        Output::Context(_) => unreachable!("printed by print_context"),
    };
    write_stdout(&[&body, if newline { b"\n" } else { b"" }])
}

/// How much of a context's JSON crosses from the component per call.
const CONTEXT_CHUNK: u64 = 1 << 20;

/// Print a context as the component writes it, a chunk at a time (neither side holds the
/// whole text: a 1 GB session's context is about 1 GB), then a newline.
fn print_context(
    store: &mut Store<fshost::FsHost>,
    api: &GuestContextReader,
    reader: ResourceAny,
) -> Result<()> {
    let mut out = context_out()?;
    let written = loop {
        let chunk = api.call_read(&mut *store, reader, CONTEXT_CHUNK)?;
        if chunk.is_empty() {
            break out.write_all(b"\n").and_then(|()| out.flush());
        }
        if let Err(e) = out.write_all(&chunk) {
            break Err(e);
        }
    };
    reader.resource_drop(&mut *store)?;
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other.context("writing to stdout")?),
    }
}

/// Where a context's chunks go: stdout itself, not through its line buffer (which looks
/// for the last newline of every chunk: a pass over all of a context that has none).
#[cfg(unix)]
fn context_out() -> Result<Box<dyn Write>> {
    use std::os::fd::AsFd;
    let stdout = std::io::stdout();
    stdout.lock().flush()?;
    Ok(Box::new(std::fs::File::from(
        stdout.as_fd().try_clone_to_owned()?,
    )))
}

#[cfg(not(unix))]
fn context_out() -> Result<Box<dyn Write>> {
    Ok(Box::new(std::io::stdout().lock()))
}

/// How much of the store one step of `search` reads between two progress updates.
const SEARCH_STEP: u64 = 8 << 20;

/// Run a search to its end, with a progress bar on stderr when both stdout and stderr
/// are a terminal ([`progress::shown`]); its hits' JSON.
fn search_with_progress(
    store: &mut Store<fshost::FsHost>,
    api: &GuestSessionSearch,
    search: ResourceAny,
) -> Result<String> {
    let bar = progress::bar(
        0,
        "{msg} {wide_bar} {binary_bytes}/{binary_total_bytes} ({eta})",
    );
    loop {
        let p = api.call_step(&mut *store, search, SEARCH_STEP)?;
        bar.set_length(p.bytes);
        bar.set_position(p.bytes_done);
        bar.set_message(format!(
            "searched {}/{} sessions, {} found",
            p.files_done, p.files, p.hits
        ));
        if api.call_done(&mut *store, search)? {
            break;
        }
    }
    bar.finish_and_clear();
    let hits = api.call_hits(&mut *store, search)?;
    search.resource_drop(&mut *store)?;
    Ok(hits)
}

/// Write to stdout. A reader that stops reading early (`| head`) ends the output
/// normally: a closed pipe (EPIPE; Rust ignores SIGPIPE) is not an error.
fn write_stdout(parts: &[&[u8]]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let written = parts
        .iter()
        .try_for_each(|p| out.write_all(p))
        .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other.context("writing to stdout")?),
    }
}

/// How a command runs: its session-file arguments (their directories become roots) and
/// whether it may write.
fn plan(command: &Command) -> (Vec<&Path>, bool) {
    match command {
        Command::Show { file, .. } | Command::Context { file, .. } | Command::Tree { file, .. } => {
            (vec![file], false)
        }
        Command::Migrate { file, .. }
        | Command::Append { file, .. }
        | Command::Fork { file }
        | Command::Move { file, .. } => (vec![file], true),
        Command::Url { session, .. } => (vec![session], false),
        Command::Recent { .. } | Command::List { .. } | Command::Search { .. } => (vec![], false),
        Command::Resume { yes, .. } => (vec![], *yes),
        Command::Continue { .. } => (vec![], true),
        Command::Blob { op } => (vec![], matches!(op, BlobCommand::Put { .. })),
        Command::Gc { delete, .. } => (vec![], *delete),
        Command::History { op } => (vec![], matches!(op, HistoryCommand::Add { .. })),
        Command::Precompile
        | Command::Completions { .. }
        | Command::Man { .. }
        | Command::Sync(_) => (vec![], false),
        Command::Session { .. } => (vec![], true),
    }
}

/// For `gc`: the session files outside `<agent-dir>/sessions` recorded as referencing
/// blobs there (`<agent-dir>/blob-referrers.jsonl`). The collection may read each of them
/// (only it: no directory around it becomes a root, and nothing is written there); one
/// that is gone reads as not found. Refuses a `blobs` that is a symlink: collection deletes
/// only in the store itself, never where a link leads.
fn gc_referrers(cli: &Cli) -> Result<Vec<PathBuf>> {
    if !matches!(cli.command, Command::Gc { .. }) || cli.root.is_some() {
        return Ok(Vec::new());
    }
    let agent_dir = match &cli.agent_dir {
        Some(d) => d.clone(),
        None => default_agent_dir()?,
    };
    let blobs = agent_dir.join("blobs");
    if std::fs::symlink_metadata(&blobs).is_ok_and(|m| m.file_type().is_symlink()) {
        anyhow::bail!(
            "{} is a symlink: garbage collection deletes only inside the blob store itself, \
             never where a link leads; nothing was deleted",
            blobs.display()
        );
    }
    let list = agent_dir.join("blob-referrers.jsonl");
    let bytes = match std::fs::read(&list) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", list.display())),
    };
    Ok(xcsh_session::blob_referrers(&bytes)
        .into_iter()
        .map(PathBuf::from)
        .filter(|f| f.is_absolute())
        .collect())
}

fn precompile(cli: &Cli, engine: &Engine, component: &aot::Source) -> Result<ExitCode> {
    let (_, outcome) = aot::load(engine, component, true)?;
    report_cache(cli.verbose, &outcome);
    if let aot::CacheOutcome::Compiled {
        file: Some(f),
        write_error: None,
        ..
    } = &outcome
    {
        write_stdout(&[f.as_os_str().as_encoded_bytes(), b"\n"])?;
        return Ok(ExitCode::SUCCESS);
    }
    if let aot::CacheOutcome::Compiled {
        write_error: Some(e),
        ..
    } = &outcome
    {
        anyhow::bail!("{e}");
    }
    anyhow::bail!("no cache directory (set XCSH_SESSION_CACHE_DIR or HOME)");
}

/// The agent directory's index cache, open or (`--no-index-cache`) off.
fn index_cache(cli: &Cli, t: &Target) -> Option<fshost::IndexCacheDir> {
    let dir = PathBuf::from(&t.agent_dir).join("cache");
    Some(match cli.no_index_cache {
        true => fshost::IndexCacheDir::Off(dir),
        false => fshost::IndexCacheDir::Open(dir),
    })
}

/// `session`: the JSON-lines driver ([`rpc`]) over one instance, with the agent
/// directory (created) and every `--dir` as roots, or `--root` alone.
fn serve_session(
    cli: &Cli,
    engine: &Engine,
    component: &aot::Source,
    dirs: &[PathBuf],
    timings: bool,
) -> Result<ExitCode> {
    let t = target(cli, &[], true)?;
    let cache = index_cache(cli, &t);
    let roots = match &cli.root {
        Some(_) => t.roots,
        None => {
            let mut all = t.roots.dirs().to_vec();
            for d in dirs {
                all.push(
                    confine::absolute_dir(d).with_context(|| format!("--dir {}", d.display()))?,
                );
            }
            confine::Roots::new(&all).map_err(|e| anyhow::anyhow!("resolving the roots: {e}"))?
        }
    };
    let (component, outcome) = aot::load(engine, component, false)?;
    report_cache(cli.verbose, &outcome);
    let mut linker = Linker::new(engine);
    SessionComponent::add_to_linker::<_, HasSelf<fshost::FsHost>>(&mut linker, |h| h)?;
    let mut store = new_store(engine, fshost::FsHost::new(roots, true, cache));
    let instance = linker.instantiate(&mut store, &component)?;
    rpc::Driver::new(&mut store, instance, timings)?
        .serve(std::io::stdin().lock(), std::io::stdout().lock())?;
    store
        .data_mut()
        .history
        .finish()
        .map_err(|e| anyhow::anyhow!("history: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

/// `completions` and `man`: text made from the clap definitions (no component runs).
fn describe_cli(command: &Command) -> Result<Option<ExitCode>> {
    use clap::CommandFactory;
    match command {
        Command::Completions { shell } => write_stdout(&[completions(*shell).as_bytes()])?,
        Command::Man { dir: None } => {
            let mut out = Vec::new();
            // As `--dir` writes it: no page is named for `help`, which has none.
            clap_mangen::Man::new(Cli::command().disable_help_subcommand(true)).render(&mut out)?;
            write_stdout(&[&out])?;
        }
        Command::Man { dir: Some(dir) } => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            clap_mangen::generate_to(Cli::command(), dir)
                .with_context(|| format!("writing the man pages into {}", dir.display()))?;
            let mut pages: Vec<PathBuf> = std::fs::read_dir(dir)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("xcsh-session") && n.ends_with(".1"))
                })
                .collect();
            pages.sort();
            for page in pages {
                write_stdout(&[page.as_os_str().as_encoded_bytes(), b"\n"])?;
            }
        }
        _ => return Ok(None),
    }
    Ok(Some(ExitCode::SUCCESS))
}

/// The completion script for `shell`. clap_complete's bash script completes nothing
/// after a subcommand when the binary's name has a hyphen (its dispatch loop and its case
/// labels escape the name differently: clap-rs/clap#6421, open): bash's is generated for
/// `xcsh_session`, whose labels agree, and registered for `xcsh-session`.
fn completions(shell: clap_complete::Shell) -> String {
    use clap::CommandFactory;
    let name = match shell {
        clap_complete::Shell::Bash => "xcsh_session",
        _ => "xcsh-session",
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), name, &mut out);
    let script = String::from_utf8_lossy(&out).into_owned();
    match shell {
        clap_complete::Shell::Bash => script.replace(" xcsh_session\n", " xcsh-session\n"),
        _ => script,
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    if let Some(code) = describe_cli(&cli.command)? {
        return Ok(code);
    }
    // Runs natively over the core: no component to load.
    if let Command::Sync(args) = &cli.command {
        let agent_dir = match &cli.agent_dir {
            Some(d) => d.clone(),
            None => default_agent_dir()?,
        };
        return sync::run(agent_dir, args);
    }
    let engine = engine()?;
    let component = aot::locate_component(cli.component.as_deref())?;
    if cli.verbose {
        eprintln!("xcsh-session: using {component}");
    }
    if let Command::Precompile = cli.command {
        return precompile(&cli, &engine, &component);
    }

    if let Command::Session { dirs, timings } = &cli.command {
        return serve_session(&cli, &engine, &component, dirs, *timings);
    }

    let (files, writable) = plan(&cli.command);
    let referrers = gc_referrers(&cli)?;
    let mut t = target(&cli, &files, writable)?;
    t.roots = t.roots.with_readable_files(&referrers);
    if cli.verbose {
        let dirs: Vec<String> = t
            .roots
            .dirs()
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        eprintln!("xcsh-session: roots: {}", dirs.join(", "));
    }
    // Everything the host reads or decides itself, before the component runs.
    let entry = match &cli.command {
        Command::Append { entry, .. } => Some(read_entry(entry)?),
        _ => None,
    };
    let blob = match &cli.command {
        Command::Blob {
            op: BlobCommand::Put { file },
        } => Some(std::fs::read(file).with_context(|| format!("reading {}", file.display()))?),
        _ => None,
    };
    let cwd = match &cli.command {
        Command::Recent { cwd, .. }
        | Command::Append { cwd, .. }
        | Command::Resume { cwd, .. }
        | Command::Continue { cwd, .. } => Some(project_dir(cwd.cwd.as_deref())?),
        Command::List { scope, .. } | Command::Search { scope, .. } if !scope.all => {
            Some(project_dir(scope.cwd.as_deref())?)
        }
        Command::Move { to_cwd, .. } => Some(project_dir(Some(to_cwd))?),
        Command::History {
            op: HistoryCommand::Add { cwd, .. },
        } => Some(project_dir(cwd.cwd.as_deref())?),
        Command::History {
            op: HistoryCommand::Search { read, .. } | HistoryCommand::Recent { read },
        } => match &read.cwd {
            Some(dir) => Some(project_dir(Some(dir))?),
            None => None,
        },
        _ => None,
    };
    let prompts = match &cli.command {
        Command::History {
            op: HistoryCommand::Add { prompts, .. },
        } => read_prompts(prompts)?,
        _ => Vec::new(),
    };
    let resume = match &cli.command {
        Command::Resume { arg, .. } => Some(resume_arg(arg)?),
        _ => None,
    };

    let (component, outcome) = aot::load(&engine, &component, false)?;
    report_cache(cli.verbose, &outcome);
    let mut linker = Linker::new(&engine);
    SessionComponent::add_to_linker::<_, HasSelf<fshost::FsHost>>(&mut linker, |h| h)?;
    let cache = index_cache(&cli, &t);
    let mut store = new_store(&engine, fshost::FsHost::new(t.roots, writable, cache));
    let instance = SessionComponent::instantiate(&mut store, &component, &linker)?;
    // The CLI prints `session-json`'s text (the npm package's bytes); `context`, `tree`
    // and `get-blob` are `session-api`'s (their JSON is the entries' own).
    let api = instance.xcsh_session_session_json();
    let session_api = instance.xcsh_session_session_api();
    let file = t.files.first().map(String::as_str).unwrap_or_default();
    let agent = t.agent_dir.as_str();
    let cwd = cwd.as_deref();
    let json = |r: Result<String, ApiError>| r.map(Output::Json);
    // One component call that reads a whole store or file: the host shows what it reads.
    store.data_mut().reads = match &cli.command {
        Command::List { .. } => progress::Reads::start("listing sessions"),
        Command::Gc { .. } => progress::Reads::start("collecting blobs"),
        Command::Migrate { .. } => progress::Reads::start("migrating"),
        _ => None,
    };
    let result: Result<Output, ApiError> = match &cli.command {
        Command::Show { .. } => json(api.call_show(&mut store, file, agent)?),
        Command::Context { leaf, .. } => session_api
            .call_open_context(&mut store, file, agent, leaf.as_deref())?
            .map(Output::Context),
        Command::Tree { .. } => json(session_api.call_tree(&mut store, file, agent)?),
        Command::Migrate { .. } => json(api.call_migrate(&mut store, file, agent)?),
        Command::Append { .. } => json(api.call_append(
            &mut store,
            file,
            agent,
            cwd.unwrap_or_default(),
            entry.as_deref().unwrap_or_default(),
        )?),
        Command::Recent { limit, .. } => {
            json(api.call_recent(&mut store, agent, cwd.unwrap_or_default(), *limit)?)
        }
        Command::List {
            with_text: true, ..
        } => json(api.call_list(&mut store, agent, cwd)?),
        Command::List {
            limit: Some(limit), ..
        } => json(api.call_list_first(&mut store, agent, cwd, *limit)?),
        Command::List { .. } => json(api.call_list_without_text(&mut store, agent, cwd)?),
        Command::Search { query, .. } => {
            match api.call_open_search(&mut store, agent, cwd, query)? {
                Ok(search) => Ok(Output::Json(search_with_progress(
                    &mut store,
                    &api.session_search(),
                    search,
                )?)),
                Err(e) => Err(e),
            }
        }
        Command::Resume {
            yes, json: as_json, ..
        } => api
            .call_resume(
                &mut store,
                agent,
                cwd.unwrap_or_default(),
                resume.as_deref().unwrap_or_default(),
                *yes,
            )?
            .map(|j| match as_json {
                true => Output::Json(j),
                false => Output::Field(j, "path"),
            }),
        Command::Continue { json: as_json, .. } => api
            .call_continue_recent(
                &mut store,
                agent,
                cwd.unwrap_or_default(),
                stdin_tty().as_deref(),
                &terminal_env(),
            )?
            .map(|j| match as_json {
                true => Output::Json(j),
                false => Output::Field(j, "path"),
            }),
        Command::Blob {
            op: BlobCommand::Put { .. },
        } => json(api.call_put_blob(&mut store, agent, blob.as_deref().unwrap_or_default())?),
        Command::Blob {
            op: BlobCommand::Get { hash },
        } => session_api
            .call_get_blob(&mut store, agent, hash)?
            .map(Output::Bytes),
        Command::Url {
            url, offset, limit, ..
        } => api
            .call_resolve_url(&mut store, file, url, *offset, *limit)?
            .map(Output::Content),
        Command::Fork { .. } => json(api.call_fork(&mut store, agent, file)?),
        Command::Move { .. } => {
            json(api.call_move_session(&mut store, agent, file, cwd.unwrap_or_default())?)
        }
        Command::Gc {
            delete,
            forget_missing,
            ..
        } => json(api.call_gc(&mut store, agent, !*delete, *forget_missing)?),
        Command::History { op } => match op {
            HistoryCommand::Add { json: as_json, .. } => {
                let mut answers = Vec::new();
                let mut failed = None;
                for p in &prompts {
                    match api.call_history_add(&mut store, agent, p, cwd)? {
                        Ok(a) => answers.push(a),
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                match failed {
                    Some(e) => Err(e),
                    None if *as_json => Ok(Output::Json(format!("[{}]", answers.join(",")))),
                    None => Ok(Output::Nothing),
                }
            }
            HistoryCommand::Search { query, read } => {
                json(api.call_history_search(&mut store, agent, query, read.limit, cwd)?)
            }
            HistoryCommand::Recent { read } => {
                json(api.call_history_recent(&mut store, agent, read.limit, cwd)?)
            }
        },
        Command::Precompile
        | Command::Sync(_)
        | Command::Session { .. }
        | Command::Completions { .. }
        | Command::Man { .. } => unreachable!("handled above"),
    };
    // The progress line is cleared before anything is printed.
    drop(store.data_mut().reads.take());
    // Queued history inserts are written before anything is printed: a command that
    // succeeds has its prompts on disk.
    if let Err(e) = store.data_mut().history.finish() {
        if let Err(api_error) = &result {
            eprintln!("{}", api_error.message);
        }
        anyhow::bail!("history: {e}");
    }
    match result {
        Ok(Output::Context(reader)) => {
            print_context(&mut store, &session_api.context_reader(), reader)?;
            Ok(ExitCode::SUCCESS)
        }
        Ok(output) => {
            print(output)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{}", e.message);
            let code = match e.kind {
                ErrorKind::EntryNotFound | ErrorKind::NotFound => EXIT_NOT_FOUND,
                ErrorKind::Ambiguous => {
                    // The candidates, for a script to choose from.
                    if let Some(details) = &e.details {
                        print(Output::Json(details.clone()))?;
                    }
                    EXIT_USAGE
                }
                ErrorKind::OtherProject => EXIT_OTHER_PROJECT,
                ErrorKind::Conflict
                | ErrorKind::InvalidInput
                | ErrorKind::ReadOnly
                | ErrorKind::Persistence
                | ErrorKind::Storage => EXIT_ERROR,
            };
            Ok(ExitCode::from(code))
        }
    }
}

/// The store the component runs in. Its hostcall fuel (the bytes the guest may pass to the
/// host in one call; wasmtime's default is 128 MiB) is the whole 32-bit address space: the
/// component is ours, the path confinement is the sandbox that matters, and a session's
/// context or a file written back can exceed 128 MiB (a 1 GB session's context is ~1 GB).
fn new_store(engine: &Engine, host: fshost::FsHost) -> Store<fshost::FsHost> {
    let mut store = Store::new(engine, host);
    store.set_hostcall_fuel(u32::MAX as usize);
    store
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xcsh-session: {e:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}
