//! Which agent's rules a session writes by: xcsh's (the default) or pi's. Every rule that
//! differs between them is a method here, written once; the rest of the core asks.
//!
//! | rule | xcsh | pi |
//! |---|---|---|
//! | session id | 16 hex, time-sortable | a UUID v7 |
//! | what is persisted | images to blobs, strings over 500,000 units cut | the entry as given |
//! | `custom_message` | `attribution` (default `"agent"`) | no `attribution` |
//! | a cwd's session directory | `-<rel>` / `-tmp-<rel>` / `--<cwd>--` | always `--<cwd>--` |
//! | `forkFrom`'s `parentSession` | the source's id | the source's path |
//! | copies (fork, branched session) | stale OpenAI replay data dropped | entries as they are |
//! | a branched session's labels | in path order, new times | in the order set, their times |
//! | context | `models` by role | also pi's `model` (`{ provider, modelId }`) |
//! | listing `modified` | the file's mtime | the latest user/assistant message's time |
//!
//! A host chooses; without a choice, a session in an agent directory `…/.pi/agent` is pi's.

use crate::ids::{uuid_v7, SessionIdGen};
use crate::persist::Transforms;
use crate::storage::Environment;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flavour {
    /// xcsh's (and oh-my-pi's) SessionManager.
    #[default]
    Xcsh,
    /// pi's (`@mariozechner/pi-coding-agent`) SessionManager.
    Pi,
}

impl Flavour {
    /// `"xcsh"` or `"pi"`; anything else is `None`.
    pub fn parse(name: &str) -> Option<Flavour> {
        match name {
            "xcsh" => Some(Flavour::Xcsh),
            "pi" => Some(Flavour::Pi),
            _ => None,
        }
    }

    /// The flavour an agent directory implies: pi's `~/.pi/agent`, else xcsh's.
    pub fn of_agent_dir(agent_dir: &str) -> Flavour {
        let dir = agent_dir.trim_end_matches(['/', '\\']).replace('\\', "/");
        match dir.ends_with("/.pi/agent") || dir == ".pi/agent" {
            true => Flavour::Pi,
            false => Flavour::Xcsh,
        }
    }

    /// A new session's id.
    pub fn new_session_id(self, env: &dyn Environment, now_ms: i64) -> String {
        match self {
            Flavour::Xcsh => SessionIdGen::new(env.random_u64()).next(now_ms),
            Flavour::Pi => uuid_v7(now_ms, || env.random_u64()),
        }
    }

    /// What a write does to an entry (`None`: it is written as it is).
    pub fn transforms(self, xcsh: Transforms) -> Option<Transforms> {
        match self {
            Flavour::Xcsh => Some(xcsh),
            Flavour::Pi => None,
        }
    }

    /// A `custom_message`'s `attribution` field, if it gets one.
    pub fn attribution(self, given: Option<&str>) -> Option<&str> {
        match self {
            Flavour::Xcsh => Some(given.unwrap_or("agent")),
            Flavour::Pi => None,
        }
    }

    /// The directory new sessions of `cwd` go to (no legacy folder is merged for pi).
    pub fn session_dir_for_cwd(self, agent_dir: &str, cwd: &str) -> String {
        match self {
            Flavour::Xcsh => crate::paths::session_dir_for_cwd(agent_dir, cwd),
            Flavour::Pi => crate::paths::legacy_session_dir(agent_dir, cwd),
        }
    }

    /// `forkFrom`'s link to its source: the source's id (xcsh) or path (pi).
    pub fn fork_parent<'a>(self, source_id: &'a str, source_path: &'a str) -> &'a str {
        match self {
            Flavour::Xcsh => source_id,
            Flavour::Pi => source_path,
        }
    }

    /// Does a copy (fork, branched session) drop stale OpenAI Responses replay data from
    /// entries read from the file? Pi copies them as they are.
    pub fn drops_stale_replay(self) -> bool {
        self == Flavour::Xcsh
    }

    /// Does a branched session get its labels in the order they were set, at the times
    /// they were set (pi), rather than in path order at the copy's time (xcsh)?
    pub fn labels_as_set(self) -> bool {
        self == Flavour::Pi
    }

    /// Does the context carry pi's `model`?
    pub fn context_has_model(self) -> bool {
        self == Flavour::Pi
    }

    /// Is a listed session's `modified` its latest message's time (else the file's mtime)?
    pub fn modified_by_messages(self) -> bool {
        self == Flavour::Pi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pi_agent_dir_means_pi_and_anything_else_xcsh() {
        assert_eq!(Flavour::of_agent_dir("/home/u/.pi/agent"), Flavour::Pi);
        assert_eq!(Flavour::of_agent_dir("/home/u/.pi/agent/"), Flavour::Pi);
        assert_eq!(
            Flavour::of_agent_dir("C:\\Users\\u\\.pi\\agent"),
            Flavour::Pi
        );
        assert_eq!(Flavour::of_agent_dir("/home/u/.xcsh/agent"), Flavour::Xcsh);
        assert_eq!(Flavour::of_agent_dir("/home/u/.omp/agent"), Flavour::Xcsh);
        assert_eq!(Flavour::of_agent_dir("/t/pi/agent"), Flavour::Xcsh);
        assert_eq!(Flavour::of_agent_dir(""), Flavour::Xcsh);
    }

    #[test]
    fn names_parse() {
        assert_eq!(Flavour::parse("pi"), Some(Flavour::Pi));
        assert_eq!(Flavour::parse("xcsh"), Some(Flavour::Xcsh));
        assert_eq!(Flavour::parse("omp"), None);
    }
}
