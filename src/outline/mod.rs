//! The tree as outline rows, for viewers: one row per entry, depth first, in columns
//! (cheap to hand to JavaScript), each with its preview ([`describe`]) and what a branch's
//! totals need of it ([`Digests`]). At a fork the smaller branches come first, so a side
//! branch is listed right under its branch point and the longest line goes on below it.

mod digest;
mod js_text;
mod preview;
mod slim;

pub use digest::{Digests, ASSISTANT, MESSAGE, NOT_MESSAGE};
pub use preview::{describe, one_line, Preview, PREVIEW_CHARS};

use crate::session::Session;

/// [`Outline::flags`]: the entry has more than one child.
pub const FORK: u8 = 1;
/// [`Outline::flags`]: the entry starts a branch of a fork (its parent forks).
pub const BRANCH_START: u8 = 2;
/// [`Outline::flags`]: the entry is the last of its siblings.
pub const LAST: u8 = 4;

/// The outline rows of a session's tree, in columns: row `i` of each is entry `ids[i]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outline {
    pub ids: Vec<String>,
    /// The parent's row, -1 for a root.
    pub parent: Vec<i32>,
    /// The indentation: one more under each fork.
    pub depth: Vec<u16>,
    /// [`FORK`], [`BRANCH_START`], [`LAST`].
    pub flags: Vec<u8>,
    /// The number of children.
    pub kids: Vec<u32>,
    /// The row after the entry's subtree (collapsing a branch point skips to it).
    pub end: Vec<u32>,
    /// An index into [`Outline::kinds`].
    pub kind: Vec<u16>,
    /// `(tag, class)` of each kind of row.
    pub kinds: Vec<(String, &'static str)>,
    /// The preview of each row.
    pub texts: Vec<String>,
    /// `(row, label)` of each labelled entry.
    pub labels: Vec<(u32, String)>,
    pub digests: Digests,
}

/// `bit` when `on`.
fn flag(on: bool, bit: u8) -> u8 {
    if on {
        bit
    } else {
        0
    }
}

impl Outline {
    /// The outline of `session`, each entry read with its strings cut to `preview_chars`
    /// (UTF-16 units as in [`PREVIEW_CHARS`]; a preview reads no further).
    pub fn of(session: &Session, preview_chars: usize) -> Outline {
        let mut b = OutlineBuilder::new(session, preview_chars);
        b.step(session, usize::MAX);
        b.finish()
    }
}

/// An [`Outline`] made a piece at a time, so that a viewer can report progress and let
/// other work in between: [`OutlineBuilder::new`] lays the rows out (the tree's shape
/// only, without reading an entry), each [`OutlineBuilder::step`] describes the next rows
/// (their previews and totals inputs: the costly part), [`OutlineBuilder::finish`] hands
/// the outline out. The session must not change in between (a step of a changed session
/// describes nothing and says so).
pub struct OutlineBuilder {
    out: Outline,
    /// The entry of each row.
    entry_of: Vec<usize>,
    /// Rows described so far.
    done: usize,
    preview_chars: usize,
    /// The session's entry count when the rows were laid out.
    entries: usize,
    cut: String,
}

impl OutlineBuilder {
    /// The rows of `session`'s tree laid out, none described yet.
    pub fn new(session: &Session, preview_chars: usize) -> OutlineBuilder {
        let entries = session.entries();
        let tree = session.tree();
        // Subtree sizes, bottom-up over a pre-order (no recursion: a line nests deep).
        let mut order = Vec::with_capacity(entries.len());
        let mut stack: Vec<usize> = tree.roots.clone();
        while let Some(i) = stack.pop() {
            order.push(i);
            stack.extend(&tree.children[i]);
        }
        let mut size = vec![1u32; entries.len()];
        for &i in order.iter().rev() {
            size[i] += tree.children[i].iter().map(|&c| size[c]).sum::<u32>();
        }
        let mut out = Outline::default();
        let mut entry_of = Vec::with_capacity(entries.len());
        // (entry, depth, starts a branch, last sibling, parent row)
        let mut stack: Vec<(usize, u16, bool, bool, i32)> = Vec::new();
        let push_kids =
            |stack: &mut Vec<_>, list: &[usize], depth: u16, fork: bool, parent: i32| {
                let mut sorted = list.to_vec();
                sorted.sort_by_key(|&i| size[i]); // stable: equal sizes keep the tree's order
                let n = sorted.len();
                for (k, &i) in sorted.iter().enumerate().rev() {
                    stack.push((i, depth, fork, k + 1 == n, parent));
                }
            };
        push_kids(&mut stack, &tree.roots, 0, tree.roots.len() > 1, -1);
        while let Some((i, depth, branch_start, last, parent)) = stack.pop() {
            let e = &entries[i];
            let children = &tree.children[i];
            let fork = children.len() > 1;
            let row = out.ids.len();
            entry_of.push(i);
            out.ids.push(e.id.clone());
            out.parent.push(parent);
            out.depth.push(depth);
            out.flags
                .push(flag(fork, FORK) | flag(branch_start, BRANCH_START) | flag(last, LAST));
            out.kids.push(children.len() as u32);
            out.end.push(row as u32 + size[i]);
            if let Some(l) = session.label(&e.id) {
                out.labels.push((row as u32, l.to_string()));
            }
            push_kids(
                &mut stack,
                children,
                if fork { depth.saturating_add(1) } else { depth },
                fork,
                row as i32,
            );
        }
        OutlineBuilder {
            out,
            entry_of,
            done: 0,
            preview_chars,
            entries: entries.len(),
            cut: String::new(),
        }
    }

    /// How many rows the outline has.
    pub fn rows(&self) -> usize {
        self.entry_of.len()
    }

    /// How many rows are described.
    pub fn done(&self) -> usize {
        self.done
    }

    /// Describes up to `max_rows` more rows of `session` (the session the rows were laid
    /// out from, unchanged); true once every row is. A session with another number of
    /// entries now is not the one laid out: nothing is described, and it stays false.
    pub fn step(&mut self, session: &Session, max_rows: usize) -> bool {
        let entries = session.entries();
        if entries.len() != self.entries {
            return false;
        }
        let end = self.done.saturating_add(max_rows).min(self.rows());
        for row in self.done..end {
            // The entry as written: neither its blobs nor the replay data `entry_json` settles
            // change what a row shows, and settling them copies every assistant message.
            let value = slim::entry(
                entries[self.entry_of[row]].json(),
                self.preview_chars,
                &mut self.cut,
            );
            let Preview { tag, class, text } = describe(&value);
            let out = &mut self.out;
            // A few kinds (one per type and role): found by a look along the table.
            let kind = match out.kinds.iter().position(|(t, c)| *t == tag && *c == class) {
                Some(k) => k,
                None => {
                    out.kinds.push((tag, class));
                    out.kinds.len() - 1
                }
            };
            out.digests.push(&value);
            out.kind.push(u16::try_from(kind).unwrap_or(u16::MAX));
            out.texts.push(text);
        }
        self.done = end;
        self.done == self.rows()
    }

    /// The outline, its rows described up to [`OutlineBuilder::done`] (all of them once
    /// [`OutlineBuilder::step`] said so).
    pub fn finish(self) -> Outline {
        self.out
    }
}

#[cfg(test)]
mod tests;
