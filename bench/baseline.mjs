// The "what a user would do anyway" reference: a straightforward JavaScript build of the
// session context, written the obvious way. Read the file, JSON.parse every line, index
// entries by id in a Map, walk leaf → root, keep the last compaction's range (its summary,
// the entries from firstKeptEntryId up to it, everything after it), resolve image blob
// references, JSON.stringify the result. No lenient-parsing repairs, no migrations, no
// TTSR/MCP/mode state: it does less than the core, never more.
import fs from 'node:fs';

const BLOB = 'blob:sha256:';

function rehydrate(message, blobsDir) {
  const content = message.content;
  if (!Array.isArray(content)) return message;
  for (const block of content) {
    if (block && block.type === 'image' && typeof block.data === 'string' && block.data.startsWith(BLOB)) {
      try {
        block.data = fs.readFileSync(`${blobsDir}/${block.data.slice(BLOB.length)}`).toString('base64');
      } catch {
        // a missing blob keeps its reference
      }
    }
  }
  return message;
}

/** The context of the last entry of a session's JSONL text, as JSON text. */
export function contextJson(text, agentDir) {
  const blobsDir = `${agentDir}/blobs`;
  const byId = new Map();
  let last = null;
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (entry.type === 'session') continue;
    byId.set(entry.id, entry);
    last = entry;
  }

  const path = [];
  const seen = new Set();
  for (let e = last; e && !seen.has(e.id); e = e.parentId == null ? undefined : byId.get(e.parentId)) {
    seen.add(e.id);
    path.push(e);
  }
  path.reverse();

  let thinkingLevel = 'off';
  const models = {};
  let compaction = -1;
  path.forEach((e, i) => {
    if (e.type === 'thinking_level_change') thinkingLevel = e.thinkingLevel ?? 'off';
    else if (e.type === 'model_change' && e.model) models[e.role ?? 'default'] = e.model;
    else if (e.type === 'message' && e.message.role === 'assistant' && e.message.provider && e.message.model)
      models.default = `${e.message.provider}/${e.message.model}`;
    else if (e.type === 'compaction') compaction = i;
  });

  const messages = [];
  const emit = (e) => {
    if (e.type === 'message') messages.push(rehydrate(e.message, blobsDir));
    else if (e.type === 'branch_summary' && e.summary)
      messages.push({ role: 'branchSummary', summary: e.summary, fromId: e.fromId, timestamp: Date.parse(e.timestamp) });
    else if (e.type === 'custom_message')
      messages.push({ role: 'custom', customType: e.customType, content: e.content, display: e.display, details: e.details, attribution: e.attribution, timestamp: Date.parse(e.timestamp) });
  };
  if (compaction >= 0) {
    const c = path[compaction];
    messages.push({ role: 'compactionSummary', summary: c.summary, shortSummary: c.shortSummary, tokensBefore: c.tokensBefore, timestamp: Date.parse(c.timestamp) });
    let kept = false;
    for (let i = 0; i < compaction; i++) {
      if (path[i].id === c.firstKeptEntryId) kept = true;
      if (kept) emit(path[i]);
    }
    for (let i = compaction + 1; i < path.length; i++) emit(path[i]);
  } else {
    path.forEach(emit);
  }
  return JSON.stringify({
    messages,
    thinkingLevel,
    models,
    injectedTtsrRules: [],
    selectedMCPToolNames: [],
    hasPersistedMCPToolSelection: false,
    mode: 'none',
  });
}

export function contextJsonOfFile(file, agentDir) {
  return contextJson(fs.readFileSync(file, 'utf8'), agentDir);
}
