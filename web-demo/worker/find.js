// Finding things in the shown branch: the find bar's search over every message (not just
// the page's window), and the outline (its user prompts and tools). Both read the branch a
// window of messages at a time from the package (nothing holds it whole), report their
// progress, and stop between windows when the page cancels them (a newer query).
import { needView } from './view.js';
import { countOf, windowOf } from './context.js';
import { checkpoint, progress } from './reply.js';

/** Messages per window the search reads, and how long it runs before it lets a cancel in. */
const FIND_WINDOW = 1000;
const FIND_SLICE_MS = 30;

const SEARCH_MAX_HITS = 5000;
/** How many of the hits found so far a progress report carries (the page lists them). */
const FIRST_HITS = 200;
const SNIPPET_BEFORE = 48;
const SNIPPET_AFTER = 90;

/** Tool arguments as the conversation shows them (content.js renderToolCall): pretty JSON. */
function toolArgsText(args) {
  let v = args;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return v;
    }
  }
  return typeof v === 'string' ? v : JSON.stringify(v ?? {}, null, 2);
}

/**
 * What search reads of one message: its parts `{kind, text, tool}` (text, thinking, tool
 * calls with their arguments, tool results, summaries, shell command and output).
 */
function searchParts(m) {
  const parts = [];
  if (!m || typeof m !== 'object') return parts;
  const add = (kind, text, tool = null) => {
    if (text !== undefined && text !== null && text !== '') parts.push({ kind, text: String(text), tool });
  };
  const tool = m.role === 'toolResult' ? String(m.toolName ?? 'tool') : null;
  const blocks = (content, kind) => {
    if (typeof content === 'string') add(kind, content, tool);
    else if (Array.isArray(content)) {
      for (const b of content) {
        if (!b || typeof b !== 'object') continue;
        if (b.type === 'text') add(kind, b.text, tool);
        else if (b.type === 'thinking') add('thinking', b.thinking);
        else if (b.type === 'toolCall') add('tool call', `${b.name ?? 'tool'}\n${toolArgsText(b.arguments)}`, String(b.name ?? 'tool'));
      }
    }
  };
  switch (m.role) {
    case 'toolResult':
      blocks(m.content, 'tool result');
      break;
    case 'bashExecution':
      add('shell', m.command);
      add('shell output', m.output);
      break;
    case 'branchSummary':
    case 'compactionSummary':
      add('summary', m.shortSummary);
      add('summary', m.summary);
      break;
    default:
      blocks(m.content, 'text');
      add('error', m.errorMessage);
  }
  return parts;
}

/** The filter group of a role: user, assistant, toolResult or other. */
const roleGroup = (role) => (role === 'user' || role === 'assistant' || role === 'toolResult' ? role : 'other');

/**
 * Calls `each(index, role, parts, message)` for every message of view `v`'s branch, in
 * order, a window at a time; between windows it reports progress (with `extra()`'s
 * fields) and, every FIND_SLICE_MS, lets a cancel in (a cancelled search throws).
 */
async function eachMessage(v, reqId, each, extra = null) {
  const count = countOf(v);
  let slice = performance.now();
  for (let start = 0; start < count; start += FIND_WINDOW) {
    windowOf(v, start, start + FIND_WINDOW).forEach(({ m }, i) => each(start + i, typeof m?.role === 'string' ? m.role : 'unknown', searchParts(m), m));
    progress(reqId, 'find', Math.min(count, start + FIND_WINDOW), count, extra);
    if (performance.now() - slice > FIND_SLICE_MS) {
      await checkpoint(reqId, 'The search was stopped.');
      slice = performance.now();
    }
  }
  return count;
}

function oneLine(text, max) {
  const s = String(text).replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** The text around a match, in three pieces (the page shows the match marked, as text). */
function snippet(text, at, len) {
  const from = Math.max(0, at - SNIPPET_BEFORE);
  const to = Math.min(text.length, at + len + SNIPPET_AFTER);
  const clean = (s) => s.replace(/\s+/g, ' ');
  return {
    before: (from > 0 ? '…' : '') + clean(text.slice(from, at)).trimStart(),
    match: clean(text.slice(at, at + len)),
    after: clean(text.slice(at + len, to)).trimEnd() + (to < text.length ? '…' : ''),
  };
}

/**
 * Searches every message of the shown branch, case-insensitively: hits (one per message,
 * in order) with the number of matches and a snippet of the first. `role` keeps one group
 * (user, assistant, toolResult, other); `tool` keeps the calls of that tool and their
 * results (with no query: every one of them).
 */
export async function search({ query = '', role = '', tool = '' }, reqId) {
  const v = needView();
  const t0 = performance.now();
  const q = String(query ?? '');
  if (!q.trim() && !tool) return { query: q, hits: [], messages: 0, matches: 0, capped: false, ms: 0 };
  const re = q.trim() ? new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'giu') : null;
  const hits = [];
  let messages = 0;
  let matches = 0;
  const tools = new Map(); // every tool called in the branch, whatever the filters
  await eachMessage(v, reqId, (index, r, parts) => {
    countTools(tools, parts);
    if (role && roleGroup(r) !== role) return;
    let count = 0;
    let first = null;
    for (const part of parts) {
      if (tool && part.tool !== tool) continue;
      if (!re) {
        count++;
        first ??= { part, at: 0, len: 0 };
        continue;
      }
      re.lastIndex = 0;
      for (let m = re.exec(part.text); m; m = re.exec(part.text)) {
        if (!m[0].length) {
          re.lastIndex++;
          continue;
        }
        count++;
        first ??= { part, at: m.index, len: m[0].length };
      }
    }
    if (!count) return;
    messages++;
    matches += count;
    if (hits.length < SEARCH_MAX_HITS) {
      const s = re ? snippet(first.part.text, first.at, first.len) : { before: '', match: '', after: oneLine(first.part.text, SNIPPET_BEFORE + SNIPPET_AFTER) };
      hits.push({ index, role: r, kind: first.part.kind, tool: first.part.tool, count, ...s });
    }
  }, () => ({ found: messages, matches, first: hits.slice(0, FIRST_HITS) }));
  v.tools = toolList(tools);
  return { query: q, hits, messages, matches, capped: messages > hits.length, tools: v.tools, ms: performance.now() - t0 };
}

/** Adds the tool calls among a message's `parts` to `tools` (name → calls). */
function countTools(tools, parts) {
  for (const p of parts) if (p.kind === 'tool call') tools.set(p.tool, (tools.get(p.tool) ?? 0) + 1);
}

/** `tools` as the page lists them: the most called first, then by name. */
const toolList = (tools) => [...tools].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([name, calls]) => ({ name, calls }));

/**
 * The tools called in the shown branch, with their calls, for the find bar's filter; kept
 * until another branch is shown (a search counts them too, so after one this reads nothing).
 */
export async function branchTools(_args, reqId) {
  const v = needView();
  if (!v.tools) {
    const tools = new Map();
    await eachMessage(v, reqId, (_index, _role, parts) => countTools(tools, parts));
    v.tools = toolList(tools);
  }
  return { tools: v.tools };
}

/**
 * The user prompts of the shown branch (message index, first line) and its tools (name,
 * calls); kept until another branch is shown (`select` drops it).
 */
export async function outline(_args, reqId) {
  const v = needView();
  if (v.outline) return v.outline;
  const prompts = [];
  const tools = new Map();
  const count = await eachMessage(v, reqId, (index, role, parts, m) => {
    if (role === 'user') {
      const text = parts.find((p) => p.kind === 'text')?.text;
      const images = Array.isArray(m?.content) ? m.content.filter((b) => b?.type === 'image').length : 0;
      prompts.push({ index, text: text ? oneLine(text, 160) : images ? `(${images === 1 ? 'an image' : `${images} images`})` : '(empty)' });
    }
    countTools(tools, parts);
  });
  v.tools = toolList(tools);
  v.outline = { count, prompts, tools: v.tools };
  return v.outline;
}
