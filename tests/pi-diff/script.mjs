// Seeded sessions written by pi's own SessionManager (tests/pi-diff/README.md): a script of
// random operations in pi's vocabulary, applied to a persisted manager, so that every file
// the differential test reads is one pi wrote. Entries are named by position in
// `getEntries()` (`n mod count`), never by id (pi's ids are random).
import { rng } from '../agent-diff/generate.mjs';

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'über', 'naïve', '日本語', 'emoji 🎉',
  'quote "q"', 'back\\slash', 'tab\there', 'line\nbreak', '</script>', '\u2028sep'];
const NAMES = ['Plain title', '  padded  ', 'multi\nline', '', '   ', 'Ünïcödé 名前 🎉', 'x'.repeat(200)];
const LEVELS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'];
const MODELS = [['anthropic', 'claude-sonnet-4-5'], ['openai', 'gpt-5'], ['google', 'gemini-2.5-pro']];
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** One script of 15–40 operations from `seed`: `{ seed, ops: [{ op, ...args }] }`. */
export function piScript(seed) {
  const r = rng(seed * 2246822519 + 7);
  const int = (n) => Math.floor(r() * n);
  const pick = (xs) => xs[int(xs.length)];
  const chance = (p) => r() < p;
  const words = () => Array.from({ length: 1 + int(4) }, () => pick(WORDS)).join(' ');
  let clock = 1_700_000_000_000 + int(1_000_000);
  const ts = () => (clock += 1 + int(5000));
  let calls = 0;
  const usage = () => {
    const input = int(5000), output = int(2000);
    return { input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output, cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 } };
  };
  const user = () => ({
    role: 'user',
    content: chance(0.5) ? words() : [{ type: 'text', text: words() }, ...(chance(0.2) ? [{ type: 'image', data: PNG, mimeType: 'image/png' }] : [])],
    timestamp: ts(),
  });
  const assistant = () => {
    const [provider, model] = pick(MODELS);
    const content = [];
    if (chance(0.3)) content.push({ type: 'thinking', thinking: words() });
    content.push({ type: 'text', text: words() });
    if (chance(0.3)) content.push({ type: 'toolCall', id: `call_${++calls}`, name: 'bash', arguments: { command: words() } });
    return { role: 'assistant', content, api: 'messages', provider, model, usage: usage(), stopReason: 'stop', timestamp: ts() };
  };
  const toolResult = () => ({ role: 'toolResult', toolCallId: `call_${calls}`, toolName: 'bash', content: [{ type: 'text', text: words() }], isError: chance(0.2), timestamp: ts() });
  // An assistant message first: pi writes nothing before one.
  const ops = [{ op: 'message', message: user() }, { op: 'message', message: assistant() }];
  const length = 15 + int(26);
  while (ops.length < length) {
    const x = r();
    if (x < 0.22) ops.push({ op: 'message', message: user() });
    else if (x < 0.4) ops.push({ op: 'message', message: assistant() });
    else if (x < 0.45) ops.push({ op: 'message', message: toolResult() });
    else if (x < 0.5) ops.push({ op: 'thinking', level: pick(LEVELS) });
    else if (x < 0.55) ops.push({ op: 'model', model: pick(MODELS) });
    else if (x < 0.6) ops.push({ op: 'compaction', summary: words(), kept: { entry: int(1000) }, tokensBefore: int(100000), details: chance(0.5) ? { readFiles: [words()] } : undefined });
    else if (x < 0.64) ops.push({ op: 'custom', customType: pick(['note', 'ext']), data: chance(0.7) ? { n: int(9), s: words() } : undefined });
    else if (x < 0.69) ops.push({ op: 'customMessage', customType: pick(['note', 'ext']), content: chance(0.5) ? words() : [{ type: 'text', text: words() }], display: chance(0.5), details: chance(0.5) ? { k: words() } : undefined });
    else if (x < 0.74) ops.push({ op: 'name', name: pick(NAMES) });
    else if (x < 0.8) ops.push({ op: 'label', target: { entry: int(1000) }, label: chance(0.8) ? pick(['mark', 'todo', words()]) : undefined });
    else if (x < 0.88) ops.push({ op: 'branch', at: { entry: int(1000) } });
    else if (x < 0.9) ops.push({ op: 'resetLeaf' });
    else ops.push({ op: 'branchWithSummary', at: chance(0.9) ? { entry: int(1000) } : null, summary: chance(0.9) ? words() : '' });
  }
  return { seed, ops };
}

/** Apply `script` to pi's `manager` (a persisted one: pi writes the file). */
export function applyScript(manager, script) {
  const entry = (ref) => {
    const all = manager.getEntries();
    return all.length ? all[ref.entry % all.length].id : null;
  };
  for (const o of script.ops) {
    switch (o.op) {
      case 'message': manager.appendMessage(structuredClone(o.message)); break;
      case 'thinking': manager.appendThinkingLevelChange(o.level); break;
      case 'model': manager.appendModelChange(o.model[0], o.model[1]); break;
      case 'compaction': {
        const kept = entry(o.kept);
        if (kept) manager.appendCompaction(o.summary, kept, o.tokensBefore, o.details);
        break;
      }
      case 'custom': manager.appendCustomEntry(o.customType, o.data); break;
      case 'customMessage': manager.appendCustomMessageEntry(o.customType, structuredClone(o.content), o.display, o.details); break;
      case 'name': manager.appendSessionInfo(o.name); break;
      case 'label': {
        const target = entry(o.target);
        if (target) manager.appendLabelChange(target, o.label);
        break;
      }
      case 'branch': {
        const at = entry(o.at);
        if (at) manager.branch(at);
        break;
      }
      case 'resetLeaf': manager.resetLeaf(); break;
      case 'branchWithSummary': manager.branchWithSummary(o.at && entry(o.at), o.summary); break;
      default: throw new Error(`unknown op ${o.op}`);
    }
  }
}
