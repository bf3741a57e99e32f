//! A session's artifacts (`allocateArtifactPath`, `saveArtifact`, `getArtifactPath`): files
//! `<n>.<tool>.log` in the session's artifacts directory, numbered from one counter per
//! session file (a new session has its path before the file is written); a session
//! without a file (in memory) keeps saved artifacts in memory, as the agent does, so
//! spilling long output still gets an id.

use super::Session;
use crate::artifacts::ArtifactManager;
use crate::error::Result;

/// Where the next artifact number comes from, for the file it was counted for.
#[derive(Debug, Default)]
pub(super) struct ArtifactCounter {
    file: Option<String>,
    next: u64,
    /// Saved while the session had no file (ids are their positions).
    in_memory: Vec<String>,
}

impl Session {
    /// `allocateArtifactPath`: the next artifact's id and path (its directory created),
    /// `None` for a session without a file.
    pub fn allocate_artifact_path(&mut self, tool_type: &str) -> Result<Option<(String, String)>> {
        let Some(file) = self.file.clone() else {
            return Ok(None);
        };
        let storage = self.storage.clone();
        let mut manager = ArtifactManager::for_session(&*storage, &file);
        if self.artifacts.file.as_deref() == Some(file.as_str()) {
            manager.set_next_id(self.artifacts.next);
        }
        let (id, path) = manager.allocate_path(tool_type)?;
        self.artifacts.file = Some(file);
        self.artifacts.next = manager.next_id().unwrap_or(0);
        Ok(Some((id, path)))
    }

    /// `saveArtifact`: write `content` as the next artifact and return its id; without a
    /// file it is kept in memory (read back with [`Session::memory_artifact`]).
    pub fn save_artifact(&mut self, content: &str, tool_type: &str) -> Result<String> {
        match self.allocate_artifact_path(tool_type)? {
            Some((id, path)) => {
                self.storage.write(&path, content.as_bytes())?;
                Ok(id)
            }
            None => {
                self.artifacts.in_memory.push(content.to_string());
                Ok((self.artifacts.in_memory.len() - 1).to_string())
            }
        }
    }

    /// `getArtifactPath`: the file of artifact `id`, `None` when there is none (or the
    /// session has no file).
    pub fn artifact_path(&self, id: &str) -> Result<Option<String>> {
        let Some(file) = self.file.as_deref() else {
            return Ok(None);
        };
        Ok(ArtifactManager::for_session(&*self.storage, file).get_path(id)?)
    }

    /// An artifact saved while the session had no file.
    pub fn memory_artifact(&self, id: &str) -> Option<&str> {
        let i: usize = id.parse().ok()?;
        self.artifacts.in_memory.get(i).map(String::as_str)
    }
}
