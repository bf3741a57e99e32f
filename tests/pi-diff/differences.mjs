// What the pi differential test compares (tests/node/pi-diff.test.mjs), as each side
// shows it, and the disagreements it accepts, each with its reason.

/** Pi's view of an opened session: the fields compared, `leaves` the leaves whose contexts are. */
export function pis(pi, manager, leaves) {
  const entries = manager.getEntries();
  const contexts = leaves.map((l) => pi.buildSessionContext(entries, l));
  return {
    entries,
    leaf: manager.getLeafId(),
    tree: manager.getTree().map(shape),
    messages: contexts.map((c) => c.messages),
    thinkingLevel: contexts.map((c) => c.thinkingLevel),
    model: contexts.map((c) => c.model),
    name: manager.getSessionName() ?? null,
  };
}

/** This package's view of the same file (a `Session`). */
export function ours(session, leaves) {
  const contexts = leaves.map((l) => session.context(l));
  return {
    entries: session.entries(),
    leaf: session.branchPath().at(-1)?.id ?? null,
    tree: session.tree().map(shape),
    messages: contexts.map((c) => c.messages),
    thinkingLevel: contexts.map((c) => c.thinkingLevel),
    model: contexts.map((c) => c.models),
    name: session.sessionName() ?? null,
  };
}

/** A listing as both sides give it (pi's `SessionInfo`s or `listSessions`'), by path;
 * its fields are compared one by one as `listing.<field>`. */
export function listView(infos) {
  return infos
    .map((i) => ({
      path: i.path,
      id: i.id,
      cwd: i.cwd,
      name: i.name ?? i.title ?? null,
      parentSessionPath: i.parentSessionPath ?? null,
      created: new Date(i.created).toISOString(),
      modified: new Date(i.modified).toISOString(),
      messageCount: i.messageCount,
      firstMessage: i.firstMessage,
      allMessagesText: i.allMessagesText,
    }))
    .sort((x, y) => (x.path < y.path ? -1 : 1));
}

/** A tree node as both sides can show it: id, label, children. */
function shape(node) {
  return { id: node.entry.id, label: node.label ?? null, children: node.children.map(shape) };
}

/**
 * The accepted disagreements of this package's `Session` (xcsh's rules): `field`,
 * `matches(pi, ours)`, and why. `xcsh` entries are where xcsh differs from pi by design.
 * Read through `xcsh-session/pi` (the pi flavour, issue 37) none is accepted: its context
 * has pi's `model` and its listing pi's `modified`.
 */
export const KNOWN = [
  {
    key: 'model: xcsh keeps models by role',
    kind: 'xcsh',
    field: 'model',
    // xcsh's context has `models` (role → "provider/model", from xcsh's model_change
    // entries, which name `model`); pi's has one `model` ({ provider, modelId }, from the
    // last model_change or assistant message on the path).
    matches: (pi, ours) => pi.length === ours.length,
  },
  {
    key: 'listing.modified: xcsh lists the file\'s mtime',
    kind: 'xcsh',
    field: 'listing.modified',
    // pi's `modified` is the latest user or assistant message's timestamp (else the
    // header's, else the file's mtime); xcsh's is the file's mtime.
    matches: (pi, ours) => typeof pi === 'string' && typeof ours === 'string',
  },
];

/**
 * The accepted disagreements of the write differential test (pi-write-diff.test.mjs):
 * `field(name)` says which compared fields it covers, `matches(pi, ours, session)` (the
 * session the field is of: `piDangling`, `oursDangling`), and why.
 */
export const WRITE_KNOWN = [
  {
    key: 'createBranchedSession: ours re-parents across a dropped label',
    // pi's createBranchedSession drops the label entries of the path but keeps the
    // parentId of the entry after one: it points at an entry that is not in the new
    // session, which pi then shows as a second root (the history before it is lost from
    // the context). Ours points it at the label's parent (xcsh's rule, src/session/
    // copy.rs). Every field of such a session may differ; only of one where pi's has a
    // dangling parent and ours has none.
    field: () => true,
    matches: (pi, ours, session) => session.piDangling && !session.oursDangling,
  },
];

/** Does a session's entries have one whose parent is not among them? */
export function dangling(entries = []) {
  const ids = new Set(entries.map((e) => e.id));
  return entries.some((e) => e.parentId !== null && !ids.has(e.parentId));
}
