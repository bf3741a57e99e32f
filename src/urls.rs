//! Internal URLs: `artifact://<id>` (full tool output) and
//! `agent://<id>[/<path>|?q=<query>]` (subagent output, optionally JSON-extracted).
//!
//! Ids are untrusted: an artifact id must be numeric, an agent id must name a file the
//! artifacts directory lists. Nothing resolves outside that directory.

use crate::artifacts::{artifact_id_of, list_names};
use crate::storage::{join, Storage, StorageError};
use serde_json::Value;

/// A parsed internal URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InternalUrl {
    Artifact {
        id: String,
    },
    Agent {
        id: String,
        path: Option<String>,
        query: Option<String>,
    },
}

/// Errors, with the agent's exact messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("artifact:// URL requires a numeric ID: artifact://0")]
    ArtifactIdRequired,
    #[error("artifact:// ID must be numeric, got: {0}")]
    ArtifactIdNotNumeric(String),
    #[error("No artifacts directory found")]
    NoArtifactsDirectory,
    #[error("Artifact {id} not found. Available: {available}")]
    ArtifactNotFound { id: String, available: String },
    #[error("agent:// URL requires an output ID: agent://<id>")]
    AgentIdRequired,
    #[error("agent:// URL cannot combine path extraction with ?q=")]
    PathWithQuery,
    #[error("Not found: {id}\nAvailable: {available}")]
    AgentOutputNotFound { id: String, available: String },
    #[error("Output {id} is not valid JSON: {message}")]
    NotJson { id: String, message: String },
    #[error("Path {path} not found in output {id}")]
    PathNotFound { id: String, path: String },
    #[error("offset/limit cannot be combined with agent:// JSON extraction")]
    PagingWithExtraction,
    #[error("Unsupported internal URL: {0}")]
    Unsupported(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// What a URL resolves to; `url` prints it as `{"content", "mimeType", "size"}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    pub content: String,
    pub mime_type: &'static str,
    /// UTF-8 bytes of `content`.
    pub size: usize,
}

/// Paging for plain reads: `offset` is the 1-based first line, `limit` a line count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Paging {
    pub offset: Option<usize>,
    pub limit: Option<usize>,
}

fn percent_decode(s: &str) -> String {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse an `artifact://` or `agent://` URL.
pub fn parse(url: &str) -> Result<InternalUrl, UrlError> {
    if let Some(rest) = url.strip_prefix("artifact://") {
        let id = rest.trim_end_matches('/');
        if id.is_empty() {
            return Err(UrlError::ArtifactIdRequired);
        }
        if !id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(UrlError::ArtifactIdNotNumeric(id.to_string()));
        }
        return Ok(InternalUrl::Artifact { id: id.to_string() });
    }
    if let Some(rest) = url.strip_prefix("agent://") {
        let (before_query, query) = match rest.split_once('?') {
            Some((b, q)) => {
                let q = q
                    .split('&')
                    .find_map(|kv| kv.strip_prefix("q="))
                    .map(percent_decode);
                (b, q)
            }
            None => (rest, None),
        };
        let (id, path) = match before_query.split_once('/') {
            Some((id, p)) => (
                id,
                Some(p.trim_matches('/'))
                    .filter(|p| !p.is_empty())
                    .map(percent_decode),
            ),
            None => (before_query, None),
        };
        if id.is_empty() {
            return Err(UrlError::AgentIdRequired);
        }
        if path.is_some() && query.is_some() {
            return Err(UrlError::PathWithQuery);
        }
        return Ok(InternalUrl::Agent {
            id: percent_decode(id),
            path,
            query: query.filter(|q| !q.is_empty()),
        });
    }
    Err(UrlError::Unsupported(url.to_string()))
}

fn page(content: String, paging: Paging) -> String {
    if paging.offset.is_none() && paging.limit.is_none() {
        return content;
    }
    let start = paging.offset.unwrap_or(1).max(1) - 1;
    let lines = content.split('\n').skip(start);
    let selected: Vec<&str> = match paging.limit {
        Some(n) => lines.take(n).collect(),
        None => lines.collect(),
    };
    selected.join("\n")
}

fn resource(content: String, mime_type: &'static str) -> Resource {
    Resource {
        size: content.len(),
        content,
        mime_type,
    }
}

fn require_dir(storage: &dyn Storage, dir: Option<&str>) -> Result<String, UrlError> {
    let dir = dir.ok_or(UrlError::NoArtifactsDirectory)?;
    match storage.stat(dir) {
        Ok(s) if s.is_dir => Ok(dir.to_string()),
        Ok(_) => Err(UrlError::NoArtifactsDirectory),
        Err(e) if e.is_not_found() => Err(UrlError::NoArtifactsDirectory),
        Err(e) => Err(e.into()),
    }
}

fn available(ids: &[String]) -> String {
    if ids.is_empty() {
        "none".into()
    } else {
        ids.join(", ")
    }
}

/// Steps of a `/foo/0/bar` path or a `.foo[0].bar` / `foo.0.bar` query.
fn steps(expr: &str, is_query: bool) -> Vec<String> {
    if !is_query {
        return expr
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
    }
    expr.replace('[', ".")
        .replace(']', "")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_matches('"').to_string())
        .collect()
}

fn extract<'v>(value: &'v Value, steps: &[String]) -> Option<&'v Value> {
    steps.iter().try_fold(value, |v, step| match v {
        Value::Array(items) => step.parse::<usize>().ok().and_then(|i| items.get(i)),
        Value::Object(map) => map.get(step.as_str()),
        _ => None,
    })
}

/// Resolve a URL against a session's artifacts directory (`None`: the session has none).
pub fn resolve(
    storage: &dyn Storage,
    artifacts_dir: Option<&str>,
    url: &str,
    paging: Paging,
) -> Result<Resource, UrlError> {
    match parse(url)? {
        InternalUrl::Artifact { id } => {
            let dir = require_dir(storage, artifacts_dir)?;
            let mut files: Vec<(u64, String)> = list_names(storage, &dir)?
                .into_iter()
                .filter_map(|n| artifact_id_of(&n).map(|i| (i, n)))
                .collect();
            crate::sort::sort_by(&mut files, Ord::cmp);
            let prefix = format!("{id}.");
            match files.iter().find(|(_, n)| n.starts_with(&prefix)) {
                Some((_, name)) => {
                    let bytes = storage.read(&join(&dir, name))?;
                    Ok(resource(
                        page(String::from_utf8_lossy(&bytes).into_owned(), paging),
                        "text/plain",
                    ))
                }
                None => Err(UrlError::ArtifactNotFound {
                    id,
                    available: available(
                        &files.iter().map(|(i, _)| i.to_string()).collect::<Vec<_>>(),
                    ),
                }),
            }
        }
        InternalUrl::Agent { id, path, query } => {
            let dir = require_dir(storage, artifacts_dir)?;
            let mut ids: Vec<String> = list_names(storage, &dir)?
                .into_iter()
                .filter_map(|n| n.strip_suffix(".md").map(str::to_string))
                .collect();
            crate::sort::sort_by(&mut ids, Ord::cmp);
            if !ids.contains(&id) {
                return Err(UrlError::AgentOutputNotFound {
                    id,
                    available: available(&ids),
                });
            }
            let text = String::from_utf8_lossy(&storage.read(&join(&dir, &format!("{id}.md")))?)
                .into_owned();
            let expr = match (&path, &query) {
                (Some(p), None) => Some(steps(p, false)),
                (None, Some(q)) => Some(steps(q, true)),
                _ => None,
            };
            let Some(steps) = expr else {
                return Ok(resource(page(text, paging), "text/markdown"));
            };
            if paging.offset.is_some() || paging.limit.is_some() {
                return Err(UrlError::PagingWithExtraction);
            }
            let value: Value = serde_json::from_str(&text).map_err(|e| UrlError::NotJson {
                id: id.clone(),
                message: e.to_string(),
            })?;
            let found = extract(&value, &steps).ok_or_else(|| UrlError::PathNotFound {
                id: id.clone(),
                path: path.or(query).unwrap_or_default(),
            })?;
            let pretty = serde_json::to_string_pretty(found).unwrap_or_else(|_| "null".into());
            Ok(resource(pretty, "application/json"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemoryStorage;

    fn setup() -> MemoryStorage {
        let s = MemoryStorage::new();
        s.mkdir_all("/p/sess").unwrap();
        s.write("/p/sess/0.bash.log", b"line1\nline2\nline3")
            .unwrap();
        s.write("/p/sess/2.python.log", "héllo".as_bytes()).unwrap();
        s.write("/p/sess/0-Task.md", br#"{"foo":[{"bar":"baz"}],"n":1.50}"#)
            .unwrap();
        s.write("/p/sess/1-Notes.md", b"# plain markdown").unwrap();
        s
    }

    fn err(s: &MemoryStorage, url: &str) -> String {
        resolve(s, Some("/p/sess"), url, Paging::default())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn artifact_urls_resolve_and_fail_with_the_exact_messages() {
        let s = setup();
        let r = resolve(&s, Some("/p/sess"), "artifact://2", Paging::default()).unwrap();
        assert_eq!(
            (r.content.as_str(), r.mime_type, r.size),
            ("héllo", "text/plain", 6)
        );
        assert_eq!(
            err(&s, "artifact://"),
            "artifact:// URL requires a numeric ID: artifact://0"
        );
        assert_eq!(
            err(&s, "artifact://abc"),
            "artifact:// ID must be numeric, got: abc"
        );
        assert_eq!(
            err(&s, "artifact://7"),
            "Artifact 7 not found. Available: 0, 2"
        );
        assert_eq!(
            resolve(&s, None, "artifact://0", Paging::default())
                .unwrap_err()
                .to_string(),
            "No artifacts directory found"
        );
        assert_eq!(
            resolve(&s, Some("/p/nope"), "artifact://0", Paging::default())
                .unwrap_err()
                .to_string(),
            "No artifacts directory found"
        );
        s.mkdir_all("/p/empty").unwrap();
        assert_eq!(
            resolve(&s, Some("/p/empty"), "artifact://0", Paging::default())
                .unwrap_err()
                .to_string(),
            "Artifact 0 not found. Available: none"
        );
    }

    #[test]
    fn paged_reads_take_line_ranges() {
        let s = setup();
        let r = resolve(
            &s,
            Some("/p/sess"),
            "artifact://0",
            Paging {
                offset: Some(2),
                limit: Some(1),
            },
        )
        .unwrap();
        assert_eq!(r.content, "line2");
    }

    #[test]
    fn agent_urls_extract_json_by_path_or_query() {
        let s = setup();
        let plain = resolve(&s, Some("/p/sess"), "agent://1-Notes", Paging::default()).unwrap();
        assert_eq!(
            (plain.content.as_str(), plain.mime_type),
            ("# plain markdown", "text/markdown")
        );
        let by_path = resolve(
            &s,
            Some("/p/sess"),
            "agent://0-Task/foo/0/bar",
            Paging::default(),
        )
        .unwrap();
        assert_eq!(
            (by_path.content.as_str(), by_path.mime_type),
            ("\"baz\"", "application/json")
        );
        let by_query = resolve(
            &s,
            Some("/p/sess"),
            "agent://0-Task?q=.foo[0]",
            Paging::default(),
        )
        .unwrap();
        assert_eq!(by_query.content, "{\n  \"bar\": \"baz\"\n}");
        let whole = resolve(
            &s,
            Some("/p/sess"),
            "agent://0-Task?q=.n",
            Paging::default(),
        )
        .unwrap();
        assert_eq!(whole.content, "1.50");
    }

    #[test]
    fn agent_url_errors_are_exact() {
        let s = setup();
        assert_eq!(
            err(&s, "agent://"),
            "agent:// URL requires an output ID: agent://<id>"
        );
        assert_eq!(
            err(&s, "agent://0-Task/foo?q=.foo"),
            "agent:// URL cannot combine path extraction with ?q="
        );
        assert_eq!(
            err(&s, "agent://9-X"),
            "Not found: 9-X\nAvailable: 0-Task, 1-Notes"
        );
        assert!(err(&s, "agent://1-Notes/x").starts_with("Output 1-Notes is not valid JSON: "));
        assert_eq!(
            resolve(
                &s,
                Some("/p/sess"),
                "agent://0-Task/foo",
                Paging {
                    offset: Some(1),
                    limit: None
                }
            )
            .unwrap_err(),
            UrlError::PagingWithExtraction
        );
    }

    #[test]
    fn traversal_attempts_touch_nothing_outside_the_directory() {
        let s = setup();
        s.write("/p/secret.md", b"secret").unwrap();
        s.write("/p/1.bash.log", b"secret").unwrap();
        assert_eq!(
            err(&s, "artifact://../x"),
            "artifact:// ID must be numeric, got: ../x"
        );
        assert!(err(&s, "agent://../../etc/passwd").starts_with("Not found: ..\nAvailable:"));
        assert!(err(&s, "agent://..%2Fsecret").starts_with("Not found: ../secret\n"));
        assert!(err(&s, "agent://../secret").starts_with("Not found: ..\n"));
    }
}
