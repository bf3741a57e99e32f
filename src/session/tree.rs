//! The entry tree and its leaf: labels, children, the path to a root, the whole tree (and
//! its JSON), and moving the leaf (`branch`, `reset_leaf`, `branch_with_summary`).

use super::append::json_arg;
use super::Session;
use crate::context;
use crate::entry::Entry;
use crate::error::{Result, SessionError};
use crate::json::{push_quoted, push_with_strings_cut, quote};
use crate::time::ms_from_iso;

impl Session {
    pub fn label(&self, id: &str) -> Option<&str> {
        self.assert_read();
        self.labels.get(id).map(String::as_str)
    }

    /// Entries whose parent is `id`, in insertion order.
    pub fn children(&self, id: &str) -> Vec<&Entry> {
        self.assert_read();
        self.entries
            .iter()
            .filter(|e| e.parent_id.as_deref() == Some(id))
            .collect()
    }

    /// The path root → `from` (default: the leaf; no leaf: empty).
    pub fn branch_path(&self, from: Option<&str>) -> Result<Vec<&Entry>> {
        let start = match from {
            Some(id) => Some(
                self.index_of(id)
                    .ok_or_else(|| SessionError::EntryNotFound(id.to_string()))?,
            ),
            None => self.leaf.as_deref().and_then(|id| self.index_of(id)),
        };
        Ok(match start {
            Some(i) => context::path_to_root(&self.entries, &self.by_id, i)
                .0
                .into_iter()
                .map(|i| &self.entries[i])
                .collect(),
            None => Vec::new(),
        })
    }

    /// The tree of all entries: roots are entries with a null, self or missing parent, in
    /// file order; children are ordered by timestamp.
    pub fn tree(&self) -> Tree {
        self.assert_read();
        let mut roots = Vec::new();
        let mut children = vec![Vec::new(); self.entries.len()];
        // Each entry's parent in the tree (`usize::MAX` for a root).
        let mut parent = vec![usize::MAX; self.entries.len()];
        for (i, e) in self.entries.iter().enumerate() {
            match e.parent_id.as_deref().and_then(|p| self.index_of(p)) {
                Some(p) if p != i && self.index_of(&e.id) == Some(i) => {
                    children[p].push(i);
                    parent[i] = p;
                }
                _ => roots.push(i),
            }
        }
        // Roots keep file order; children are sorted by timestamp (as the agent does).
        let key = |i: &usize| ms_from_iso(self.entries[*i].timestamp()).unwrap_or(i64::MAX);
        for c in children.iter_mut() {
            crate::sort::sort_by(c, |a, b| key(a).cmp(&key(b)));
        }
        // A cycle among non-root entries has no root: show it from its first entry.
        let mut reached = vec![false; self.entries.len()];
        let mut stack: Vec<usize> = roots.clone();
        while let Some(i) = stack.pop() {
            if !std::mem::replace(&mut reached[i], true) {
                stack.extend(&children[i]);
            }
        }
        for i in 0..self.entries.len() {
            if !reached[i] {
                roots.push(i);
                let mut stack = vec![i];
                while let Some(j) = stack.pop() {
                    if !std::mem::replace(&mut reached[j], true) {
                        stack.extend(&children[j]);
                    }
                }
                // Only its parent lists it (scanning every list made 2-cycles quadratic).
                children[parent[i]].retain(|&k| k != i);
            }
        }
        Tree { roots, children }
    }

    /// Move the leaf to an existing entry; nothing is written.
    pub fn branch(&mut self, id: &str) -> Result<()> {
        self.materialize()?;
        self.entry(id)?;
        self.leaf = Some(id.to_string());
        Ok(())
    }

    /// The next append starts a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    /// Move the leaf to `from` (`None`: before the first entry) and record a summary of the
    /// abandoned path there. Refused (fenced, file changed on disk, bad `details`), the
    /// leaf stays where it was.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: &str,
        details: Option<&str>,
        from_extension: Option<bool>,
    ) -> Result<String> {
        if let Some(id) = from {
            self.materialize()?;
            self.entry(id)?;
        }
        let mut fields = vec![
            ("fromId", quote(from.unwrap_or("root"))),
            ("summary", quote(summary)),
        ];
        if let Some(d) = details {
            fields.push(("details", json_arg("details", d)?));
        }
        if let Some(f) = from_extension {
            fields.push(("fromExtension", f.to_string()));
        }
        self.append_child(from, "branch_summary", &fields)
    }
}

/// The entry tree as indices into [`Session::entries`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub roots: Vec<usize>,
    pub children: Vec<Vec<usize>>,
}

/// One node of the tree without its payload, as [`Tree::nodes`] lists them: enough to
/// draw the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNode {
    /// The entry's position in [`Session::entries`] (file order).
    pub index: usize,
    pub id: String,
    /// The `parentId` as written (the tree shows the entry as a root when it names no
    /// entry, the entry itself, or closes a cycle).
    pub parent_id: Option<String>,
    /// The `type` as written (also for unknown types).
    pub entry_type: String,
    /// The `timestamp` as written (empty when absent).
    pub timestamp: String,
    pub label: Option<String>,
    /// 0 for a root.
    pub depth: usize,
    pub child_count: usize,
}

impl Tree {
    /// Every node in pre-order (the order of [`Tree::to_json`]: roots in file order,
    /// children by timestamp), each with its depth and number of children.
    pub fn nodes(&self, session: &Session) -> Vec<TreeNode> {
        let mut out = Vec::with_capacity(session.entries.len());
        let mut stack: Vec<(usize, usize)> = self.roots.iter().rev().map(|&i| (i, 0)).collect();
        while let Some((i, depth)) = stack.pop() {
            let e = &session.entries[i];
            let kids = &self.children[i];
            out.push(TreeNode {
                index: i,
                id: e.id.clone(),
                parent_id: e.parent_id.clone(),
                entry_type: e.type_name().to_string(),
                timestamp: e.timestamp().to_string(),
                label: session.label(&e.id).map(str::to_string),
                depth,
                child_count: kids.len(),
            });
            stack.extend(kids.iter().rev().map(|&k| (k, depth + 1)));
        }
        out
    }

    /// Nested JSON `[{entry, label?, children: [...]}, ...]`, written without recursion
    /// (a linear session is as deep as it is long).
    pub fn to_json(&self, session: &Session) -> String {
        self.json(session, None)
    }

    /// [`Tree::to_json`] with every string value in the entries longer than
    /// `max_string_chars` characters cut to its first `max_string_chars`: an outline of a
    /// huge session (previews, usage, tool names) at a fraction of its size.
    pub fn to_outline_json(&self, session: &Session, max_string_chars: usize) -> String {
        self.json(session, Some(max_string_chars))
    }

    fn json(&self, session: &Session, max_string_chars: Option<usize>) -> String {
        let mut out = String::from("[");
        // (node, next child position) frames.
        let mut stack: Vec<(usize, usize)> = Vec::new();
        let mut first = true;
        let mut pending = self.roots.iter().rev().copied().collect::<Vec<_>>();
        let open = |out: &mut String, i: usize, first: bool| {
            if !first {
                out.push(',');
            }
            let e = &session.entries[i];
            out.push_str("{\"entry\":");
            match max_string_chars {
                None => out.push_str(&session.entry_json(e)),
                Some(max) => push_with_strings_cut(out, &session.entry_json(e), max),
            }
            if let Some(l) = session.label(&e.id) {
                out.push_str(",\"label\":");
                push_quoted(out, l);
            }
            out.push_str(",\"children\":[");
        };
        while let Some(root) = pending.pop() {
            open(&mut out, root, first);
            first = false;
            stack.push((root, 0));
            while let Some((node, pos)) = stack.last_mut() {
                let kids = &self.children[*node];
                if *pos < kids.len() {
                    let child = kids[*pos];
                    let is_first = *pos == 0;
                    *pos += 1;
                    open(&mut out, child, is_first);
                    stack.push((child, 0));
                } else {
                    out.push_str("]}");
                    stack.pop();
                }
            }
        }
        out.push(']');
        out
    }
}
