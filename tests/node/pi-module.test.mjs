// pi's session manager as a spec: what pi's SessionManager does (its package ships no
// tests of it), each behaviour checked of pi's own module (the published
// @mariozechner/pi-coding-agent, the oracle) and of `xcsh-session/pi`, so that every
// statement here is true of pi and of the drop-in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import * as ours from '../../pkg/pi.mjs';

const TOOLS = process.env.XCSH_TOOLS_DIR || path.join(os.homedir(), '.cache', 'xcsh-session', 'tools');
const PI_FILE = path.join(TOOLS, 'pi', 'node_modules', '@mariozechner', 'pi-coding-agent', 'dist', 'core', 'session-manager.js');

const user = (text, timestamp = 1) => ({ role: 'user', content: text, timestamp });
const assistant = (text, timestamp = 2) => ({
  role: 'assistant', content: [{ type: 'text', text }], provider: 'anthropic', model: 'claude', timestamp,
});

/** Each behaviour, run against pi's module and ours, each in a fresh agent directory. */
function both(name, body) {
  for (const side of ['pi', 'xcsh-session/pi']) {
    test(`${name} (${side})`, async (t) => {
      assert.ok(fs.existsSync(PI_FILE), `pi's session manager is missing (${PI_FILE}): run scripts/setup test`);
      const mod = side === 'pi' ? await import(pathToFileURL(PI_FILE).href) : ours;
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-pi-module-'));
      const saved = process.env.PI_CODING_AGENT_DIR;
      process.env.PI_CODING_AGENT_DIR = path.join(root, 'agent');
      t.after(() => {
        if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
        else process.env.PI_CODING_AGENT_DIR = saved;
        fs.rmSync(root, { recursive: true, force: true });
      });
      await body(mod, root);
    });
  }
}

const jsonl = (file) => fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

both('nothing is written before the first assistant message, then the whole session', (mod, root) => {
  const m = mod.SessionManager.create('/w/p', path.join(root, 's'));
  m.appendMessage(user('q'));
  m.appendThinkingLevelChange('high');
  assert.equal(fs.existsSync(m.getSessionFile()), false);
  m.appendMessage(assistant('a'));
  assert.deepEqual(jsonl(m.getSessionFile()).map((e) => e.type), ['session', 'message', 'thinking_level_change', 'message']);
  m.appendCustomEntry('note', { n: 1 });
  assert.equal(jsonl(m.getSessionFile()).at(-1).type, 'custom');
});

both('a new session: version 3 header with a UUID v7 id, named <time>_<id>.jsonl in the cwd\'s --<cwd>-- folder', (mod, root) => {
  const m = mod.SessionManager.create('/w/my:proj');
  const header = m.getHeader();
  assert.equal(header.version, mod.CURRENT_SESSION_VERSION);
  assert.match(header.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(m.getSessionId(), header.id);
  assert.equal(header.cwd, '/w/my:proj');
  assert.equal(path.dirname(m.getSessionFile()), path.join(root, 'agent', 'sessions', '--w-my-proj--'));
  assert.equal(path.basename(m.getSessionFile()), `${header.timestamp.replace(/[:.]/g, '-')}_${header.id}.jsonl`);
  assert.ok(fs.statSync(m.getSessionDir()).isDirectory());
});

both('getDefaultSessionDir encodes / \\ and : as -, drops one leading separator, creates the folder', (mod, root) => {
  const agentDir = path.join(root, 'a');
  assert.equal(mod.getDefaultSessionDir('C:\\x\\y', agentDir), path.join(agentDir, 'sessions', '--C--x-y--'));
  assert.equal(mod.getDefaultSessionDir('/srv/app', agentDir), path.join(agentDir, 'sessions', '--srv-app--'));
  assert.ok(fs.existsSync(path.join(agentDir, 'sessions', '--srv-app--')));
});

both('entry ids are 8 hex characters; each append is a child of the leaf and becomes the leaf', (mod) => {
  const m = mod.SessionManager.inMemory('/w');
  const a = m.appendMessage(user('q'));
  const b = m.appendMessage(assistant('a'));
  assert.match(a, /^[0-9a-f]{8}$/);
  assert.equal(m.getEntry(b).parentId, a);
  assert.equal(m.getEntry(a).parentId, null);
  assert.equal(m.getLeafId(), b);
  assert.deepEqual(m.getChildren(a).map((e) => e.id), [b]);
});

both('unknown entries: branch and appendLabelChange throw "Entry <id> not found", getEntry is undefined', (mod) => {
  const m = mod.SessionManager.inMemory('/w');
  m.appendMessage(user('q'));
  assert.throws(() => m.branch('nope'), /Entry nope not found/);
  assert.throws(() => m.appendLabelChange('nope', 'x'), /Entry nope not found/);
  assert.throws(() => m.branchWithSummary('nope', 's'), /Entry nope not found/);
  assert.equal(m.getEntry('nope'), undefined);
  assert.deepEqual(m.getBranch('nope'), []);
});

both('the session name: appendSessionInfo trims, the latest session_info wins, an empty one clears it', (mod) => {
  const m = mod.SessionManager.inMemory('/w');
  assert.equal(m.getSessionName(), undefined);
  m.appendSessionInfo('  first  ');
  assert.equal(m.getSessionName(), 'first');
  assert.equal(m.getLeafEntry().name, 'first');
  m.appendSessionInfo('second');
  assert.equal(m.getSessionName(), 'second');
  m.appendSessionInfo('   ');
  assert.equal(m.getSessionName(), undefined);
});

both('labels: set, replaced, cleared by undefined or ""; the tree carries them with their time', (mod) => {
  const m = mod.SessionManager.inMemory('/w');
  const a = m.appendMessage(user('q'));
  m.appendLabelChange(a, 'one');
  m.appendLabelChange(a, 'two');
  assert.equal(m.getLabel(a), 'two');
  const node = m.getTree()[0];
  assert.equal(node.label, 'two');
  assert.equal(node.labelTimestamp, m.getLeafEntry().timestamp);
  m.appendLabelChange(a, '');
  assert.equal(m.getLabel(a), undefined);
  m.appendLabelChange(a, 'three');
  m.appendLabelChange(a, undefined);
  assert.equal(m.getLabel(a), undefined);
  assert.equal(m.getTree()[0].label, undefined);
});

both('branch moves the leaf; resetLeaf makes the next entry a root; branchWithSummary from null is from "root"', (mod) => {
  const m = mod.SessionManager.inMemory('/w');
  const a = m.appendMessage(user('q'));
  m.appendMessage(assistant('a'));
  m.branch(a);
  const c = m.appendMessage(user('other'));
  assert.equal(m.getEntry(c).parentId, a);
  assert.deepEqual(m.getChildren(a).length, 2);
  m.resetLeaf();
  assert.equal(m.getLeafId(), null);
  assert.deepEqual(m.buildSessionContext(), { messages: [], thinkingLevel: 'off', model: null });
  const s = m.branchWithSummary(null, 'gone', { k: 1 }, true);
  const entry = m.getEntry(s);
  assert.deepEqual({ ...entry, id: 'x', timestamp: 't' }, {
    type: 'branch_summary', id: 'x', parentId: null, timestamp: 't', fromId: 'root', summary: 'gone', details: { k: 1 }, fromHook: true,
  });
  assert.equal(m.getTree().length, 2);
});

both('the context: thinking level and model along the path, compaction keeps from firstKeptEntryId', (mod) => {
  const m = mod.SessionManager.inMemory('/w');
  const q = m.appendMessage(user('q'));
  m.appendMessage(assistant('a'));
  m.appendThinkingLevelChange('high');
  m.appendModelChange('openai', 'gpt-5');
  const kept = m.appendMessage(user('kept', 3));
  m.appendCompaction('summary', kept, 1234);
  m.appendMessage(assistant('after', 4));
  const ctx = m.buildSessionContext();
  assert.equal(ctx.thinkingLevel, 'high');
  assert.deepEqual(ctx.model, { provider: 'anthropic', modelId: 'claude' });
  assert.deepEqual(ctx.messages.map((x) => x.role), ['compactionSummary', 'user', 'assistant']);
  assert.equal(ctx.messages[0].summary, 'summary');
  assert.deepEqual(mod.buildSessionContext(m.getEntries(), q).messages, [user('q')]);
  assert.deepEqual(mod.buildSessionContext(m.getEntries(), null), { messages: [], thinkingLevel: 'off', model: null });
  assert.equal(mod.getLatestCompactionEntry(m.getEntries()).summary, 'summary');
});

both('createBranchedSession: the path to the leaf in a new file, its labels re-applied, parentSession the old file', (mod, root) => {
  const m = mod.SessionManager.create('/w', path.join(root, 's'));
  const a = m.appendMessage(user('q'));
  const b = m.appendMessage(assistant('a'));
  m.appendMessage(user('not on the path'));
  m.appendLabelChange(b, 'keep');
  const old = m.getSessionFile();
  const file = m.createBranchedSession(b);
  assert.notEqual(file, old);
  assert.equal(m.getSessionFile(), file);
  assert.equal(m.getHeader().parentSession, old);
  const lines = jsonl(file);
  assert.deepEqual(lines.map((e) => e.type), ['session', 'message', 'message', 'label']);
  assert.deepEqual([lines[1].id, lines[2].id, lines[3].targetId], [a, b, b]);
  assert.equal(m.getLabel(b), 'keep');
  // In memory: no file, the path kept.
  const mem = mod.SessionManager.inMemory('/w');
  const x = mem.appendMessage(user('q'));
  mem.appendMessage(assistant('a'));
  assert.equal(mem.createBranchedSession(x), undefined);
  assert.deepEqual(mem.getEntries().map((e) => e.id), [x]);
});

both('forkFrom: a new session of the target cwd with the source\'s entries, parentSession the source path', (mod, root) => {
  const m = mod.SessionManager.create('/w/a', path.join(root, 'a'));
  m.appendMessage(user('q'));
  m.appendMessage(assistant('a'));
  const f = mod.SessionManager.forkFrom(m.getSessionFile(), '/w/b', path.join(root, 'b'));
  assert.equal(f.getCwd(), '/w/b');
  assert.equal(f.getHeader().parentSession, m.getSessionFile());
  assert.deepEqual(f.getEntries(), m.getEntries());
  assert.ok(fs.existsSync(f.getSessionFile()));
  const empty = path.join(root, 'empty.jsonl');
  fs.writeFileSync(empty, '');
  assert.throws(() => mod.SessionManager.forkFrom(empty, '/w/b', path.join(root, 'b')), /Cannot fork/);
});

both('open: the header\'s cwd unless overridden, sessionDir the file\'s folder; continueRecent takes the newest', (mod, root) => {
  const dir = path.join(root, 's');
  const m = mod.SessionManager.create('/w/orig', dir);
  m.appendMessage(user('q'));
  m.appendMessage(assistant('a'));
  const o = mod.SessionManager.open(m.getSessionFile());
  assert.equal(o.getCwd(), '/w/orig');
  assert.equal(o.getSessionDir(), dir);
  assert.deepEqual(o.getEntries(), m.getEntries());
  assert.equal(mod.SessionManager.open(m.getSessionFile(), undefined, '/else').getCwd(), '/else');
  assert.equal(mod.findMostRecentSession(dir), m.getSessionFile());
  assert.equal(mod.SessionManager.continueRecent('/w/orig', dir).getSessionFile(), m.getSessionFile());
  const fresh = mod.SessionManager.continueRecent('/w/none', path.join(root, 'none'));
  assert.deepEqual(fresh.getEntries(), []);
  assert.equal(mod.findMostRecentSession(path.join(root, 'missing')), null);
});

both('inMemory: never persisted, no file; newSession keeps it in memory', (mod) => {
  const m = mod.SessionManager.inMemory('/w');
  assert.equal(m.isPersisted(), false);
  assert.equal(m.getSessionFile(), undefined);
  m.appendMessage(user('q'));
  m.appendMessage(assistant('a'));
  assert.equal(m.getSessionFile(), undefined);
  const before = m.getSessionId();
  assert.equal(m.newSession(), undefined);
  assert.notEqual(m.getSessionId(), before);
  assert.deepEqual(m.getEntries(), []);
});

both('list and listAll: newest activity first, progress reported for every file', async (mod, root) => {
  const one = mod.SessionManager.create('/w/one');
  one.appendMessage(user('first', 10));
  one.appendMessage(assistant('reply', 20));
  one.appendSessionInfo('Named');
  const two = mod.SessionManager.create('/w/two');
  two.appendMessage(user('second', 30));
  two.appendMessage(assistant('reply', 40));
  const progress = [];
  const listed = await mod.SessionManager.list('/w/one', undefined, (loaded, total) => progress.push([loaded, total]));
  assert.deepEqual(progress, [[1, 1]]);
  assert.equal(listed.length, 1);
  assert.equal(listed[0].name, 'Named');
  assert.equal(listed[0].firstMessage, 'first');
  assert.equal(listed[0].allMessagesText, 'first reply');
  assert.equal(listed[0].messageCount, 2);
  assert.ok(listed[0].created instanceof Date);
  assert.equal(listed[0].modified.getTime(), 20);
  const all = [];
  const everything = await mod.SessionManager.listAll((loaded, total) => all.push([loaded, total]));
  assert.deepEqual(everything.map((i) => i.cwd), ['/w/two', '/w/one']);
  assert.deepEqual(all.at(-1), [2, 2]);
  assert.deepEqual(await mod.SessionManager.list('/w', path.join(root, 'missing')), []);
});

both('loadEntriesFromFile / parseSessionEntries: records as written, bad lines skipped, [] without a header', (mod, root) => {
  const file = path.join(root, 'f.jsonl');
  fs.writeFileSync(file, '{"type":"session","id":"s","timestamp":"t","cwd":"/"}\nnot json\n{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"q"}}\n');
  assert.deepEqual(mod.loadEntriesFromFile(file).map((e) => e.type), ['session', 'message']);
  assert.deepEqual(mod.parseSessionEntries('{"a":1}\n\nbad\n{"b":2}'), [{ a: 1 }, { b: 2 }]);
  fs.writeFileSync(file, '{"type":"message","id":"a"}\n');
  assert.deepEqual(mod.loadEntriesFromFile(file), []);
  assert.deepEqual(mod.loadEntriesFromFile(path.join(root, 'missing.jsonl')), []);
});

both('migrateSessionEntries: v1 entries get ids and parents, hookMessage becomes custom, the header version 3', (mod) => {
  const entries = [
    { type: 'session', id: 's', timestamp: 't', cwd: '/' },
    { type: 'message', timestamp: 't', message: { role: 'user', content: 'q' } },
    { type: 'message', timestamp: 't', message: { role: 'hookMessage', content: 'h' } },
  ];
  mod.migrateSessionEntries(entries);
  assert.equal(entries[0].version, 3);
  assert.equal(entries[1].parentId, null);
  assert.equal(entries[2].parentId, entries[1].id);
  assert.equal(entries[2].message.role, 'custom');
});

test('xcsh-session/pi has every export, method and static of pi\'s module, and declares them', async () => {
  const pi = await import(pathToFileURL(PI_FILE).href);
  const publicNames = (o) => Object.getOwnPropertyNames(o).filter((n) => !n.startsWith('_') && n !== 'constructor' && n !== 'prototype' && n !== 'length' && n !== 'name');
  const missing = (names, o) => names.filter((n) => typeof o[n] === 'undefined');
  assert.deepEqual(missing(Object.keys(pi), ours), []);
  assert.deepEqual(missing(publicNames(pi.SessionManager.prototype), ours.SessionManager.prototype), []);
  assert.deepEqual(missing(publicNames(pi.SessionManager), ours.SessionManager), []);
  for (const n of publicNames(pi.SessionManager.prototype)) {
    assert.equal(ours.SessionManager.prototype[n].length, pi.SessionManager.prototype[n].length, `${n}'s parameters`);
  }
  for (const n of Object.keys(pi).filter((k) => typeof pi[k] === 'function' && k !== 'SessionManager')) {
    assert.equal(ours[n].length, pi[n].length, `${n}'s parameters`);
  }
  // Every runtime export is declared in pi.d.mts, and nothing else is.
  const dts = fs.readFileSync(new URL('../../pkg/pi.d.mts', import.meta.url), 'utf8');
  const declared = [...dts.matchAll(/^export declare (?:function|const|class) (\w+)/gm)].map((m) => m[1]).sort();
  assert.deepEqual(declared, Object.keys(ours).sort());
  for (const n of publicNames(pi.SessionManager.prototype)) assert.match(dts, new RegExp(`^  ${n}[<(]`, 'm'), n);
  for (const n of publicNames(pi.SessionManager)) assert.match(dts, new RegExp(`^  static ${n}\\(`, 'm'), n);
});

test('the declarations of xcsh-session/pi type-check, and pi-style code against them', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-pi-types-'));
  const pkg = new URL('../../pkg/', import.meta.url).pathname;
  const file = path.join(root, 'use.mts');
  fs.writeFileSync(file, `
import { SessionManager, buildSessionContext, type SessionContext, type SessionInfo, type SessionEntry, type SessionTreeNode, type ReadonlySessionManager } from '${pkg}pi.mjs';
const m: SessionManager = SessionManager.create('/w');
const id: string = m.appendMessage({ role: 'user', content: 'q', timestamp: 1 });
m.appendModelChange('openai', 'gpt-5');
m.appendCompaction('s', id, 10, { files: [] }, true);
m.appendCustomMessageEntry('note', [{ type: 'text', text: 't' }], true);
const ctx: SessionContext = m.buildSessionContext();
const model: string | undefined = ctx.model?.modelId;
const entries: SessionEntry[] = m.getEntries();
const tree: SessionTreeNode[] = m.getTree();
const ro: ReadonlySessionManager = m;
const leaf: string | null = ro.getLeafId();
const other: SessionContext = buildSessionContext(entries, leaf);
const list: Promise<SessionInfo[]> = SessionManager.list('/w', undefined, (loaded: number, total: number) => {});
const file: string | undefined = m.createBranchedSession(id);
void [model, tree, other, list, file];
`);
  const tsc = new URL('../node_modules/.bin/tsc', import.meta.url).pathname;
  try {
    execFileSync(tsc, ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext',
      '--skipLibCheck', 'false', path.join(pkg, 'pi.d.mts'), file], { stdio: 'pipe' });
  } catch (e) {
    assert.fail(String(e.stdout));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

both('open of a missing file: a new session at that path, a UUID v7 id, written with its first reply', (mod, root) => {
  const file = path.join(root, 'elsewhere', 'new.jsonl');
  fs.mkdirSync(path.dirname(file));
  const m = mod.SessionManager.open(file);
  assert.equal(m.getSessionFile(), file);
  assert.match(m.getSessionId(), /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(fs.existsSync(file), false);
  m.appendMessage(user('q'));
  m.appendMessage(assistant('a'));
  assert.equal(jsonl(file)[0].id, m.getSessionId());
});

both('messages are written as given: a large image stays inline, a long tool output whole', (mod, root) => {
  const m = mod.SessionManager.create('/w', path.join(root, 's'));
  const image = { type: 'image', data: 'A'.repeat(200_000), mimeType: 'image/png' };
  m.appendMessage({ role: 'user', content: [{ type: 'text', text: 'look' }, image], timestamp: 1 });
  m.appendMessage(assistant('seen'));
  m.appendMessage({ role: 'toolResult', toolCallId: 'c', toolName: 'bash', content: [{ type: 'text', text: 'x'.repeat(600_000) }], isError: false, timestamp: 3 });
  m.appendCustomMessageEntry('note', [image], false);
  const lines = jsonl(m.getSessionFile());
  assert.deepEqual(lines[1].message.content[1], image);
  assert.equal(lines[3].message.content[0].text.length, 600_000);
  assert.deepEqual(lines[4].content, [image]);
  assert.equal('attribution' in lines[4], false);
  assert.equal(fs.existsSync(path.join(root, 'agent', 'blobs')), false);
});

test('listSessions with flavour pi and a limit: the newest sessions of the whole listing, by pi\'s modified', async () => {
  const { listSessions, nodeStorage } = await import('../../pkg/node.mjs');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-pi-limit-'));
  try {
    const dir = path.join(root, 's');
    // The latest message times run against the order of the files' creation.
    for (const [i, at] of [[0, 5000], [1, 9000], [2, 1000], [3, 7000]]) {
      const m = ours.SessionManager.create('/w', dir);
      m.appendMessage(user(`q${i}`, at));
      m.appendMessage(assistant(`a${i}`, at + 1));
    }
    const options = { agentDir: path.join(root, 'agent'), sessionDir: dir, flavour: 'pi' };
    const all = listSessions(nodeStorage(), options);
    assert.deepEqual(all.map((s) => s.firstMessage), ['q1', 'q3', 'q0', 'q2'], 'newest activity first');
    const two = listSessions(nodeStorage(), { ...options, limit: 2 });
    assert.deepEqual(two.map((s) => s.path), all.slice(0, 2).map((s) => s.path));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
