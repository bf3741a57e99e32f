//! What a user reads about the command line: the README's usage block, the shell
//! completions and the man page. Each must name every command (and the README every
//! option), so a command or flag added to the clap definitions and forgotten in the docs
//! fails here. None of these runs the component.

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

/// What bash's completion of `xcsh-session` offers for `words` (the last one the word
/// being completed), from the script `completions bash` prints, sourced as
/// bash-completion does.
fn bash_complete(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let line = format!(
        "source '{}'\n\
         spec=$(complete -p xcsh-session) || exit 3\n\
         f=$(sed -n 's/.*-F \\([^ ]*\\).*/\\1/p' <<<\"$spec\")\n\
         COMP_WORDS=(xcsh-session {})\n\
         COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n\
         \"$f\" xcsh-session \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" ")
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &line])
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// `completions bash` prints a script made from the clap definitions that, sourced,
/// completes every command, the subcommands of `blob` and `history`, and each command's
/// own options (the last failed in clap_complete's script for a hyphenated name).
#[test]
fn bash_completion_completes_every_command_and_its_options() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("xcsh-session.bash");
    std::fs::write(&script, run(&["completions", "bash"])).expect("write");
    let top = bash_complete(&script, &[""]);
    for command in subcommands(&[]) {
        assert!(top.contains(&command), "{command} completed: {top:?}");
    }
    assert!(top.contains(&"--agent-dir".to_string()), "{top:?}");
    for command in commands() {
        let mut words: Vec<&str> = command.split(' ').collect();
        let (last, parent) = words.split_last().expect("a word");
        let mut prefix = parent.to_vec();
        prefix.push("");
        let offered = bash_complete(&script, &prefix);
        assert!(offered.iter().any(|o| o == last), "{command}: {offered:?}");
        words.push("--");
        let offered = bash_complete(&script, &words);
        for option in options(&command) {
            assert!(offered.contains(&option), "{command} {option}: {offered:?}");
        }
    }
    assert_eq!(
        bash_complete(&script, &["list", "--with"]),
        vec!["--with-text"]
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        assert!(
            run(&["completions", shell]).contains("xcsh-session"),
            "{shell}"
        );
    }
    let out = Command::new(BIN)
        .args(["completions", "tcsh"])
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

/// `man` prints the man page (roff) made from the clap definitions: it renders (`man -l`,
/// where man is installed) and names every command and the global options; `man --dir`
/// writes it and a page for every command.
#[test]
fn the_man_page_renders_and_names_every_command() {
    let roff = run(&["man"]);
    assert!(
        roff.contains("\n.TH xcsh-session 1"),
        "roff, section 1: {roff:.300}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("xcsh-session.1");
    std::fs::write(&page, &roff).expect("write");
    let text = match Command::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100")
        .env("LC_ALL", "C")
        .output()
    {
        Ok(out) => {
            assert!(
                out.status.success(),
                "man -l: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(!text.contains(".TH"), "rendered, not raw roff");
            // Bold and underline by overstriking (`x\u{8}x`), if man writes them: the text.
            let mut plain = String::new();
            for c in text.chars() {
                match c {
                    '\u{8}' => {
                        plain.pop();
                    }
                    c => plain.push(c),
                }
            }
            plain
        }
        Err(_) => roff.clone(),
    };
    assert!(text.contains("xcsh-session"), "{text:.400}");
    for option in ["--agent-dir", "--root", "--no-index-cache"] {
        assert!(
            text.contains(option) || text.contains(&option.replace('-', "\\-")),
            "{option}: {text:.2000}"
        );
    }
    for command in subcommands(&[]) {
        assert!(text.contains(&command), "{command} in the man page");
    }

    // `man --dir`: that page and one per command (`xcsh-session-history-add.1`).
    let pages = dir.path().join("man1");
    let listed = run(&["man", "--dir", pages.to_str().expect("utf-8")]);
    let mut want = vec![pages.join("xcsh-session.1")];
    want.extend(
        commands()
            .iter()
            .map(|c| pages.join(format!("xcsh-session-{}.1", c.replace(' ', "-")))),
    );
    for page in &want {
        assert!(page.is_file(), "{} written", page.display());
        assert!(
            listed.lines().any(|l| l == page.to_str().expect("utf-8")),
            "{} listed: {listed}",
            page.display()
        );
    }
    assert_eq!(
        std::fs::read_to_string(pages.join("xcsh-session.1")).expect("read"),
        roff,
        "the same main page"
    );
}
