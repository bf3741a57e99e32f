//! xcsh-session as a WASI 0.2 command (`wasi:cli/run`) whose file I/O is standard
//! `wasi:filesystem`: a stock runtime runs it with nothing but preopened directories,
//! which are its sandbox (see README.md).
//!
//! This file is the command: it reads the arguments ([`args`]), calls the same
//! [`xcsh_session::api`] function as the CLI host's component does for each subcommand,
//! over [`fs::WasiFsStorage`], and prints the JSON text or the error ([`output`]), so
//! its output is the CLI host's byte for byte. No session logic lives here.

mod args;
mod fs;
mod output;

use std::rc::Rc;

use args::{absolute, absolute_file, Command, Invocation};
use fs::WasiFsStorage;
use output::Exit;
use wasi::cli::environment;
use xcsh_session::api::{self, ApiError, ErrorKind};
use xcsh_session::listing::ListText;
use xcsh_session::storage::Storage;

/// The exported `wasi:cli/run`.
struct Run;

impl wasi::exports::cli::run::Guest for Run {
    fn run() -> Result<(), ()> {
        main()
    }
}

wasi::cli::command::export!(Run);

/// What went wrong: a usage error, a failure before the core ran (printed with the
/// `xcsh-session:` prefix, like the CLI host's), or the core's own error (its message
/// alone, as the CLI host prints it).
enum Failure {
    Usage(String),
    Host(String),
    Api(ApiError),
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Failure {
        Failure::Api(e)
    }
}

fn main() -> Exit {
    let argv = environment::get_arguments();
    let invocation = match args::parse(argv.get(1..).unwrap_or_default()) {
        Ok(i) => i,
        Err(e) => return report(Failure::Usage(e)),
    };
    let (agent_dir, command) = match invocation {
        Invocation::Help => return output::print_line(args::USAGE),
        Invocation::Run { agent_dir, command } => (agent_dir, command),
    };
    match execute(agent_dir, command) {
        Ok(json) => output::print_line(&json),
        Err(f) => report(f),
    }
}

/// The error on stderr, and the CLI host's exit code for it.
fn report(f: Failure) -> Exit {
    match f {
        Failure::Usage(e) => output::fail(
            &format!(
                "error: {e}\n\nUsage: xcsh-session [--agent-dir DIR] <COMMAND>\n\n\
                 For more information, try '--help'."
            ),
            output::EXIT_USAGE,
        ),
        Failure::Host(e) => output::fail(&format!("xcsh-session: {e}"), output::EXIT_ERROR),
        Failure::Api(e) => {
            let code = match e.kind {
                ErrorKind::EntryNotFound | ErrorKind::NotFound => output::EXIT_NOT_FOUND,
                ErrorKind::Ambiguous => {
                    // The candidates, for a script to choose from (as the CLI host).
                    if let Some(details) = &e.details {
                        let _ = output::print_line(details);
                    }
                    output::EXIT_USAGE
                }
                ErrorKind::OtherProject => output::EXIT_OTHER_PROJECT,
                _ => output::EXIT_ERROR,
            };
            output::fail(&e.message, code)
        }
    }
}

/// The value of an environment variable the host passes to the guest.
fn env_var(name: &str) -> Option<String> {
    environment::get_environment()
        .into_iter()
        .find(|(k, v)| k == name && !v.is_empty())
        .map(|(_, v)| v)
}

/// `--agent-dir`, else `$HOME/.xcsh/agent` as in the CLI host.
fn agent_dir(given: Option<String>, cwd: Option<&str>) -> Result<String, Failure> {
    let dir = match given {
        Some(d) => d,
        None => match env_var("HOME") {
            Some(home) => format!("{}/.xcsh/agent", home.trim_end_matches('/')),
            None => return Err(Failure::Host("HOME is not set; pass --agent-dir".into())),
        },
    };
    absolute(&dir, cwd).map_err(Failure::Host)
}

/// A project directory: `--cwd DIR` made absolute, else the host's initial directory.
fn project_dir(dir: Option<&str>, cwd: Option<&str>) -> Result<String, Failure> {
    match (dir, cwd) {
        (Some(d), _) => absolute(d, cwd).map_err(Failure::Host),
        (None, Some(c)) => absolute(c, None).map_err(Failure::Host),
        (None, None) => Err(Failure::Host(
            "this host gives no current directory; pass --cwd".into(),
        )),
    }
}

/// Whether a command may change files: show, context, tree, recent, list, search, a
/// resume without --yes and a gc without --delete never write, and run over a storage
/// that refuses to.
fn writes(command: &Command) -> bool {
    matches!(
        command,
        Command::Migrate { .. }
            | Command::Append { .. }
            | Command::Fork { .. }
            | Command::Move { .. }
            | Command::Gc { delete: true, .. }
            | Command::Resume { yes: true, .. }
    )
}

/// Run one command; its JSON text.
fn execute(agent_dir_arg: Option<String>, command: Command) -> Result<String, Failure> {
    let cwd = environment::initial_cwd();
    let cwd = cwd.as_deref();
    let agent = agent_dir(agent_dir_arg, cwd)?;
    let storage: Rc<dyn Storage> = WasiFsStorage::from_preopens(writes(&command)).shared();
    let file = |f: &str| absolute_file(f, cwd).map_err(Failure::Host);
    Ok(match &command {
        Command::Show { file: f } => api::show_file(storage, &file(f)?, &agent)?,
        Command::Context { file: f, leaf } => {
            api::context_file(storage, &file(f)?, &agent, leaf.as_deref())?
        }
        Command::Tree { file: f } => api::tree_file(storage, &file(f)?, &agent)?,
        Command::Migrate { file: f } => api::migrate_file(storage, &file(f)?, &agent)?,
        Command::Append {
            file: f,
            entry,
            cwd: dir,
        } => {
            let path = file(f)?;
            let project = project_dir(dir.as_deref(), cwd)?;
            let entry = match entry.as_str() {
                "-" => output::read_stdin().map_err(Failure::Host)?,
                json => json.to_string(),
            };
            api::append_file(storage, &path, &agent, &project, &entry).map_err(ApiError::from)?
        }
        Command::Recent { cwd: dir, limit } => {
            let project = project_dir(dir.as_deref(), cwd)?;
            api::recent(storage, &agent, &project, *limit as usize)?
        }
        Command::List {
            cwd: dir,
            all,
            with_text,
            limit,
        } => {
            let project = match all {
                true => None,
                false => Some(project_dir(dir.as_deref(), cwd)?),
            };
            let text = ListText::with_text(*with_text);
            match limit {
                Some(n) => {
                    api::list_first(storage, &agent, project.as_deref(), None, *n as usize, text)?
                }
                None => api::list(storage, &agent, project.as_deref(), text)?,
            }
        }
        Command::Fork { file: f } => api::fork(storage, &agent, &file(f)?)?,
        Command::Search {
            query,
            cwd: dir,
            all,
        } => {
            let project = match all {
                true => None,
                false => Some(project_dir(dir.as_deref(), cwd)?),
            };
            api::search(storage, &agent, project.as_deref(), query)?
        }
        Command::Resume {
            arg,
            cwd: dir,
            yes,
            json,
        } => {
            let project = project_dir(dir.as_deref(), cwd)?;
            // Path-like arguments (the core's rule) are made absolute, as the CLI host does.
            let arg = match arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl") {
                true => absolute(arg, cwd).map_err(Failure::Host)?,
                false => arg.clone(),
            };
            match json {
                true => api::resume(storage, &agent, &project, &arg, *yes)?,
                false => api::resume_path(storage, &agent, &project, &arg, *yes)?,
            }
        }
        Command::Move { file: f, to_cwd } => {
            let to = absolute(to_cwd, cwd).map_err(Failure::Host)?;
            api::move_session(storage, &agent, &file(f)?, &to)?
        }
        Command::Gc {
            delete,
            forget_missing,
        } => api::gc(storage, &agent, !*delete, *forget_missing)?,
    })
}
