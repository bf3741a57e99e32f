// oh-my-pi's reading of session files (tests/node/omp-read-diff.test.mjs), run under Bun:
//
//   bun tests/omp-diff/read.mjs <oh-my-pi's session-manager.ts> <agentDir>
//
// Every session file under <agentDir> (a session header in its first two lines) is opened by oh-my-pi's own
// `SessionManager.open` and printed as one JSON line: the file, entries, leaf, the tree
// (ids, labels, children), the context at every entry as the leaf (messages, thinking
// level, models) and the session's name.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [modulePath, root] = process.argv.slice(2);
const manager = await import(pathToFileURL(path.resolve(modulePath)).href);
const context = await import(pathToFileURL(path.join(path.dirname(path.resolve(modulePath)), 'session-context.ts')).href);

/** Every file under `dir` with a session header in its first two lines (oh-my-pi 18 puts
 * a `title` record before it); blobs are skipped. */
function sessionFiles(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'blobs') out.push(...sessionFiles(p));
    } else if (fs.readFileSync(p, 'utf8').split('\n', 2).some((l) => l.startsWith('{"type":"session"'))) out.push(p);
  }
  return out.sort();
}

const shape = (node) => ({ id: node.entry.id, label: node.label ?? null, children: node.children.map(shape) });

for (const file of sessionFiles(root)) {
  const m = await manager.SessionManager.open(file, undefined, undefined, { suppressBreadcrumb: true });
  const entries = m.getEntries();
  const contexts = [undefined, ...entries.map((e) => e.id)].map((leaf) => context.buildSessionContext(entries, leaf));
  process.stdout.write(JSON.stringify({
    file,
    entries,
    leaf: m.getLeafId(),
    tree: m.getTree().map(shape),
    messages: contexts.map((c) => c.messages),
    thinkingLevel: contexts.map((c) => c.thinkingLevel),
    models: contexts.map((c) => c.models),
    name: m.getSessionName() ?? null,
  }) + '\n');
  await m.close?.();
}
