//! The command line: the CLI host's subcommands and options for the session file
//! commands (`host/src/main.rs`), parsed by hand, and its paths made absolute.

/// The usage text (`--help`).
pub const USAGE: &str = "\
Read, migrate and append to xcsh/pi agent session files: xcsh-session as a WASI command.
Files are reached only through the host's preopened directories (wasi:filesystem).

Usage: xcsh-session [--agent-dir DIR] <COMMAND>

Commands:
  show <FILE> [--json]                      header, entryCount, leafId, version, migrationNeeded, report
  context <FILE> [--leaf ID] [--json]       the SessionContext as the agent builds it
  tree <FILE> [--json]                      [{entry, label?, children: [...]}]
  migrate <FILE> [--json]                   migrate in place (atomic rewrite), print the report
  append <FILE> --json <ENTRY-JSON | -> [--cwd DIR]
                                            append one entry (no id/parentId/timestamp); prints {\"id\"}
  recent [--cwd DIR] [--limit N] [--json]   newest sessions of a project (default limit 3)
  list [--cwd DIR | --all] [--with-text | --limit N] [--json]
                                            SessionInfo of a project or of all projects
                                            (allMessagesText only with --with-text; with
                                            --limit only the newest N files are read)
  fork <FILE>                               copy a session next to it; prints {\"oldFile\", \"newFile\", \"warnings\"}
  search <QUERY> [--cwd DIR | --all] [--json]
                                            the sessions ranked for QUERY, best first, each with a score
  resume <ID-PREFIX|PATH> [--cwd DIR] [--yes] [--json]
                                            the session file to resume; several matches: exit 2 and the
                                            candidates on stdout; another project's: exit 4 (--yes forks it)
  move <FILE> --to-cwd DIR                  move a session to another project; prints {\"newFile\"}
  gc [--dry-run | --delete] [--forget-missing]  blobs no session references or pins (older than an hour); --delete deletes

Options:
  --agent-dir DIR   the agent directory (blobs in DIR/blobs, sessions in DIR/sessions);
                    default: $HOME/.xcsh/agent
  -h, --help        print this help

Paths are guest paths: absolute, or relative to the host's initial directory if it reports
one. --cwd defaults to that directory. show, context, tree, recent and list never write.
Errors go to stderr; exit code 3 when the file or entry does not exist, 2 for usage
errors or several resume matches, 4 for a session of another project, 1 otherwise.";

/// One subcommand and its arguments, as given (paths not yet made absolute).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `show FILE`.
    Show { file: String },
    /// `context FILE [--leaf ID]`.
    Context { file: String, leaf: Option<String> },
    /// `tree FILE`.
    Tree { file: String },
    /// `migrate FILE`.
    Migrate { file: String },
    /// `append FILE --json ENTRY|- [--cwd DIR]`.
    Append {
        file: String,
        entry: String,
        cwd: Option<String>,
    },
    /// `recent [--cwd DIR] [--limit N]`.
    Recent { cwd: Option<String>, limit: u32 },
    /// `list [--cwd DIR | --all] [--with-text | --limit N]`.
    List {
        cwd: Option<String>,
        all: bool,
        with_text: bool,
        limit: Option<u32>,
    },
    /// `fork FILE`.
    Fork { file: String },
    /// `search QUERY [--cwd DIR | --all]`.
    Search {
        query: String,
        cwd: Option<String>,
        all: bool,
    },
    /// `resume ARG [--cwd DIR] [--yes] [--json]`.
    Resume {
        arg: String,
        cwd: Option<String>,
        yes: bool,
        json: bool,
    },
    /// `move FILE --to-cwd DIR`.
    Move { file: String, to_cwd: String },
    /// `gc [--dry-run | --delete] [--forget-missing]`.
    Gc { delete: bool, forget_missing: bool },
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// `--help` (anywhere), or no command at all.
    Help,
    /// A command, with the global `--agent-dir`.
    Run {
        agent_dir: Option<String>,
        command: Command,
    },
}

/// What each subcommand accepts: its positional arguments, options with a value, and
/// boolean flags.
struct Spec {
    positionals: &'static [&'static str],
    values: &'static [&'static str],
    flags: &'static [&'static str],
}

fn spec(name: &str) -> Option<Spec> {
    let file = &["FILE"];
    Some(match name {
        "show" | "tree" | "migrate" => Spec {
            positionals: file,
            values: &[],
            flags: &["json"],
        },
        "context" => Spec {
            positionals: file,
            values: &["leaf"],
            flags: &["json"],
        },
        "append" => Spec {
            positionals: file,
            values: &["json", "cwd"],
            flags: &[],
        },
        "recent" => Spec {
            positionals: &[],
            values: &["cwd", "limit"],
            flags: &["json"],
        },
        "list" => Spec {
            positionals: &[],
            values: &["cwd", "limit"],
            flags: &["json", "all", "with-text"],
        },
        "fork" => Spec {
            positionals: file,
            values: &[],
            flags: &[],
        },
        "search" => Spec {
            positionals: &["QUERY"],
            values: &["cwd"],
            flags: &["json", "all"],
        },
        "resume" => Spec {
            positionals: &["ID-PREFIX|PATH"],
            values: &["cwd"],
            flags: &["json", "yes"],
        },
        "move" => Spec {
            positionals: file,
            values: &["to-cwd"],
            flags: &[],
        },
        "gc" => Spec {
            positionals: &[],
            values: &[],
            flags: &["dry-run", "delete", "forget-missing"],
        },
        _ => return None,
    })
}

/// The arguments after the program name.
pub fn parse(args: &[String]) -> Result<Invocation, String> {
    let mut agent_dir: Option<String> = None;
    let mut name: Option<(&str, Spec)> = None;
    let mut positionals: Vec<String> = Vec::new();
    let mut values: Vec<(&'static str, String)> = Vec::new();
    let mut flags: Vec<&'static str> = Vec::new();
    let mut help = false;
    let mut it = args.iter();
    let mut only_positionals = false;
    while let Some(arg) = it.next() {
        if only_positionals || arg == "-" || !arg.starts_with('-') {
            match &name {
                None if !only_positionals => {
                    let s = spec(arg).ok_or_else(|| format!("unrecognized subcommand '{arg}'"))?;
                    name = Some((arg.as_str(), s));
                }
                _ => positionals.push(arg.clone()),
            }
            continue;
        }
        if arg == "--" {
            only_positionals = true;
            continue;
        }
        if arg == "-h" || arg == "--help" {
            help = true;
            continue;
        }
        let Some(long) = arg.strip_prefix("--") else {
            return Err(format!("unexpected argument '{arg}' found"));
        };
        let (key, inline) = match long.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (long, None),
        };
        let mut value = |key: &str| -> Result<String, String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it.next().cloned().ok_or_else(|| {
                    format!("a value is required for '--{key}' but none was supplied")
                }),
            }
        };
        if key == "agent-dir" {
            if agent_dir.is_some() {
                return Err("the argument '--agent-dir' cannot be used multiple times".into());
            }
            agent_dir = Some(value(key)?);
            continue;
        }
        let Some((_, s)) = &name else {
            return Err(format!("unexpected argument '{arg}' found"));
        };
        if let Some(k) = s.values.iter().find(|k| **k == key) {
            if values.iter().any(|(v, _)| v == k) {
                return Err(format!(
                    "the argument '--{k}' cannot be used multiple times"
                ));
            }
            values.push((k, value(k)?));
        } else if let Some(k) = s.flags.iter().find(|k| **k == key) {
            if inline.is_some() {
                return Err(format!("unexpected value for the flag '--{k}'"));
            }
            if !flags.contains(k) {
                flags.push(k);
            }
        } else {
            return Err(format!("unexpected argument '{arg}' found"));
        }
    }
    if help {
        return Ok(Invocation::Help);
    }
    let Some((name, s)) = name else {
        return Ok(Invocation::Help);
    };
    if positionals.len() > s.positionals.len() {
        return Err(format!(
            "unexpected argument '{}' found",
            positionals[s.positionals.len()]
        ));
    }
    if positionals.len() < s.positionals.len() {
        return Err(format!(
            "the following required arguments were not provided: <{}>",
            s.positionals[positionals.len()]
        ));
    }
    let take = |key: &str| {
        values
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    };
    let has = |key: &str| flags.contains(&key);
    let file = positionals.into_iter().next().unwrap_or_default();
    let command = match name {
        "show" => Command::Show { file },
        "context" => Command::Context {
            file,
            leaf: take("leaf"),
        },
        "tree" => Command::Tree { file },
        "migrate" => Command::Migrate { file },
        "append" => Command::Append {
            file,
            entry: take("json").ok_or(
                "the following required arguments were not provided: --json <ENTRY-JSON | ->",
            )?,
            cwd: take("cwd"),
        },
        "recent" => Command::Recent {
            cwd: take("cwd"),
            limit: take("limit").map(limit).transpose()?.unwrap_or(3),
        },
        "list" => {
            let cwd = take("cwd");
            if cwd.is_some() && has("all") {
                return Err("the argument '--cwd <DIR>' cannot be used with '--all'".into());
            }
            let limit = take("limit").map(limit).transpose()?;
            if limit.is_some() && has("with-text") {
                return Err("the argument '--with-text' cannot be used with '--limit <N>'".into());
            }
            Command::List {
                cwd,
                all: has("all"),
                with_text: has("with-text"),
                limit,
            }
        }
        "search" => {
            let cwd = take("cwd");
            if cwd.is_some() && has("all") {
                return Err("the argument '--cwd <DIR>' cannot be used with '--all'".into());
            }
            Command::Search {
                query: file,
                cwd,
                all: has("all"),
            }
        }
        "resume" => Command::Resume {
            arg: file,
            cwd: take("cwd"),
            yes: has("yes"),
            json: has("json"),
        },
        "move" => Command::Move {
            file,
            to_cwd: take("to-cwd")
                .ok_or("the following required arguments were not provided: --to-cwd <DIR>")?,
        },
        "gc" => {
            if has("dry-run") && has("delete") {
                return Err("the argument '--dry-run' cannot be used with '--delete'".into());
            }
            Command::Gc {
                delete: has("delete"),
                forget_missing: has("forget-missing"),
            }
        }
        _ => Command::Fork { file },
    };
    Ok(Invocation::Run { agent_dir, command })
}

/// The value of `--limit <N>`: a count.
fn limit(n: String) -> Result<u32, String> {
    n.parse()
        .map_err(|_| format!("invalid value '{n}' for '--limit <N>'"))
}

/// `path` made absolute against `cwd` (the host's initial directory, if any), with `.`
/// dropped and `..` resolved lexically (the guest cannot resolve symlinks; whatever the
/// result names, only the preopens are reachable).
pub fn absolute(path: &str, cwd: Option<&str>) -> Result<String, String> {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        match cwd {
            Some(c) if c.starts_with('/') => format!("{c}/{path}"),
            _ => {
                return Err(format!(
                    "{path}: a relative path needs a current directory, and this host gives \
                     none; use an absolute guest path"
                ))
            }
        }
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            name => parts.push(name),
        }
    }
    Ok(format!("/{}", parts.join("/")))
}

/// A session file argument: [`absolute`], and its last component must name a file.
pub fn absolute_file(path: &str, cwd: Option<&str>) -> Result<String, String> {
    let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    if path.ends_with('/') || matches!(last, "" | "." | "..") {
        return Err(format!("{path} does not name a file"));
    }
    absolute(path, cwd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    fn run(s: &[&str]) -> (Option<String>, Command) {
        match parse(&args(s)) {
            Ok(Invocation::Run { agent_dir, command }) => (agent_dir, command),
            other => panic!("{s:?}: {other:?}"),
        }
    }

    /// The README names the subcommands `--help` lists, at its top and in "Subcommands",
    /// and says of none of them that it is not here.
    #[test]
    fn the_readme_names_every_subcommand_and_denies_none() {
        let readme = include_str!("../README.md");
        let top = &readme[..readme.find("command component").expect("the opening")];
        let here = readme
            .split("- **Subcommands.**")
            .nth(1)
            .expect("the Subcommands point");
        let (listed, not_here) = here.split_once("Not").expect("what is not here");
        let not_here = &not_here[..not_here.find("- **").unwrap_or(not_here.len())];
        let commands: Vec<&str> = USAGE
            .lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| !l.is_empty())
            .filter(|l| !l.starts_with("   ")) // a command's, not a description's line
            .filter_map(|l| l.strip_prefix("  ")?.split_whitespace().next())
            .filter(|w| w.chars().all(|c| c.is_ascii_lowercase()))
            .collect();
        assert!(commands.len() >= 12, "{commands:?}");
        for c in commands {
            let named = format!("`{c}`");
            assert!(
                top.contains(&named),
                "{c} is not in the README's opening list"
            );
            assert!(
                listed.contains(&named),
                "{c} is not in its Subcommands point"
            );
            assert!(
                !not_here.contains(&named),
                "the README says {c} is not here"
            );
        }
    }

    #[test]
    fn subcommands_and_their_options_parse_as_the_cli_host_takes_them() {
        assert_eq!(
            run(&["show", "/d/a.jsonl", "--json"]),
            (
                None,
                Command::Show {
                    file: "/d/a.jsonl".into()
                }
            )
        );
        assert_eq!(
            run(&["--agent-dir", "/ag", "context", "/d/a.jsonl", "--leaf=x1"]),
            (
                Some("/ag".into()),
                Command::Context {
                    file: "/d/a.jsonl".into(),
                    leaf: Some("x1".into())
                }
            )
        );
        assert_eq!(
            run(&[
                "append",
                "/d/a.jsonl",
                "--json",
                "-",
                "--cwd",
                "/p",
                "--agent-dir=/ag"
            ]),
            (
                Some("/ag".into()),
                Command::Append {
                    file: "/d/a.jsonl".into(),
                    entry: "-".into(),
                    cwd: Some("/p".into())
                }
            )
        );
        // A value that starts with '-' is the value of --json.
        assert!(matches!(
            run(&["append", "/f", "--json", "-x"]).1,
            Command::Append { entry, .. } if entry == "-x"
        ));
        assert_eq!(
            run(&["recent", "--limit", "7"]).1,
            Command::Recent {
                cwd: None,
                limit: 7
            }
        );
        assert_eq!(
            run(&["list", "--all"]).1,
            Command::List {
                cwd: None,
                all: true,
                with_text: false,
                limit: None
            }
        );
        assert_eq!(
            run(&["list", "--limit", "20"]).1,
            Command::List {
                cwd: None,
                all: false,
                with_text: false,
                limit: Some(20)
            }
        );
        assert_eq!(run(&["fork", "/f"]).1, Command::Fork { file: "/f".into() });
        assert_eq!(
            run(&["show", "--", "-odd"]).1,
            Command::Show {
                file: "-odd".into()
            }
        );
    }

    #[test]
    fn help_and_usage_errors() {
        assert_eq!(parse(&args(&[])), Ok(Invocation::Help));
        assert_eq!(parse(&args(&["show", "--help"])), Ok(Invocation::Help));
        for (bad, says) in [
            (&["frobnicate"][..], "unrecognized subcommand 'frobnicate'"),
            (
                &["show"][..],
                "required arguments were not provided: <FILE>",
            ),
            (&["show", "a", "b"][..], "unexpected argument 'b'"),
            (
                &["show", "a", "--leaf", "x"][..],
                "unexpected argument '--leaf'",
            ),
            (&["append", "a"][..], "--json <ENTRY-JSON | ->"),
            (
                &["append", "a", "--json"][..],
                "a value is required for '--json'",
            ),
            (
                &["list", "--all", "--cwd", "/p"][..],
                "cannot be used with '--all'",
            ),
            (&["recent", "--limit", "many"][..], "invalid value 'many'"),
            (&["list", "--limit", "-1"][..], "invalid value '-1'"),
            (
                &["list", "--limit", "2", "--with-text"][..],
                "cannot be used with '--limit <N>'",
            ),
            (
                &["show", "a", "--json=1"][..],
                "unexpected value for the flag '--json'",
            ),
            (&["show", "a", "-x"][..], "unexpected argument '-x'"),
        ] {
            match parse(&args(bad)) {
                Err(e) => assert!(e.contains(says), "{bad:?}: {e}"),
                Ok(v) => panic!("{bad:?} parsed: {v:?}"),
            }
        }
    }

    #[test]
    fn paths_are_made_absolute_lexically() {
        assert_eq!(absolute("/a/./b//c", None).as_deref(), Ok("/a/b/c"));
        assert_eq!(
            absolute("/data/../etc/passwd", None).as_deref(),
            Ok("/etc/passwd")
        );
        assert_eq!(absolute("/../../x", None).as_deref(), Ok("/x"));
        assert_eq!(absolute("s.jsonl", Some("/w")).as_deref(), Ok("/w/s.jsonl"));
        assert!(absolute("s.jsonl", None)
            .unwrap_err()
            .contains("relative path"));
        assert!(absolute_file("/d/", None).is_err());
        assert!(absolute_file("/d/..", None).is_err());
        assert_eq!(
            absolute_file("/d/f.jsonl", None).as_deref(),
            Ok("/d/f.jsonl")
        );
    }

    #[test]
    fn the_finding_commands_parse_as_the_cli_hosts() {
        assert_eq!(
            run(&["search", "pasta", "--all"]).1,
            Command::Search {
                query: "pasta".into(),
                cwd: None,
                all: true
            }
        );
        assert_eq!(
            run(&["resume", "abcd", "--cwd", "/w", "--yes", "--json"]).1,
            Command::Resume {
                arg: "abcd".into(),
                cwd: Some("/w".into()),
                yes: true,
                json: true
            }
        );
        assert_eq!(
            run(&["move", "/d/s.jsonl", "--to-cwd", "/x"]).1,
            Command::Move {
                file: "/d/s.jsonl".into(),
                to_cwd: "/x".into()
            }
        );
        let gc = |delete, forget_missing| Command::Gc {
            delete,
            forget_missing,
        };
        assert_eq!(run(&["gc"]).1, gc(false, false));
        assert_eq!(run(&["gc", "--delete"]).1, gc(true, false));
        assert_eq!(
            run(&["gc", "--delete", "--forget-missing"]).1,
            gc(true, true)
        );
        for bad in [
            &["gc", "--dry-run", "--delete"][..],
            &["move", "/d/s.jsonl"],
            &["search", "q", "--cwd", "/w", "--all"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }
}
