// The package's TypeScript declarations checked against what it really returns: every
// result the Rust side builds (header, load report, entries, tree, context, listings,
// resume/continue, fork/move, GC, blobs, URLs, history rows, error kinds) is sampled from
// the real fixtures and written as a literal typed with the declared return type
// (`ReturnType<typeof fn>`, `ReturnType<Session['method']>`), then `tsc --strict
// --exactOptionalPropertyTypes` checks them: a key the declarations lack, a missing
// required key, a null where a string is declared, or a wrong union member fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  Session, PromptHistory, MemoryJsStorage, FIXTURES, fixture, user, assistant, parseSession,
  recentSessions, listSessions, searchSessions, resolveResume, continueRecent, resolveUrl,
  blobPut, forkSession, moveSession, collectGarbage,
} from './helpers.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = path.join(ROOT, 'tests', 'node_modules', '.bin', 'tsc');
const OUT = path.join(ROOT, 'target', 'types-check');
const agentDir = '/home/me/.xcsh/agent';

/** The value's shape: keys and value kinds, arrays as the set of their element shapes. */
function shape(v) {
  if (Array.isArray(v)) return `[${[...new Set(v.map(shape))].sort().join('|')}]`;
  if (v === null) return 'null';
  if (typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${k}:${shape(v[k])}`).join(',')}}`;
  return typeof v;
}

/** Long strings cut (their type is what is checked), deep trees cut at `depth` levels. */
function shrink(v, depth = 0) {
  if (typeof v === 'string') return v.length > 24 ? v.slice(0, 24) : v;
  if (Array.isArray(v)) return v.map((x) => shrink(x, depth));
  if (v && typeof v === 'object') {
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] = k === 'children' && depth > 4 ? [] : shrink(x, k === 'children' ? depth + 1 : depth);
    }
    return out;
  }
  return v;
}

/** One element of each shape (the fixtures repeat the same shapes thousands of times). */
function distinct(items) {
  const seen = new Map();
  for (const item of items) if (!seen.has(shape(item))) seen.set(shape(item), item);
  return [...seen.values()];
}

function samples() {
  const out = []; // [declared type, value]
  const add = (type, value) => out.push([type, shrink(value)]);
  const storage = new MemoryJsStorage();
  for (const name of FIXTURES) {
    const text = fixture(name);
    add('ReturnType<typeof pkg.parseSession>', parseSession(text));
    const s = Session.fromText(text, { agentDir, storage });
    add("ReturnType<pkg.Session['header']>", s.header());
    add("ReturnType<pkg.Session['report']>", s.report());
    add("ReturnType<pkg.Session['displayTitle']>", s.displayTitle());
    add("ReturnType<pkg.Session['entries']>", distinct(s.entries()));
    const ctx = s.context();
    add("ReturnType<pkg.Session['context']>", { ...ctx, messages: distinct(ctx.messages) });
    const tree = s.tree();
    add("ReturnType<pkg.Session['tree']>", tree.slice(0, 3));
    add("ReturnType<pkg.Session['usageStatistics']>", s.usageStatistics());
    const role = s.lastModelChangeRole();
    if (role !== undefined) add("ReturnType<pkg.Session['lastModelChangeRole']>", role);
  }
  const a = Session.create(storage, { agentDir, cwd: '/work/a' });
  a.appendMessage(user('fix the parser'));
  a.appendMessage(assistant('ok'));
  a.setSessionName('parser work', 'user');
  const b = Session.create(storage, { agentDir, cwd: '/work/b' });
  b.appendMessage(user('write docs'));
  const dir = a.file.replace(/\.jsonl$/, '');
  storage.mkdirAll(dir);
  storage.write(`${dir}/0.bash.log`, new TextEncoder().encode('full output'));
  a.close();
  add('ReturnType<typeof pkg.recentSessions>', recentSessions(storage, { agentDir, cwd: '/work/a' }));
  add('ReturnType<typeof pkg.listSessions>', listSessions(storage, { agentDir }));
  add('ReturnType<typeof pkg.searchSessions>', searchSessions(storage, { agentDir, query: 'parser' }));
  add('ReturnType<typeof pkg.resolveResume>', resolveResume(storage, { agentDir, cwd: '/work/a', arg: a.sessionId }));
  add('ReturnType<typeof pkg.continueRecent>', continueRecent(storage, { agentDir, cwd: '/work/a', terminal: 'pts-1' }));
  add('ReturnType<typeof pkg.resolveUrl>', resolveUrl(storage, a.file, 'artifact://0'));
  add('ReturnType<typeof pkg.blobPut>', blobPut(storage, agentDir, new Uint8Array([1, 2, 3])));
  const fork = forkSession(storage, agentDir, a.file);
  add('ReturnType<typeof pkg.forkSession>', fork);
  add('ReturnType<typeof pkg.moveSession>', moveSession(storage, agentDir, fork.newFile, '/work/moved'));
  add('ReturnType<typeof pkg.collectGarbage>', collectGarbage(storage, agentDir));
  const rows = [];
  const h = new PromptHistory({
    add(prompt, cwd, createdAt) { rows.push({ id: rows.length + 1, prompt, createdAt, cwd }); },
    search(query, limit) {
      if (query.includes('"')) throw Object.assign(new Error('fts5: syntax error'), { kind: 'invalidQuery' });
      return rows.filter((r) => r.prompt.includes(query)).slice(0, limit);
    },
    recent(limit) { return [...rows].reverse().slice(0, limit); },
    lastPrompt() { return rows.at(-1)?.prompt ?? null; },
  });
  add("ReturnType<pkg.PromptHistory['add']>", h.add('fix the parser', '/w'));
  add("ReturnType<pkg.PromptHistory['add']>", h.add('fix the parser', '/w'));
  h.add('no cwd');
  add("ReturnType<pkg.PromptHistory['recent']>", h.recent({ limit: 10 }));
  add("ReturnType<pkg.PromptHistory['search']>", h.search('parser'));
  const kinds = [];
  const kindOf = (fn) => {
    try { fn(); } catch (e) { kinds.push(e.kind); return; }
    throw new Error('expected an error');
  };
  kindOf(() => resolveResume(storage, { agentDir, cwd: '/work/a', arg: 'zzzz' }));
  kindOf(() => resolveUrl(storage, a.file, 'artifact://x'));
  kindOf(() => resolveResume(storage, { agentDir, cwd: '/work/z', arg: b.sessionId }));
  kindOf(() => Session.fromText(fixture('before-compaction')).branch('no-such-entry'));
  kindOf(() => h.search('"unterminated'));
  add('pkg.SessionErrorKind[]', kinds);
  return out;
}

function tsFile(entries) {
  const lines = ["import type * as pkg from '../../pkg/xcsh_session.js';", ''];
  entries.forEach(([type, value], i) => lines.push(`export const v${i}: ${type} = ${JSON.stringify(value)};`));
  return `${lines.join('\n')}\n`;
}

/** tsc's diagnostics, one string per error line (empty when it type-checks). */
function tsc(files) {
  try {
    execFileSync(TSC, ['--strict', '--exactOptionalPropertyTypes', '--noEmit', '--target', 'es2022',
      '--module', 'esnext', '--moduleResolution', 'bundler', ...files], { encoding: 'utf8', cwd: OUT });
    return [];
  } catch (e) {
    if (!e.stdout) throw e;
    return e.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
  }
}

test('every sampled result type-checks against the declared TypeScript types', () => {
  assert.ok(fs.existsSync(TSC), `missing ${TSC}: run scripts/setup test (npm ci in tests/)`);
  fs.mkdirSync(OUT, { recursive: true });
  const entries = samples();
  fs.writeFileSync(path.join(OUT, 'samples.ts'), tsFile(entries));
  // The control: values the declarations must reject, one kind of mistake each.
  const recent = entries.find(([t]) => t.includes('recentSessions'))[1];
  const report = entries.find(([t]) => t.includes("['report']"))[1];
  const bad = [
    ['ReturnType<typeof pkg.recentSessions>', [{ ...recent[0], extraKey: 1 }]],
    ['ReturnType<typeof pkg.recentSessions>', [{ ...recent[0], title: null }]],
    ["ReturnType<pkg.Session['report']>", { ...report, issues: undefined }],
    ['pkg.SessionErrorKind[]', ['noSuchKind']],
  ];
  fs.writeFileSync(path.join(OUT, 'control.ts'), tsFile(bad));
  const errors = tsc(['samples.ts', 'control.ts']);
  const inSamples = errors.filter((l) => l.startsWith('samples.ts'));
  assert.deepEqual(inSamples, [], `the package returns values its declarations reject:\n${inSamples.join('\n')}`);
  const controlLines = new Set(errors.filter((l) => l.startsWith('control.ts')).map((l) => l.match(/^control\.ts\((\d+)/)[1]));
  assert.equal(controlLines.size, bad.length, `each planted mistake must fail the check:\n${errors.join('\n')}`);
});

// `xcsh-session/agent` is a drop-in for the coding agent's session module: agent code must
// type-check against it unchanged. types/agent-consumer.ts uses it as the agent does; the
// control plants one mistake per line that the declarations must reject (a union member
// that does not exist, a Date used as a string, the reading half used as the whole, a key
// of another entry type, an export that moved to a subpath, a summary appended as a
// message). `--strict` without skipLibCheck: the declarations themselves are checked too.
test('the agent drop-in declarations type-check code written against the agent', () => {
  assert.ok(fs.existsSync(TSC), `missing ${TSC}: run scripts/setup test (npm ci in tests/)`);
  fs.mkdirSync(OUT, { recursive: true });
  const consumer = path.join(ROOT, 'tests', 'node', 'types', 'agent-consumer.ts');
  const mistakes = [
    "export const m0 = (sm: a.SessionManager) => sm.appendServiceTierChange('fastest');",
    'export const m1 = (info: a.SessionInfo): string => info.created;',
    'export const m2 = (ro: a.ReadonlySessionManager): a.SessionManager => ro;',
    "export const m3 = (e: a.SessionEntry) => (e.type === 'label' ? e.summary : '');",
    "export const m4 = (m: a.SessionMessageEntry['message']) => (m.role === 'user' ? m.model : '');",
    "export const m5 = (sm: a.SessionManager) => sm.appendMessage({ role: 'compactionSummary', summary: 's', tokensBefore: 1, timestamp: 0 });",
    "export const m6 = (ctx: a.SessionContext): 'auto' | 'flex' => ctx.serviceTier ?? 'auto';",
    "export { OutputSink } from '../../pkg/agent.mjs';",
    "export { HistoryStorage } from '../../pkg/agent.mjs';",
  ];
  const header = ["import type * as a from '../../pkg/agent.mjs';"];
  fs.writeFileSync(path.join(OUT, 'agent-control.ts'), `${[...header, ...mistakes].join('\n')}\n`);
  let errors;
  try {
    execFileSync(TSC, ['--strict', '--noEmit', '--target', 'es2022', '--module', 'esnext',
      '--moduleResolution', 'bundler', consumer, 'agent-control.ts'], { encoding: 'utf8', cwd: OUT });
    errors = [];
  } catch (e) {
    if (!e.stdout) throw e;
    errors = e.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
  }
  const elsewhere = errors.filter((l) => !l.startsWith('agent-control.ts'));
  assert.deepEqual(elsewhere, [], `code written against the agent's session module fails:\n${elsewhere.join('\n')}`);
  const failed = new Set(errors.map((l) => l.match(/^agent-control\.ts\((\d+)/)?.[1]).filter(Boolean).map(Number));
  const missed = mistakes.filter((_, i) => !failed.has(i + header.length + 1));
  assert.deepEqual(missed, [], `planted mistakes the declarations accept:\n${errors.join('\n')}`);
});
