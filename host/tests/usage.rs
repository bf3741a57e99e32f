//! What a user reads about the command line: the README's usage block must name every
//! command and each of its options, so a command or flag added to the clap definitions
//! and forgotten in the docs fails here. None of these runs the component.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_xcsh-session");

const README: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");

fn run(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().expect("run");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The subcommands `--help` lists (`help` aside) of `xcsh-session <parent>`.
fn subcommands(parent: &[&str]) -> Vec<String> {
    let mut args = parent.to_vec();
    args.push("--help");
    let help = run(&args);
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// Every command a user can run: `show`, …, `blob put`, `history add`, … (a command with
/// subcommands is listed by them).
fn commands() -> Vec<String> {
    let mut all = Vec::new();
    for c in subcommands(&[]) {
        match subcommands(&[&c]) {
            subs if subs.is_empty() => all.push(c),
            subs => all.extend(subs.into_iter().map(|s| format!("{c} {s}"))),
        }
    }
    all
}

/// The options of one command (`--json`, `--cwd`, …), the global ones and `--help` aside.
fn options(command: &str) -> Vec<String> {
    const GLOBAL: [&str; 7] = [
        "--agent-dir",
        "--root",
        "--component",
        "--verbose",
        "--no-index-cache",
        "--help",
        "--version",
    ];
    let mut args: Vec<&str> = command.split(' ').collect();
    args.push("--help");
    run(&args)
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            // `-v, --verbose`: the long form.
            let long = match l.as_bytes() {
                [b'-', c, b',', b' ', ..] if *c != b'-' => &l[4..],
                _ => l,
            };
            long.starts_with("--")
                .then(|| long.split([' ', '=']).next().unwrap_or(long))
        })
        .filter(|o| !GLOBAL.contains(o))
        .map(str::to_string)
        .collect()
}

/// The README's usage block (the `text` block that starts `xcsh-session [--agent-dir`).
fn readme_usage() -> Vec<String> {
    let readme = std::fs::read_to_string(README).expect("README.md");
    let start = readme
        .find("```text\nxcsh-session [--agent-dir")
        .expect("the README's usage block");
    let block = &readme[start + "```text\n".len()..];
    let end = block.find("```").expect("the block's end");
    block[..end].lines().map(str::to_string).collect()
}

/// The README usage lines of `command`: those that begin with it, or name it after `| `
/// (`blob put <FILE> | blob get <HASH|REF>`), with the comment lines that continue them.
fn readme_lines<'a>(usage: &'a [String], command: &str) -> Vec<&'a str> {
    let starts = |l: &str| {
        let l = l.trim_start();
        l == command || l.starts_with(&format!("{command} "))
    };
    let mut out = Vec::new();
    for (i, line) in usage.iter().enumerate() {
        let code = line.split(" #").next().unwrap_or(line);
        let named = starts(code)
            || code
                .split(" | ")
                .skip(1)
                .any(|part| starts(part) || part.starts_with(&format!("{command} ")));
        if named {
            out.push(line.as_str());
            out.extend(
                usage[i + 1..]
                    .iter()
                    .take_while(|l| l.trim_start().starts_with('#'))
                    .map(String::as_str),
            );
        }
    }
    out
}

#[test]
fn the_help_lists_the_commands_a_user_runs() {
    let all = commands();
    for c in [
        "show",
        "list",
        "continue",
        "blob put",
        "history add",
        "session",
    ] {
        assert!(all.iter().any(|a| a == c), "{c} in {all:?}");
    }
    assert!(options("continue").contains(&"--json".to_string()));
    assert!(options("list").contains(&"--with-text".to_string()));
    assert!(!options("list").contains(&"--agent-dir".to_string()));
}

/// The README's usage block is what a newcomer reads: every command is there with each
/// of its options (`continue --json` prints `{"path", "source"}` as `resume --json` and
/// the listings print JSON; a usage line without it reads as a command that prints only
/// a bare path).
#[test]
fn the_readme_usage_names_every_command_and_each_of_its_options() {
    let usage = readme_usage();
    let mut missing = Vec::new();
    for command in commands() {
        let lines = readme_lines(&usage, &command);
        if lines.is_empty() {
            missing.push(command);
            continue;
        }
        for option in options(&command) {
            if !lines.iter().any(|l| l.contains(&option)) {
                missing.push(format!("{command} {option}"));
            }
        }
    }
    assert_eq!(missing, Vec::<String>::new(), "not in the README's usage");
}
