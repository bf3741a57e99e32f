//! Session-local artifacts: `<session file without .jsonl>/`, holding full tool outputs
//! (`<n>.<toolType>.log`, read back as `artifact://<n>`) and subagent outputs
//! (`<id>.md`, read back as `agent://<id>`).

use crate::storage::{join, Storage, StorageError, StorageExt, StorageResult};

/// Tool types and requested ids become file-name parts: anything but `[A-Za-z0-9_-]` is
/// replaced so no name can leave the directory.
pub fn safe_name_part(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "_".into()
    } else {
        cleaned
    }
}

/// File names in a directory (`[]` when it does not exist).
pub fn list_names(storage: &dyn Storage, dir: &str) -> StorageResult<Vec<String>> {
    match storage.list_dir(dir) {
        Ok(entries) => Ok(entries
            .into_iter()
            .filter(|e| !e.is_dir)
            .map(|e| e.name)
            .collect()),
        Err(e) if e.is_not_found() => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The numeric id of a `<n>.<tool>.log` file name.
pub fn artifact_id_of(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(".log")?;
    let (id, tool) = stem.split_once('.')?;
    if tool.is_empty() || id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id.parse().ok()
}

/// `ArtifactManager`: allocates `<id>.<toolType>.log` files, ids continuing after the
/// highest existing one (scanned on first use, so a resumed session never overwrites).
pub struct ArtifactManager<'s> {
    storage: &'s dyn Storage,
    dir: String,
    next_id: Option<u64>,
}

impl<'s> ArtifactManager<'s> {
    pub fn new(storage: &'s dyn Storage, artifacts_dir: impl Into<String>) -> Self {
        ArtifactManager {
            storage,
            dir: artifacts_dir.into(),
            next_id: None,
        }
    }

    /// For a session file: its path without `.jsonl`.
    pub fn for_session(storage: &'s dyn Storage, session_file: &str) -> Self {
        Self::new(storage, crate::paths::artifacts_dir(session_file))
    }

    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// Continue numbering from `next` (a counter kept across managers of one session).
    pub fn set_next_id(&mut self, next: u64) {
        self.next_id = Some(next);
    }

    /// The next id [`ArtifactManager::allocate_path`] will give, once it has counted.
    pub fn next_id(&self) -> Option<u64> {
        self.next_id
    }

    /// Artifact file names (`[]` when the directory does not exist).
    pub fn list_files(&self) -> StorageResult<Vec<String>> {
        Ok(list_names(self.storage, &self.dir)?
            .into_iter()
            .filter(|n| artifact_id_of(n).is_some())
            .collect())
    }

    /// Reserve the next id and its path; the directory is created here, lazily.
    pub fn allocate_path(&mut self, tool_type: &str) -> StorageResult<(String, String)> {
        let next = match self.next_id {
            Some(n) => n,
            None => self
                .list_files()?
                .iter()
                .filter_map(|n| artifact_id_of(n))
                .max()
                .map_or(0, |m| m + 1),
        };
        self.next_id = Some(next + 1);
        self.storage.mkdir_all(&self.dir)?;
        let id = next.to_string();
        let path = join(
            &self.dir,
            &format!("{id}.{}.log", safe_name_part(tool_type)),
        );
        Ok((id, path))
    }

    /// Write a whole artifact; returns its id.
    pub fn save(&mut self, content: &str, tool_type: &str) -> StorageResult<String> {
        let (id, path) = self.allocate_path(tool_type)?;
        self.storage.write(&path, content.as_bytes())?;
        Ok(id)
    }

    /// The file of artifact `id` (matched by the `<id>.` prefix).
    pub fn get_path(&self, id: &str) -> StorageResult<Option<String>> {
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(None);
        }
        let prefix = format!("{id}.");
        Ok(self
            .list_files()?
            .into_iter()
            .find(|n| n.starts_with(&prefix))
            .map(|n| join(&self.dir, &n)))
    }

    pub fn exists(&self, id: &str) -> bool {
        matches!(self.get_path(id), Ok(Some(_)))
    }
}

/// `AgentOutputManager`: ids `<index>-<requestedId>` (nested: `0-Parent.1-Child`), the
/// index continuing after existing `.md` outputs under the same prefix.
pub struct AgentOutputManager<'s> {
    storage: &'s dyn Storage,
    dir: String,
    prefix: Option<String>,
    next_index: Option<u64>,
}

impl<'s> AgentOutputManager<'s> {
    pub fn new(
        storage: &'s dyn Storage,
        artifacts_dir: impl Into<String>,
        parent_prefix: Option<&str>,
    ) -> Self {
        AgentOutputManager {
            storage,
            dir: artifacts_dir.into(),
            prefix: parent_prefix.map(str::to_string),
            next_index: None,
        }
    }

    /// Output ids present (file names without `.md`), sorted.
    pub fn list_ids(&self) -> StorageResult<Vec<String>> {
        let mut ids: Vec<String> = list_names(self.storage, &self.dir)?
            .into_iter()
            .filter_map(|n| n.strip_suffix(".md").map(str::to_string))
            .collect();
        crate::sort::sort_by(&mut ids, Ord::cmp);
        Ok(ids)
    }

    fn index_under_prefix(&self, id: &str) -> Option<u64> {
        let rest = match &self.prefix {
            Some(p) => id.strip_prefix(p.as_str())?.strip_prefix('.')?,
            None => id,
        };
        let (index, _) = rest.split_once('-')?;
        if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        index.parse().ok()
    }

    /// Allocate the id for a new output of `requested_id`.
    pub fn allocate(&mut self, requested_id: &str) -> StorageResult<String> {
        let next = match self.next_index {
            Some(n) => n,
            None => self
                .list_ids()?
                .iter()
                .filter_map(|id| self.index_under_prefix(id))
                .max()
                .map_or(0, |m| m + 1),
        };
        self.next_index = Some(next + 1);
        let own = format!("{next}-{}", safe_name_part(requested_id));
        Ok(match &self.prefix {
            Some(p) => format!("{p}.{own}"),
            None => own,
        })
    }

    /// Write an output as `<id>.md`.
    pub fn save(&mut self, requested_id: &str, markdown: &str) -> StorageResult<String> {
        let id = self.allocate(requested_id)?;
        self.storage.mkdir_all(&self.dir)?;
        self.storage
            .write(&join(&self.dir, &format!("{id}.md")), markdown.as_bytes())?;
        Ok(id)
    }
}

/// Copy a session's artifacts directory for a fork. A missing source is fine; any other
/// failure is returned as a warning, never as an error (the fork still completes).
pub fn copy_for_fork(storage: &dyn Storage, from_dir: &str, to_dir: &str) -> Option<String> {
    match storage.stat(from_dir) {
        Err(e) if e.is_not_found() => return None,
        Err(e) => return Some(format!("could not copy artifacts from {from_dir}: {e}")),
        Ok(_) => {}
    }
    match storage.copy_dir(from_dir, to_dir) {
        Ok(()) => None,
        Err(StorageError::NotFound(_)) => None,
        Err(e) => Some(format!(
            "could not copy artifacts from {from_dir} to {to_dir}: {e}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemoryStorage;

    #[test]
    fn ids_start_at_zero_and_continue_after_existing_files() {
        let s = MemoryStorage::new();
        let mut m = ArtifactManager::for_session(&s, "/p/2026_abc.jsonl");
        assert_eq!(m.dir(), "/p/2026_abc");
        assert!(
            m.list_files().unwrap().is_empty(),
            "missing dir lists empty"
        );
        assert!(!s.exists("/p/2026_abc"), "not created before use");
        assert_eq!(m.save("out", "bash").unwrap(), "0");
        assert_eq!(m.save("out", "python").unwrap(), "1");
        s.write("/p/2026_abc/7.bash.log", b"x").unwrap();
        let mut resumed = ArtifactManager::for_session(&s, "/p/2026_abc.jsonl");
        assert_eq!(resumed.save("more", "bash").unwrap(), "8");
        assert_eq!(
            resumed.get_path("1").unwrap().as_deref(),
            Some("/p/2026_abc/1.python.log")
        );
        assert!(resumed.exists("7"));
        assert!(!resumed.exists("../7"));
    }

    #[test]
    fn tool_types_cannot_escape_the_directory() {
        let s = MemoryStorage::new();
        let mut m = ArtifactManager::new(&s, "/a");
        let (_, path) = m.allocate_path("../../etc/passwd").unwrap();
        assert_eq!(path, "/a/0.______etc_passwd.log");
    }

    #[test]
    fn agent_output_ids_nest_and_continue() {
        let s = MemoryStorage::new();
        let mut top = AgentOutputManager::new(&s, "/a", None);
        assert_eq!(top.save("Parent", "# p").unwrap(), "0-Parent");
        assert_eq!(top.save("Other", "# o").unwrap(), "1-Other");
        let mut child = AgentOutputManager::new(&s, "/a", Some("0-Parent"));
        assert_eq!(child.save("Child", "# c").unwrap(), "0-Parent.0-Child");
        assert_eq!(child.save("Child", "# c").unwrap(), "0-Parent.1-Child");
        let mut resumed_child = AgentOutputManager::new(&s, "/a", Some("0-Parent"));
        assert_eq!(resumed_child.allocate("X").unwrap(), "0-Parent.2-X");
        let mut resumed_top = AgentOutputManager::new(&s, "/a", None);
        assert_eq!(resumed_top.allocate("Y").unwrap(), "2-Y");
    }
}
