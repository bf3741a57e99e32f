// The differences between the agent's traces and the drop-in's that the agent differential
// test (tests/node/agent-diff.test.mjs) accepts, each with its reason. Everything else fails.
//
// One table, KNOWN: (a) `kind: 'agent'`: where the published agent the test runs in CI
// (oh-my-pi 18.2.3) differs from xcsh, whose code decides (checked against
// packages/coding-agent/src/session/session-manager.ts of xcsh); (b) `kind: 'dropin'`:
// deliberate differences of the drop-in, each one of the list in crates/js/README.md
// ("Where `xcsh-session/agent` differs from the agent, on purpose"). PENDING stays empty: a
// divergence nobody has decided on fails.
//
// An entry either rewrites one side's normalized trace before the comparison (`agent` or
// `dropin`: a function of the script's trace `{ seed, trace, files }` that edits it in
// place and calls `hit()` for each change), for systematic shape differences, or
// explains a first divergence (`match(d, ctx)`, d = { seed, i, op, path, agent, dropin },
// ctx = { script, agent, dropin }: the script and both traces after the rewrites):
// the script is then reported under that entry and not compared further. The test prints
// how often each entry applied.

import { renumber } from './compare.mjs';

/** Each op's state (the manager's state after the op). */
function* states(t) {
  for (const step of t.trace) if (step.state) yield step.state;
}
const isObject = (v) => v && typeof v === 'object' && !Array.isArray(v);

/** The state before op `i` of trace `t` (undefined when there was no manager). */
function prevState(t, i) {
  for (let k = i - 1; k >= 0; k--) if (t.trace[k]?.state) return t.trace[k].state;
  return undefined;
}

/** The files createBranchedSession made in trace `t` (its return values). */
function branchedFiles(t) {
  return new Set(t.trace.filter((s) => s.op === 'createBranchedSession' && typeof s.ret === 'string').map((s) => s.ret));
}

/** The title and titleSource of every session file's header line left out. */
function dropHeaderTitle(t, hit) {
  editFiles(t, (lines) => {
    if (!lines[0]?.startsWith('{"type":"session"') && !lines[1]?.startsWith('{"type":"session"')) return null;
    const k = lines[0].startsWith('{"type":"session"') ? 0 : 1;
    const header = JSON.parse(lines[k]);
    if (!('title' in header) && !('titleSource' in header)) return null;
    delete header.title;
    delete header.titleSource;
    hit();
    return [...lines.slice(0, k), JSON.stringify(header), ...lines.slice(k + 1)];
  });
}

/** Every text file's lines, edited by `fn(lines, file)` (which returns the new lines). */
function editFiles(t, fn) {
  for (const f of t.files) {
    if (typeof f.text !== 'string') continue;
    const lines = f.text.split('\n');
    const next = fn(lines, f);
    if (next) f.text = next.join('\n');
  }
}

/** The files whose path `gone(path)` names left out of trace `t` (`hit()` if any was). */
function dropFiles(t, hit, gone) {
  const n = t.files.length;
  t.files = t.files.filter((f) => !gone(f.path));
  if (t.files.length !== n) hit();
}

export const KNOWN = [
  {
    id: 'error-text',
    kind: 'dropin',
    reason: 'Errors are the core\'s, worded differently (its `kind` and message): that an op throws is compared, not its message.',
    agent: (t, hit) => { for (const s of t.trace) if (s.error !== undefined) { delete s.error; hit(); } },
    dropin: (t, hit) => { for (const s of t.trace) if (s.error !== undefined) { delete s.error; hit(); } },
  },
  {
    id: 'no-mcp-selection',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: xcsh\'s SessionContext has selectedMCPToolNames and hasPersistedMCPToolSelection (xcsh has appendMCPToolSelection); oh-my-pi 18.2.3 has neither.',
    dropin: (t, hit) => {
      for (const s of states(t)) {
        if (isObject(s.context) && 'selectedMCPToolNames' in s.context) {
          delete s.context.selectedMCPToolNames;
          delete s.context.hasPersistedMCPToolSelection;
          hit();
        }
      }
    },
  },
  {
    id: 'usage-fields',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: xcsh\'s getUsageStatistics() is { input, output, cacheRead, cacheWrite, premiumRequests, cost }; oh-my-pi 18.2.3 adds totalTokens and orchestration* counters.',
    agent: (t, hit) => {
      for (const s of states(t)) {
        if (!isObject(s.usage)) continue;
        for (const k of ['totalTokens', 'orchestrationInput', 'orchestrationOutput', 'orchestrationCacheRead']) {
          if (k in s.usage) { delete s.usage[k]; hit(); }
        }
      }
    },
  },
  {
    id: 'thinking-configured',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its thinking_level_change entries carry `configured` (null when not given); xcsh\'s appendThinkingLevelChange(thinkingLevel) writes { type, id, parentId, timestamp, thinkingLevel }.',
    agent: (t, hit) => dropField(t, 'thinking_level_change', 'configured', null, hit),
  },
  {
    id: 'model-fallback-flag',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its model_change entries carry `resolvedModelIsFallback` (false by default); xcsh\'s appendModelChange(model, role) has no such field.',
    agent: (t, hit) => dropField(t, 'model_change', 'resolvedModelIsFallback', false, hit),
  },
  {
    id: 'custom-session-files',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: it records each session file outside the default session dir in <agentDir>/custom-session-files/ (for its gc); xcsh has no such record.',
    agent: (t, hit) => dropFiles(t, hit, (p) => p.startsWith('<root>/custom-session-files/')),
  },
  {
    id: 'title-slot',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: it keeps the title in a padded first line {"type":"title",...} (after fork/forkFrom/createBranchedSession/a move, in the header line as well) and records each rename as a title_change entry (which becomes the leaf); xcsh keeps title and titleSource in the header line only (session-manager.ts fork(), forkFrom()) and adds no entry. Compared: the name, titleSource and in-memory header of both; not compared: where the title sits in the file (the header line\'s title is left out on both sides).',
    agent: (t, hit) => { dropTitleChanges(t, hit); dropHeaderTitle(t, hit); },
    dropin: (t, hit) => dropHeaderTitle(t, hit),
  },
  {
    id: 'header-extras',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its headers carry providerPromptCacheKey (forks) and previousSessionFiles (moves); xcsh\'s SessionHeader has neither.',
    agent: (t, hit) => {
      const strip = (h) => {
        if (!isObject(h)) return;
        for (const k of ['providerPromptCacheKey', 'previousSessionFiles']) if (k in h) { delete h[k]; hit(); }
      };
      for (const s of states(t)) strip(s.header);
      editFiles(t, (lines) => {
        if (!lines[0]?.startsWith('{"type":"session"')) return null;
        const header = JSON.parse(lines[0]);
        const before = JSON.stringify(header);
        strip(header);
        return JSON.stringify(header) === before ? null : [JSON.stringify(header), ...lines.slice(1)];
      });
    },
  },
  {
    id: 'context-configured-thinking',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its SessionContext has configuredThinkingLevel (and modeData/cacheMissExplainedAt when undefined); xcsh\'s has not configuredThinkingLevel.',
    agent: (t, hit) => {
      for (const s of states(t)) if (isObject(s.context) && 'configuredThinkingLevel' in s.context) { delete s.context.configuredThinkingLevel; hit(); }
    },
  },
  {
    id: 'context-replay-filters',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its buildSessionContext() strips tool calls without a result on the path (clearing the thinking signatures of such a turn, dropping a turn left empty) and drops aborted/error assistant turns with their tool results; xcsh\'s returns the path\'s messages as stored. The drop-in\'s context is filtered the same way (my own code of the rule as documented there) before the comparison.',
    dropin: (t, hit) => {
      for (const s of states(t)) {
        if (!isObject(s.context) || !Array.isArray(s.context.messages)) continue;
        const next = replayFiltered(s.context.messages);
        if (JSON.stringify(next) !== JSON.stringify(s.context.messages)) { s.context.messages = next; hit(); }
      }
    },
  },
  {
    id: 'default-model-inference',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its context infers models.default from an assistant message only while no model_change of role default is on the path; xcsh\'s buildSessionContext lets every assistant message on the path set models.default.',
    match: (d) => d.path === 'state.context.models.default',
  },
  {
    id: 'title-slot-cap',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its title line has a fixed size, so a long title read back from the file is cut; xcsh keeps the whole sanitized name in the header.',
    match: (d) => /^state\.(header\.title|name)$/.test(d.path) && typeof d.agent === 'string' && typeof d.dropin === 'string'
      && d.agent.length < d.dropin.length && d.dropin.startsWith(d.agent),
  },
  {
    id: 'history-db',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here (not a session file): oh-my-pi 18.2.3 touches <agentDir>/history.db* in the background while sessions are used; the session manager of xcsh writes no history.',
    agent: (t, hit) => dropFiles(t, hit, (p) => p.startsWith('<root>/history.db')),
  },
  {
    id: 'blob-referrers',
    kind: 'dropin',
    reason: 'The drop-in records which session files reference blobs (<agentDir>/blob-referrers.jsonl) so that its blob garbage collection can run; the agent has no such record.',
    dropin: (t, hit) => dropFiles(t, hit, (p) => p === '<root>/blob-referrers.jsonl'),
  },
  {
    id: 'blob-file-names',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its blob files are named <sha256>.<ext> (.png); xcsh\'s BlobStore stores them at <blobsDir>/<sha256> with no extension. The bytes are compared.',
    agent: (t, hit) => {
      for (const f of t.files) {
        const m = /^(<root>\/blobs\/[0-9a-f]{64})\.[a-z]+$/.exec(f.path);
        if (m) { f.path = m[1]; hit(); }
      }
      t.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    },
  },
  {
    id: 'file-without-reply',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: it writes a session file that holds no assistant message in some paths (newSession after open, close), with the blobs of its images; xcsh\'s _persist writes nothing before the first assistant message unless ensureOnDisk() or rewriteEntries() was called. Only files the drop-in did not write are left out (paths compared with their ids renumbered), and blobs only such files reference; their listing (list/listAll) is the entry session-info-unwritten.',
    agent: (t, hit, other) => {
      const theirs = new Set(renumber(other).files.map((f) => f.path));
      const mine = renumber(t).files.map((f) => f.path);
      const dropped = new Set();
      t.files = t.files.filter((f, k) => {
        const keep = theirs.has(mine[k]) || !f.path.endsWith('.jsonl') || typeof f.text !== 'string'
          || f.text.includes('"role":"assistant"') || !f.path.includes('/sessions');
        if (!keep) { dropped.add(f); hit(); }
        return keep;
      });
      if (!dropped.size) return;
      const refs = (files) => new Set(files.flatMap((f) => (typeof f.text === 'string' ? [...f.text.matchAll(/blob:sha256:([0-9a-f]{64})/g)].map((m) => m[1]) : [])));
      const onlyDropped = refs([...dropped]);
      for (const h of refs(t.files)) onlyDropped.delete(h);
      t.files = t.files.filter((f) => {
        const m = /^<root>\/blobs\/([0-9a-f]{64})$/.exec(f.path);
        if (m && onlyDropped.has(m[1]) && !theirs.has(f.path)) { hit(); return false; }
        return true;
      });
    },
  },
  {
    id: 'open-missing-file-id',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: opening a session file that does not exist (a session never written, reopened) keeps the id of its file name; xcsh\'s setSessionFile starts a new session (a new Snowflake id) at that path.',
    match: (d) => (d.op === 'reopen' || d.op === 'open') && d.path === 'state.sessionId',
  },
  {
    id: 'session-info-extras',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its SessionInfo (list/listAll) carries more (the file\'s `size`, a `status` such as "interrupted"/"pending"); xcsh\'s SessionInfo is { path, id, cwd, title, parentSessionPath, created, modified, messageCount, firstMessage, allMessagesText }.',
    agent: (t, hit) => {
      const keep = new Set(['path', 'id', 'cwd', 'title', 'parentSessionPath', 'created', 'modified', 'messageCount', 'firstMessage', 'allMessagesText']);
      for (const s of t.trace) {
        if (s.op !== 'list' || !Array.isArray(s.ret)) continue;
        for (const info of s.ret) {
          if (!isObject(info)) continue;
          for (const k of Object.keys(info)) if (!keep.has(k)) { delete info[k]; hit(); }
        }
      }
    },
  },
  {
    id: 'session-info-first-message',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its SessionInfo.firstMessage is the first message\'s text of any role (an assistant\'s too); xcsh\'s collectSessionsFromFiles takes the first user message\'s text, "(no messages)" without one.',
    match: (d) => d.op === 'list' && /^ret\[\d+\]\.firstMessage$/.test(d.path) && d.dropin === '(no messages)',
  },
  {
    id: 'writer-lock',
    kind: 'dropin',
    reason: 'One writer per file: the drop-in holds <session>.jsonl.lock while a manager writes (the agent has no lock).',
    dropin: (t, hit) => dropFiles(t, hit, (p) => p.endsWith('.jsonl.lock')),
  },
  {
    id: 'index-cache',
    kind: 'dropin',
    reason: 'SessionManager.open and continueRecent open lazily through the session index, which the drop-in keeps as a cache in <agentDir>/cache/index/ (never session data: deleting it changes nothing but speed); the agent has no index.',
    dropin: (t, hit) => dropFiles(t, hit, (p) => p.startsWith('<root>/cache/index/')),
  },
  {
    id: 'session-info-unwritten',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: list/listAll show the session files it wrote without a reply (see file-without-reply), which xcsh never writes, so they are not listed.',
    match: (d, { dropin }) => d.op === 'list' && /^ret\[\d+\]$/.test(d.path) && d.dropin === undefined
      && typeof d.agent?.path === 'string' && !dropin.files.some((f) => f.path === d.agent.path),
  },
  {
    id: 'session-info-last-text',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its SessionInfo.allMessagesText leaves out the text of a trailing assistant turn (a session it calls "interrupted"); xcsh\'s collectSessionsFromFiles joins the text of every user and assistant message.',
    match: (d) => d.op === 'list' && /^ret\[\d+\]\.allMessagesText$/.test(d.path)
      && typeof d.agent === 'string' && typeof d.dropin === 'string' && d.dropin.startsWith(d.agent),
  },
  {
    id: 'list-message-count',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its SessionInfo.messageCount counts fewer entries; xcsh\'s collectSessionsFromFiles counts every `message` entry of the file (every role, every branch).',
    match: (d) => d.op === 'list' && /^ret\[\d+\]\.messageCount$/.test(d.path) && d.dropin > d.agent,
  },
  {
    id: 'create-branched-session-title',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its createBranchedSession keeps the title; xcsh\'s new header has no title or titleSource (createBranchedSession: { type, version, id, timestamp, cwd, parentSession }), and the drop-in\'s name is then undefined (crates/js/README.md, createBranchedSession).',
    match: (d) => d.op === 'createBranchedSession' && /^state\.(header\.title|header\.titleSource|name|titleSource)$/.test(d.path)
      && d.agent !== undefined && d.dropin === undefined,
  },
  {
    id: 'move-to-same-cwd',
    kind: 'agent',
    reason: 'oh-my-pi differs from xcsh here: its moveTo moves a session to the default directory of the cwd even when the cwd is unchanged; xcsh\'s moveTo returns at once when path.resolve(newCwd) === this.cwd.',
    match: (d, { dropin }) => d.op === 'moveTo' && /^state\./.test(d.path)
      && dropin.trace[d.i]?.state?.cwd === prevState(dropin, d.i)?.cwd,
  },


  {
    id: 'fork-from-missing-source',
    kind: 'dropin',
    reason: 'forkFrom of a missing source rejects with notFound; the agent makes an empty fork (crates/js/README.md, Operations: forkFrom).',
    match: (d, { dropin }) => d.op === 'forkFrom' && dropin.trace[d.i]?.threw === true && /ENOENT|not found/i.test(String(dropin.trace[d.i]?.error ?? 'ENOENT')),
  },
  {
    id: 'continue-recent-explicit-dir',
    kind: 'dropin',
    reason: 'continueRecent(cwd, sessionDir) with an explicit directory takes that directory\'s newest session; the terminal\'s breadcrumb (read by xcsh first) is read only for the default directory (crates/js/README.md, Operations: continueRecent).',
    match: (d, { script }) => d.op === 'continueRecent' && script.ops[d.i]?.defaultDir === false,
  },
  {
    id: 'migration-backup-file',
    kind: 'dropin',
    reason: 'Opening a v1/v2 file, the drop-in keeps the original bytes aside as <file>.v1-<time> / .v2-<time> before the first rewrite; xcsh rewrites in place (crates/js/README.md, Safety: nothing is dropped on rewrite).',
    dropin: (t, hit) => dropFiles(t, hit, (p) => /\.jsonl\.v[12]-<fts>$/.test(p)),
  },
  {
    id: 'migration-ids-stable',
    kind: 'dropin',
    reason: 'crates/js/README.md, Operations: old (v1) files read again before they are rewritten keep their ids. A v1 file read again before it was rewritten gets the same ids in the drop-in (src/migration.rs: ids seeded by the header); xcsh\'s migrateV1ToV2 draws new random ids (generateId: crypto.randomUUID) at every load, so ids, leaf and tree differ.',
    match: (d, { script, dropin }) => ['open', 'reopen', 'continueRecent'].includes(d.op)
      && /\/old-\d+\.jsonl$/.test(dropin.trace[d.i]?.state?.file ?? '')
      && script.ops.slice(0, d.i).some((o) => o.op === 'openV1File'),
  },

  {
    id: 'create-branched-session-name',
    kind: 'dropin',
    reason: 'crates/js/README.md, Operations: createBranchedSession: getSessionName() afterwards is undefined, as the new header (which has no title) and a reopen say; the agent keeps returning the old name (and its source) in memory (xcsh session-manager.ts createBranchedSession leaves #sessionName and #titleSource as they were).',
    match: (d) => d.op === 'createBranchedSession' && /^state\.(name|titleSource)$/.test(d.path)
      && d.agent !== undefined && d.dropin === undefined,
  },
  {
    id: 'create-branched-session-unreplied-appends',
    kind: 'dropin',
    reason: 'crates/js/README.md, Operations: createBranchedSession: entries appended after a branch that has no reply yet go straight to its file; xcsh (createBranchedSession sets #flushed, then _persist waits for an assistant message) writes them at the first reply, so without one its file ends early.',
    match: (d, { dropin }) => d.op === 'files' && (d.agent === undefined || d.agent === '') && typeof d.dropin === 'string' && d.dropin !== ''
      && branchedFiles(dropin).has(d.path.replace(/ line \d+$/, '')),
  },
  {
    id: 'create-branched-session-blobs',
    kind: 'dropin',
    reason: 'crates/js/README.md, Operations: createBranchedSession. createBranchedSession writes its file by the agent\'s own rule for what is persisted (prepareEntryForPersistence: images past the threshold go to the blob store as blob:sha256 refs), as the README bullet says for partialJson; xcsh\'s createBranchedSession writes JSON.stringify(entry) (session-manager.ts createBranchedSession), so its file holds the image data inline and writes no blob.',
    match: (d, { dropin }) => d.op === 'files' && (
      (branchedFiles(dropin).has(d.path.replace(/ line \d+$/, '')) && typeof d.agent === 'string' && typeof d.dropin === 'string'
        && d.dropin.includes('"blob:sha256:') && d.agent.replace(/"data":"[^"]*"/g, '"data":_') === d.dropin.replace(/"data":"[^"]*"/g, '"data":_'))
      || (/^<root>\/blobs\/[0-9a-f]{64}$/.test(d.path) && d.agent === 'not written'
        && dropin.files.some((f) => branchedFiles(dropin).has(f.path) && f.text?.includes(`blob:sha256:${d.path.slice(-64)}`)))),
  },
  {
    id: 'set-session-file-failed',
    kind: 'dropin',
    reason: 'crates/js/README.md, Operations: a setSessionFile that fails leaves the manager as it was. A setSessionFile that throws (an in-memory manager: its storage has no such file) leaves the manager as it was; xcsh has already set #sessionFile to the new path when the read throws (session-manager.ts setSessionFile: path.resolve, then loadEntriesFromFile), so getSessionFile() names a file whose entries it does not hold.',
    match: (d, { agent, dropin }) => d.op === 'setSessionFile' && d.path === 'state.file'
      && agent.trace[d.i]?.threw === true && dropin.trace[d.i]?.threw === true && d.dropin === prevState(dropin, d.i)?.file,
  },
  {
    id: 'duplicate-ids-tree',
    kind: 'dropin',
    reason: 'crates/js/README.md, Operations: duplicate entry ids. In a file where two entries share an id (openDupIdFile) the drop-in\'s getTree() holds every entry once; xcsh\'s getTree (session-manager.ts, getTree) maps nodes by id, so the last entry of the id stands in the place of each.',
    match: (d, { script, dropin }) => /^state\.tree\b/.test(d.path) && script.ops.slice(0, d.i + 1).some((o) => o.op === 'openDupIdFile')
      && /\/old-\d+\.jsonl$/.test(dropin.trace[d.i]?.state?.file ?? ''),
  },
];

// Divergences nobody has decided on: none. A new one fails the test until it is fixed or
// listed in KNOWN with its reason.
export const PENDING = [];

/** oh-my-pi 18.2.3's two replay filters of context messages (see context-replay-filters). */
export function replayFiltered(input) {
  let messages = input.map((m) => m);
  const paired = new Set(messages.filter((m) => m.role === 'toolResult').map((m) => m.toolCallId));
  const dangling = (b) => b.type === 'toolCall' && !paired.has(b.id);
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'assistant' || !Array.isArray(m.content) || !m.content.some(dangling)) continue;
    const content = m.content
      .filter((b) => !dangling(b) && b.type !== 'redactedThinking')
      .map((b) => (b.type === 'thinking' && b.thinkingSignature ? (({ thinkingSignature, ...rest }) => rest)(b) : b));
    if (content.length === 0) messages.splice(i, 1);
    else messages[i] = { ...m, content };
  }
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'assistant' || (m.stopReason !== 'aborted' && m.stopReason !== 'error')) continue;
    const calls = new Set((Array.isArray(m.content) ? m.content : []).filter((b) => b.type === 'toolCall').map((b) => b.id));
    messages.splice(i, 1);
    if (calls.size) messages = messages.filter((r, j) => j < i || !(r.role === 'toolResult' && calls.has(r.toolCallId)));
  }
  return messages;
}

/** Drop `field` when it equals `value` from entries of `type`, in the state and the files. */
function dropField(t, type, field, value, hit) {
  for (const s of states(t)) {
    if (!Array.isArray(s.entries)) continue;
    for (const e of s.entries) if (e.type === type && e[field] === value) { delete e[field]; hit(); }
  }
  const text = `,"${field}":${JSON.stringify(value)}`;
  editFiles(t, (lines) => lines.map((l) => {
    if (!l.startsWith(`{"type":"${type}"`) || !l.includes(text)) return l;
    hit();
    return l.replace(text, '');
  }));
}

/** The agent's title line and title_change entries removed, their children re-parented. */
function dropTitleChanges(t, hit) {
  const parentOf = new Map(); // title_change id -> its parent
  for (const s of states(t)) {
    if (!Array.isArray(s.entries)) continue;
    for (const e of s.entries) if (e.type === 'title_change') parentOf.set(e.id, e.parentId);
  }
  editFiles(t, (lines) => {
    for (const l of lines) {
      if (l.startsWith('{"type":"title_change"')) { const e = JSON.parse(l); parentOf.set(e.id, e.parentId); }
    }
  });
  const up = (id) => { while (parentOf.has(id)) id = parentOf.get(id); return id; };
  for (const s of states(t)) {
    if (parentOf.has(s.leaf)) { s.leaf = up(s.leaf); hit(); }
    if (Array.isArray(s.entries)) {
      s.entries = s.entries.filter((e) => e.type !== 'title_change');
      for (const e of s.entries) if (parentOf.has(e.parentId)) { e.parentId = up(e.parentId); hit(); }
    }
    if (Array.isArray(s.tree)) {
      const splice = (nodes) => nodes.flatMap((n) => (parentOf.has(n.id) ? (hit(), splice(n.children)) : [{ ...n, children: splice(n.children) }]));
      s.tree = splice(s.tree);
    }
  }
  editFiles(t, (lines) => {
    let changed = false;
    const out = [];
    for (const l of lines) {
      if (l.startsWith('{"type":"title"') || l.startsWith('{"type":"title_change"')) { changed = true; continue; }
      const m = /"parentId":"(<id:\d+>)"/.exec(l);
      if (m && parentOf.has(m[1])) {
        const p = up(m[1]);
        out.push(l.replace(m[0], p === null ? '"parentId":null' : `"parentId":"${p}"`));
        changed = true;
        continue;
      }
      out.push(l);
    }
    if (changed) hit();
    return changed ? out : null;
  });
}
