//! The merge of another machine's entries into a session file, as a plan: pure, no I/O.
//!
//! The union of two copies of a session is a session: entries are immutable and keyed by
//! id, so entries this file lacks are added and none is changed. What the plan decides is
//! where they go:
//! - **every parent before its children** (the agent reads a file in order); an entry whose
//!   parent is in neither side is held back until its parent arrives;
//! - **the leaf stays where the user left it.** The agent resumes a file at its last
//!   entry. When the other machine continued this leaf, the file follows it (the new entries
//!   are appended, the newest of them last). When it continued from elsewhere, the new
//!   entries go before this file's leaf: the file is rewritten with its last entry moved to
//!   the end, and the other machine's leaves are reported as branches to switch to;
//! - **the latest label wins**: the agent keeps the last `label` entry of a target in file
//!   order, so labels of one target are placed by timestamp. A label older than one already
//!   in the file goes before it (a rewrite). pi's session names (`session_info` entries:
//!   the latest names the session) are ordered the same way.
//!
//! Otherwise the file keeps its order and the new entries follow in the order they came.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// A line of a session file or of a segment, as the merge sees it. A line that is no entry
/// (a second header line, say) has no id: it keeps its place and nothing depends on it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node<'a> {
    pub id: Option<&'a str>,
    pub parent: Option<&'a str>,
    pub timestamp: &'a str,
    /// The entry's target when it is a `label` entry.
    pub label_target: Option<&'a str>,
}

/// Where a line of the merged file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum From {
    Local(usize),
    Remote(usize),
}

/// What to do with the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Write {
    /// Nothing to add.
    Nothing,
    /// Append these remote lines, in this order.
    Append(Vec<usize>),
    /// Rewrite the lines after the header in this order (every local line is in it).
    Rewrite(Vec<From>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub write: Write,
    /// Remote lines held back: their parent is in neither side yet.
    pub held: Vec<usize>,
    /// The file's leaf after the merge.
    pub leaf: Option<String>,
    /// Leaves of the added entries that are not on the leaf's path: the other machine's
    /// branches, to switch to.
    pub branches: Vec<String>,
}

/// The plan for adding `remote` (lines the file lacks, deduplicated) to a file of `local`.
pub(crate) fn plan(local: &[Node], remote: &[Node]) -> Plan {
    let local_ids: HashMap<&str, usize> = local
        .iter()
        .enumerate()
        .filter_map(|(i, n)| Some((n.id?, i)))
        .collect();
    let remote_ids: HashMap<&str, usize> = remote
        .iter()
        .enumerate()
        .filter_map(|(i, n)| Some((n.id?, i)))
        .collect();
    let old_leaf = local.iter().rev().find_map(|n| n.id);

    // Which remote lines can go in (their parent is here or can go in), and which
    // continue the file's leaf.
    let accepted = reachable(remote, |p| local_ids.contains_key(p), &remote_ids);
    let follows = descends(remote, old_leaf, &remote_ids, &accepted);
    let held: Vec<usize> = (0..remote.len()).filter(|&i| !accepted[i]).collect();
    let added: Vec<usize> = (0..remote.len()).filter(|&i| accepted[i]).collect();
    if added.is_empty() {
        return Plan {
            write: Write::Nothing,
            held,
            leaf: old_leaf.map(str::to_string),
            branches: vec![],
        };
    }
    let mut has_child = vec![false; remote.len()];
    for &i in &added {
        if let Some(&p) = remote[i].parent.and_then(|p| remote_ids.get(p)) {
            has_child[p] = true;
        }
    }
    let tips: Vec<usize> = added
        .iter()
        .copied()
        .filter(|&i| !has_child[i] && remote[i].id.is_some())
        .collect();
    // Follow the other machine when it continued this leaf (its newest such leaf);
    // else the file's own leaf stays the last line.
    let followed = match old_leaf {
        // A file with no entry yet follows the newest leaf that came.
        None => tips.last().copied(),
        Some(_) => tips.iter().rev().copied().find(|&i| follows[i]),
    };
    let keep_old = followed.is_none() && old_leaf.is_some();

    let latest_local_label = latest_labels(local);
    let label_conflict = added.iter().any(|&i| match remote[i].label_target {
        Some(t) => latest_local_label
            .get(t)
            .is_some_and(|&ts| ts > remote[i].timestamp),
        None => false,
    });

    let leaf_id = match followed {
        Some(i) => remote[i].id,
        None => old_leaf,
    };
    // A file with no entry yet is a copy: its branches are the session's, not news.
    let branches = tips
        .iter()
        .filter(|_| old_leaf.is_some())
        .filter(|&&i| Some(i) != followed)
        .filter_map(|&i| remote[i].id)
        .map(str::to_string)
        .collect();
    let write = if keep_old || label_conflict {
        Write::Rewrite(order_all(local, remote, &added, leaf_id))
    } else {
        let nodes: Vec<(From, Node)> = added
            .iter()
            .map(|&i| (From::Remote(i), remote[i]))
            .collect();
        let order = topo(&nodes, leaf_id);
        // `nodes[k]` is `added[k]`'s line.
        Write::Append(order.into_iter().map(|k| added[k]).collect())
    };
    let leaf = last_entry(&write, local, remote)
        .or(old_leaf)
        .map(str::to_string);
    Plan {
        write,
        held,
        leaf,
        branches,
    }
}

/// The id of the last entry the file will have.
fn last_entry<'a>(write: &Write, local: &[Node<'a>], remote: &[Node<'a>]) -> Option<&'a str> {
    match write {
        Write::Nothing => None,
        Write::Append(order) => order.iter().rev().find_map(|&i| remote[i].id),
        Write::Rewrite(order) => order.iter().rev().find_map(|f| match *f {
            From::Local(i) => local[i].id,
            From::Remote(i) => remote[i].id,
        }),
    }
}

/// Each remote line: can it go in? (its parent chain reaches the file or a root)
fn reachable(
    remote: &[Node],
    in_local: impl Fn(&str) -> bool,
    remote_ids: &HashMap<&str, usize>,
) -> Vec<bool> {
    // 0 unknown, 1 visiting, 2 yes, 3 no
    let mut state = vec![0u8; remote.len()];
    for start in 0..remote.len() {
        let mut chain = vec![];
        let mut i = start;
        let verdict = loop {
            match state[i] {
                2 => break true,
                3 | 1 => break false, // a cycle of parents never goes in
                _ => {}
            }
            state[i] = 1;
            chain.push(i);
            match remote[i].parent {
                None => break true,
                Some(p) if in_local(p) => break true,
                Some(p) => match remote_ids.get(p) {
                    Some(&q) => i = q,
                    None => break false,
                },
            }
        };
        for c in chain {
            state[c] = if verdict { 2 } else { 3 };
        }
    }
    state.iter().map(|&s| s == 2).collect()
}

/// Each accepted remote line: does it descend from `leaf`?
fn descends(
    remote: &[Node],
    leaf: Option<&str>,
    remote_ids: &HashMap<&str, usize>,
    accepted: &[bool],
) -> Vec<bool> {
    let mut memo: Vec<Option<bool>> = vec![None; remote.len()];
    for start in 0..remote.len() {
        if !accepted[start] {
            memo[start] = Some(false);
            continue;
        }
        let mut chain = vec![];
        let mut i = start;
        let verdict = loop {
            if let Some(v) = memo[i] {
                break v;
            }
            chain.push(i);
            match remote[i].parent {
                Some(p) if Some(p) == leaf => break true,
                Some(p) => match remote_ids.get(p) {
                    Some(&q) if accepted[q] && !chain.contains(&q) => i = q,
                    _ => break false,
                },
                None => break false,
            }
        };
        for c in chain {
            memo[c] = Some(verdict);
        }
    }
    memo.into_iter().map(|v| v.unwrap_or(false)).collect()
}

/// The newest timestamp of a label per target among `local`.
fn latest_labels<'a>(local: &[Node<'a>]) -> HashMap<&'a str, &'a str> {
    let mut latest: HashMap<&str, &str> = HashMap::new();
    for n in local {
        if let Some(t) = n.label_target {
            let e = latest.entry(t).or_insert(n.timestamp);
            if n.timestamp > *e {
                *e = n.timestamp;
            }
        }
    }
    latest
}

/// Every local line and the added remote ones, in the rewrite's order.
fn order_all<'a>(
    local: &[Node<'a>],
    remote: &[Node<'a>],
    added: &[usize],
    leaf: Option<&str>,
) -> Vec<From> {
    let mut nodes: Vec<(From, Node<'a>)> = local
        .iter()
        .enumerate()
        .map(|(i, n)| (From::Local(i), *n))
        .collect();
    nodes.extend(added.iter().map(|&i| (From::Remote(i), remote[i])));
    topo(&nodes, leaf).into_iter().map(|k| nodes[k].0).collect()
}

/// `nodes` ordered with every parent before its children and the labels of a target by
/// timestamp, otherwise as given, with `leaf` last where nothing has to follow it.
/// Returns indices into `nodes`.
fn topo(nodes: &[(From, Node)], leaf: Option<&str>) -> Vec<usize> {
    let n = nodes.len();
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .filter_map(|(k, (_, x))| Some((x.id?, k)))
        .collect();
    let mut after: Vec<Vec<usize>> = vec![vec![]; n];
    let mut parent_wait = vec![0u32; n];
    let mut label_wait = vec![0u32; n];
    for (k, (_, x)) in nodes.iter().enumerate() {
        if let Some(&p) = x.parent.and_then(|p| index.get(p)) {
            after[p].push(k);
            parent_wait[k] += 1;
        }
    }
    // Labels of one target in timestamp order (ties: as given).
    let mut by_target: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, (_, x)) in nodes.iter().enumerate() {
        if let Some(t) = x.label_target {
            by_target.entry(t).or_default().push(k);
        }
    }
    let mut label_after: Vec<Vec<usize>> = vec![vec![]; n];
    for ks in by_target.values_mut() {
        ks.sort_by(|&a, &b| {
            nodes[a]
                .1
                .timestamp
                .cmp(nodes[b].1.timestamp)
                .then(a.cmp(&b))
        });
        for w in ks.windows(2) {
            label_after[w[0]].push(w[1]);
            label_wait[w[1]] += 1;
        }
    }
    let leaf_k = leaf.and_then(|l| index.get(l).copied());
    let prio = |k: usize| if Some(k) == leaf_k { usize::MAX } else { k };
    let mut ready: BinaryHeap<Reverse<(usize, usize)>> = BinaryHeap::new();
    for k in 0..n {
        if parent_wait[k] == 0 && label_wait[k] == 0 {
            ready.push(Reverse((prio(k), k)));
        }
    }
    let mut done = vec![false; n];
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let k = match ready.pop() {
            Some(Reverse((_, k))) => k,
            // Only label order is left to wait on (clocks that disagree with the tree):
            // the parents win; the first line whose parents are all placed goes next.
            None => match (0..n).find(|&k| !done[k] && parent_wait[k] == 0) {
                Some(k) => {
                    label_wait[k] = 0;
                    k
                }
                None => break, // a cycle of parents: the caller never passes one
            },
        };
        if done[k] {
            continue;
        }
        done[k] = true;
        out.push(k);
        for &c in &after[k] {
            parent_wait[c] -= 1;
            if parent_wait[c] == 0 && label_wait[c] == 0 && !done[c] {
                ready.push(Reverse((prio(c), c)));
            }
        }
        for &c in &label_after[k] {
            label_wait[c] = label_wait[c].saturating_sub(1);
            if parent_wait[c] == 0 && label_wait[c] == 0 && !done[c] {
                ready.push(Reverse((prio(c), c)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e<'a>(id: &'a str, parent: Option<&'a str>, ts: &'a str) -> Node<'a> {
        Node {
            id: Some(id),
            parent,
            timestamp: ts,
            label_target: None,
        }
    }
    fn label<'a>(id: &'a str, parent: &'a str, ts: &'a str, target: &'a str) -> Node<'a> {
        Node {
            id: Some(id),
            parent: Some(parent),
            timestamp: ts,
            label_target: Some(target),
        }
    }

    #[test]
    fn entries_that_continue_the_leaf_are_appended_and_become_the_leaf() {
        let local = [e("a", None, "1"), e("b", Some("a"), "2")];
        let remote = [e("c", Some("b"), "3"), e("d", Some("c"), "4")];
        let p = plan(&local, &remote);
        assert_eq!(p.write, Write::Append(vec![0, 1]));
        assert_eq!(p.leaf.as_deref(), Some("d"));
        assert!(p.branches.is_empty());
    }

    #[test]
    fn a_file_with_no_entry_takes_the_newest_leaf_and_reports_no_branch() {
        let remote = [e("a", None, "1"), e("b", Some("a"), "2")];
        let p = plan(&[], &remote);
        assert_eq!(p.leaf.as_deref(), Some("b"));
        assert!(p.branches.is_empty());
    }

    #[test]
    fn a_branch_from_elsewhere_goes_before_the_leaf_which_stays() {
        let local = [e("a", None, "1"), e("b", Some("a"), "2")];
        let remote = [e("x", Some("a"), "3")];
        let p = plan(&local, &remote);
        assert_eq!(
            p.write,
            Write::Rewrite(vec![From::Local(0), From::Remote(0), From::Local(1)])
        );
        assert_eq!(p.leaf.as_deref(), Some("b"));
        assert_eq!(p.branches, vec!["x".to_string()]);
    }

    #[test]
    fn parents_come_first_whatever_order_the_segments_came_in() {
        let local = [e("a", None, "1")];
        let remote = [e("c", Some("b"), "3"), e("b", Some("a"), "2")];
        let p = plan(&local, &remote);
        assert_eq!(p.write, Write::Append(vec![1, 0]));
    }

    #[test]
    fn an_entry_whose_parent_is_nowhere_is_held_back_with_its_children() {
        let local = [e("a", None, "1")];
        let remote = [
            e("y", Some("missing"), "2"),
            e("z", Some("y"), "3"),
            e("b", Some("a"), "4"),
        ];
        let p = plan(&local, &remote);
        assert_eq!(p.held, vec![0, 1]);
        assert_eq!(p.write, Write::Append(vec![2]));
    }

    #[test]
    fn the_latest_label_wins_even_when_it_arrives_first() {
        // The file's label of "a" is newer than the other machine's: the older one goes
        // before it, so the newer stays the last of "a" in file order.
        let local = [e("a", None, "1"), label("l2", "a", "5", "a")];
        let remote = [label("l1", "a", "3", "a")];
        let p = plan(&local, &remote);
        let Write::Rewrite(order) = &p.write else {
            panic!("{:?}", p.write)
        };
        let pos = |f: From| order.iter().position(|&x| x == f).unwrap();
        assert!(pos(From::Remote(0)) < pos(From::Local(1)));
    }

    #[test]
    fn a_newer_label_from_the_other_machine_is_appended() {
        let local = [e("a", None, "1"), label("l1", "a", "3", "a")];
        let remote = [label("l2", "l1", "5", "a")];
        assert_eq!(plan(&local, &remote).write, Write::Append(vec![0]));
    }
}
