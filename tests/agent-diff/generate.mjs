// Seeded random operation scripts for the agent differential test (tests/agent-diff/README.md).
// A script is plain JSON: `{ seed, ops: [{ op, ...args }] }`. It names entries and files
// not by id (ids are random on both sides) but by position: `{ entry: n }` is entry
// n mod count of the current manager's `getEntries()`, `{ file: n }` is the n mod count-th
// session file the script has seen. The same seed gives the same script on every machine.
//
//   node tests/agent-diff/generate.mjs SEED [COUNT]   prints COUNT scripts (JSON lines)

/** mulberry32: a small seeded PRNG, floats in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Words without 8- or 16-letter hex runs, so that the id normalization never touches them.
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india',
  'juliet', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa', 'quebec', 'romeo', 'sierra',
  'tango', 'über', 'naïve', '日本語', 'emoji 🎉', 'quote "q"', 'back\\slash', 'tab\there',
  'line\nbreak', 'ctrl\u0001char', 'cr\r\nlf', '</script>', '\u2028sep'];

// Names for setSessionName: whitespace, newlines, control characters, escapes, empty, long.
const NAMES = ['Plain title', '  padded both sides  ', 'multi\nline\nname', 'tabs\tand  spaces',
  '', '   ', '\n\n', '\u001b[31mred\u001b[0m title', 'bell\u0007char', 'x'.repeat(300),
  'Ünïcödé 名前 🎉', 'trailing newline\n', 'C1\u0085next line', 'nbsp\u00a0here', 'a'];

const LEVELS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'];
const MODELS = ['anthropic/claude-sonnet-4-5', 'openai/gpt-5', 'google/gemini-2.5-pro'];
const ROLES = [undefined, 'default', 'smol', 'slow', 'plan'];
const MODES = ['plan', 'none', 'agent'];

// A 1x1 PNG (small, kept inline) and a payload past the 1024-character blob threshold
// (externalized to the agent dir's blob store by the agent).
const SMALL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** One script of `length` operations (default 20-40) from `seed`. */
export function generateScript(seed, { length } = {}) {
  const r = rng(seed * 2654435761 + 12345);
  const int = (n) => Math.floor(r() * n);
  const pick = (xs) => xs[int(xs.length)];
  const chance = (p) => r() < p;
  const words = (n = 1 + int(4)) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  // Valid base64 of random bytes (what providers hand the agent).
  const bigImage = () => Buffer.from(Array.from({ length: 800 + int(200) }, () => int(256))).toString('base64');
  const image = () => ({ type: 'image', data: chance(0.5) ? SMALL_PNG : bigImage(), mimeType: 'image/png' });
  let clock = 1_000_000_000_000 + int(1_000_000); // message timestamps (2001): from the script, not the clock
  const ts = () => (clock += 1 + int(5000));
  const num = () => pick([0, 1, 7, 1234, 0.1, 0.2, 0.30000000000000004, 1e-7, 12.5, 1e21, 3.14159]);
  const usage = () => {
    const input = int(5000), output = int(2000), cacheRead = pick([0, int(10000)]), cacheWrite = pick([0, int(500)]);
    const cost = { input: num(), output: num(), cacheRead: 0, cacheWrite: 0 };
    cost.total = cost.input + cost.output;
    const u = { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
    if (chance(0.2)) u.premiumRequests = int(3);
    return u;
  };
  let toolCalls = 0;
  const openCalls = [];

  const userMessage = () => ({
    role: 'user',
    content: chance(0.5) ? words() : [{ type: 'text', text: words() }, ...(chance(0.4) ? [image()] : [])],
    timestamp: ts(),
  });
  const assistantMessage = () => {
    const content = [];
    if (chance(0.3)) content.push({ type: 'thinking', thinking: words(), thinkingSignature: 'sig' });
    if (chance(0.8)) content.push({ type: 'text', text: words() });
    const calls = chance(0.4) ? 1 + int(2) : 0;
    for (let i = 0; i < calls; i++) {
      const id = `toolu_call_${++toolCalls}`;
      openCalls.push(id);
      content.push({ type: 'toolCall', id, name: pick(['bash', 'read', 'edit']), arguments: { path: words(1), n: num() } });
    }
    return {
      role: 'assistant', content, api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5',
      usage: usage(), stopReason: calls ? 'toolUse' : pick(['stop', 'stop', 'length', 'error', 'aborted']),
      ...(chance(0.1) ? { errorMessage: words() } : {}),
      timestamp: ts(),
    };
  };
  const toolResultMessage = () => {
    const id = openCalls.length && chance(0.8) ? openCalls.shift() : `toolu_orphan_${++toolCalls}`;
    return {
      role: 'toolResult', toolCallId: id, toolName: pick(['bash', 'read', 'edit']),
      content: [{ type: 'text', text: words() }, ...(chance(0.2) ? [image()] : [])],
      ...(chance(0.3) ? { details: { exitCode: int(3), note: words(1) } } : {}),
      isError: chance(0.2), timestamp: ts(),
    };
  };

  const entry = () => ({ entry: int(1000) });
  const content = () => (chance(0.5) ? words() : [{ type: 'text', text: words() }, ...(chance(0.3) ? [image()] : [])]);

  // A session file as an older agent wrote it, or one whose entries share an id, as the
  // lines of its text (the runner puts the script's project dir for `<proj>`). v1: no ids,
  // compactions keep `firstKeptEntryIndex` (the header is index 0; it may point past the
  // compaction, to an entry not migrated yet); v2: ids, custom messages of role
  // `hookMessage`. `dup`: a current file where a later entry reuses an earlier one's id.
  const iso = () => new Date(ts()).toISOString();
  const hex8 = () => Array.from({ length: 8 }, () => '0123456789abcdef'[int(16)]).join('');
  const oldFile = (kind) => {
    const version = kind === 'v1' ? undefined : kind === 'v2' ? 2 : 3;
    const header = { type: 'session', ...(version ? { version } : {}), id: `${hex8()}-0000-4000-8000-${hex8()}0000`, timestamp: iso(), cwd: '<proj>' };
    const records = [];
    const count = 2 + int(7);
    for (let k = 0; k < count; k++) {
      const x = int(10);
      const base = { timestamp: iso() };
      if (x < 3) records.push({ type: 'message', ...base, message: userMessage() });
      else if (x < 6) records.push({ type: 'message', ...base, message: assistantMessage() });
      else if (x === 6) records.push({ type: 'message', ...base, message: kind === 'v1' ? toolResultMessage() : { role: 'hookMessage', customType: 'hook', content: words(), display: true, timestamp: ts() } });
      else if (x === 7) records.push({ type: 'thinking_level_change', ...base, thinkingLevel: pick(LEVELS) });
      else if (x === 8) records.push({ type: 'model_change', ...base, model: pick(MODELS) });
      else records.push({ type: 'compaction', ...base, summary: words(), tokensBefore: int(1000), firstKept: 1 + int(count + 1) });
    }
    if (kind === 'v1') {
      for (const r of records) if (r.type === 'compaction') { r.firstKeptEntryIndex = r.firstKept; delete r.firstKept; }
    } else {
      const ids = records.map(() => hex8());
      const parents = records.map((_, k) => (k === 0 ? null : chance(0.8) ? k - 1 : int(k)));
      if (kind === 'dup' && records.length > 1) {
        // The later entry takes the id of entry `first` and a parent before it: a parent
        // at or after `first` would make a parent cycle (the agent's getBranch never ends).
        const later = 1 + int(records.length - 1), first = int(later);
        ids[later] = ids[first];
        parents[later] = first === 0 ? null : int(first);
      }
      records.forEach((r, k) => {
        r.id = ids[k];
        r.parentId = parents[k] === null ? null : ids[parents[k]];
        if (r.type === 'compaction') { r.firstKeptEntryId = ids[(r.firstKept - 1) % ids.length]; }
        delete r.firstKept;
      });
      // The writer's key order: type, id, parentId, timestamp first.
      records.forEach((r, k) => { records[k] = { type: r.type, id: r.id, parentId: r.parentId, ...r }; });
    }
    return [header, ...records].map((r) => JSON.stringify(r));
  };

  // [weight, maker]
  const table = [
    [14, () => ({ op: 'appendMessage', message: userMessage() })],
    [14, () => ({ op: 'appendMessage', message: assistantMessage() })],
    [6, () => ({ op: 'appendMessage', message: toolResultMessage() })],
    [3, () => ({ op: 'appendThinkingLevelChange', level: pick(LEVELS) })],
    [3, () => ({ op: 'appendModelChange', model: pick(MODELS), role: pick(ROLES) })],
    [2, () => ({
      op: 'appendCompaction', summary: words(), shortSummary: chance(0.5) ? words(1) : undefined,
      firstKept: entry(), tokensBefore: int(200000),
      details: chance(0.3) ? { readFiles: [words(1)], modifiedFiles: [] } : undefined,
      fromExtension: chance(0.2) ? true : undefined,
    })],
    [2, () => ({ op: 'appendCustomEntry', customType: pick(['ext-a', 'ext-b']), data: chance(0.8) ? { n: num(), s: words() } : undefined })],
    [2, () => ({
      op: 'appendCustomMessageEntry', customType: pick(['note', 'hook']), content: content(), display: chance(0.5),
      details: chance(0.3) ? { k: words(1) } : undefined,
    })],
    [3, () => ({ op: 'appendLabelChange', target: entry(), label: chance(0.8) ? pick(['checkpoint', 'start', words(1), '  spaced  ']) : undefined })],
    [1, () => ({ op: 'appendModeChange', mode: pick(MODES), data: chance(0.5) ? { planFile: words(1) } : undefined })],
    [1, () => ({ op: 'appendSessionInit', init: { systemPrompt: words(), task: words(), tools: ['bash', 'read'] } })],
    [1, () => ({ op: 'appendTtsrInjection', rules: [pick(['rule-a', 'rule-b', 'rule-c'])] })],
    [3, () => ({ op: 'branch', from: entry() })],
    [2, () => ({ op: 'branchWithSummary', from: chance(0.15) ? null : entry(), summary: words(), details: chance(0.3) ? { f: [words(1)] } : undefined })],
    [1, () => ({ op: 'resetLeaf' })],
    [3, () => ({ op: 'setSessionName', name: pick(NAMES), source: pick([undefined, 'auto', 'user']) })],
    [1, () => ({ op: 'createBranchedSession', leaf: entry() })],
    [1, () => ({ op: 'fork' })],
    [1, () => ({ op: 'forkFrom', source: { file: int(1000) } })],
    [1, () => ({ op: 'moveTo', cwd: pick(['proj2', 'proj']) })],
    [2, () => ({ op: 'reopen' })],
    [1, () => ({ op: 'open', file: { file: int(1000) } })],
    [1, () => ({ op: 'newSession' })],
    [1, () => ({ op: 'newSession', options: { parentSession: pick(['parent-a', 'proj/parent.jsonl']) } })],
    [1, () => ({ op: 'continueRecent', defaultDir: chance(0.3) })],
    [2, () => ({ op: 'list', which: pick(['dir', 'default', 'all']) })],
    [1, () => ({ op: 'inMemory' })],
    [1, () => ({ op: 'setSessionFile', file: { file: int(1000) }, fresh: chance(0.25) })],
    [2, () => ({ op: 'rewriteEntries', target: entry() })],
    [2, () => { const kind = pick(['v1', 'v1', 'v2', 'dup']); return { op: { v1: 'openV1File', v2: 'openV2File', dup: 'openDupIdFile' }[kind], lines: oldFile(kind) }; }],
    [2, () => ({ op: 'flush' })],
    [1, () => ({ op: 'ensureOnDisk' })],
    [1, () => ({ op: 'close' })],
  ];
  const total = table.reduce((n, [w]) => n + w, 0);
  const n = length ?? 20 + int(21);
  const ops = [{ op: 'create' }];
  // Most scripts get an exchange early, so that the file exists and later ops act on disk.
  if (chance(0.8)) ops.push({ op: 'appendMessage', message: userMessage() }, { op: 'appendMessage', message: assistantMessage() });
  while (ops.length < n) {
    let x = r() * total;
    for (const [w, make] of table) {
      if ((x -= w) < 0) { ops.push(make()); break; }
    }
  }
  return { seed, ops: JSON.parse(JSON.stringify(ops)) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seed = Number(process.argv[2] ?? 1);
  const count = Number(process.argv[3] ?? 1);
  for (let i = 0; i < count; i++) console.log(JSON.stringify(generateScript(seed + i)));
}
