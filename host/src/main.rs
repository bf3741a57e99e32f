//! `xcsh-session`: the native CLI of xcsh-session. It runs the session component
//! (`xcsh_session_component.wasm`) on wasmtime and gives it the real filesystem, confined
//! to a list of root directories. Output is the JSON text the component returns.

mod aot;
mod confine;
mod fshost;

mod bindings {
    wasmtime::component::bindgen!({
        world: "session-component",
        path: "../wit",
    });
}

use anyhow::{Context, Result};
use bindings::exports::xcsh::session::session_api::{ApiError, ErrorKind};
use bindings::SessionComponent;
use clap::{Parser, Subcommand};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Config, Engine, Store};

#[derive(Parser, Debug)]
#[command(
    name = "xcsh-session",
    version,
    about = "Read, migrate and append to xcsh/pi agent session files"
)]
struct Cli {
    /// The agent directory (blobs live in `<DIR>/blobs`). Default: `$HOME/.xcsh/agent`.
    #[arg(long, global = true, value_name = "DIR")]
    agent_dir: Option<PathBuf>,
    /// Confine all file access to DIR (default: the session file's directory and the
    /// agent directory).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The component to run (default: $XCSH_SESSION_COMPONENT, then next to the binary).
    #[arg(long, global = true, value_name = "PATH")]
    component: Option<PathBuf>,
    /// Say on stderr whether the compiled component came from the cache.
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
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
    },
    /// Compile the component ahead of time into the cache; prints the cache file.
    Precompile,
}

/// Exit codes: 1 for errors, 3 when an entry or a file does not exist.
const EXIT_ERROR: u8 = 1;
const EXIT_NOT_FOUND: u8 = 3;

fn engine() -> Result<Engine> {
    let config = Config::new();
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

/// Where the command runs: the session file and agent dir as guest (= host) paths, and the
/// roots the storage is confined to.
struct Target {
    file: String,
    agent_dir: String,
    roots: confine::Roots,
}

fn target(cli: &Cli, file: &Path) -> Result<Target> {
    let file = confine::absolute_file(file)?;
    let agent_dir = match &cli.agent_dir {
        Some(d) => d.clone(),
        None => default_agent_dir()?,
    };
    let roots = match &cli.root {
        Some(root) => vec![confine::absolute_dir(root)?],
        None => {
            std::fs::create_dir_all(&agent_dir)
                .with_context(|| format!("creating the agent directory {}", agent_dir.display()))?;
            let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
            vec![dir, confine::absolute_dir(&agent_dir)?]
        }
    };
    let roots =
        confine::Roots::new(&roots).map_err(|e| anyhow::anyhow!("resolving the roots: {e}"))?;
    let agent_dir = confine::absolute_dir(&agent_dir)?;
    Ok(Target {
        file: to_guest(&file)?,
        agent_dir: to_guest(&agent_dir)?,
        roots,
    })
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

fn run(cli: Cli) -> Result<ExitCode> {
    let engine = engine()?;
    let component_path = aot::locate_component(cli.component.as_deref())?;
    if let Command::Precompile = cli.command {
        let (_, outcome) = aot::load(&engine, &component_path, true)?;
        report_cache(cli.verbose, &outcome);
        if let aot::CacheOutcome::Compiled {
            file: Some(f),
            write_error: None,
            ..
        } = &outcome
        {
            println!("{}", f.display());
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

    let (file, writable) = match &cli.command {
        Command::Show { file, .. } | Command::Context { file, .. } | Command::Tree { file, .. } => {
            (file, false)
        }
        Command::Migrate { file, .. } | Command::Append { file, .. } => (file, true),
        Command::Precompile => unreachable!("handled above"),
    };
    let t = target(&cli, file)?;
    if cli.verbose {
        let dirs: Vec<String> = t
            .roots
            .dirs()
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        eprintln!("xcsh-session: roots: {}", dirs.join(", "));
    }
    let entry = match &cli.command {
        Command::Append { entry, .. } => Some(read_entry(entry)?),
        _ => None,
    };

    let (component, outcome) = aot::load(&engine, &component_path, false)?;
    report_cache(cli.verbose, &outcome);
    let mut linker = Linker::new(&engine);
    SessionComponent::add_to_linker::<_, HasSelf<fshost::FsHost>>(&mut linker, |h| h)?;
    let mut store = Store::new(&engine, fshost::FsHost::new(t.roots, writable));
    let instance = SessionComponent::instantiate(&mut store, &component, &linker)?;
    let api = instance.xcsh_session_session_api();
    let (file, agent) = (t.file.as_str(), t.agent_dir.as_str());
    let result: Result<String, ApiError> = match &cli.command {
        Command::Show { .. } => api.call_show(&mut store, file, agent)?,
        Command::Context { leaf, .. } => {
            api.call_context(&mut store, file, agent, leaf.as_deref())?
        }
        Command::Tree { .. } => api.call_tree(&mut store, file, agent)?,
        Command::Migrate { .. } => api.call_migrate(&mut store, file, agent)?,
        Command::Append { .. } => api.call_append(
            &mut store,
            file,
            agent,
            entry.as_deref().unwrap_or_default(),
        )?,
        Command::Precompile => unreachable!("handled above"),
    };
    match result {
        Ok(json) => {
            let mut out = std::io::stdout().lock();
            out.write_all(json.as_bytes())?;
            out.write_all(b"\n")?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{}", e.message);
            Ok(ExitCode::from(match e.kind {
                ErrorKind::EntryNotFound | ErrorKind::NotFound => EXIT_NOT_FOUND,
                _ => EXIT_ERROR,
            }))
        }
    }
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
