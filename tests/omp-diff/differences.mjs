// What the oh-my-pi read differential test (tests/node/omp-read-diff.test.mjs) accepts
// where oh-my-pi reads its own files differently from this package's `Session` (which
// follows xcsh), each with its reason: `field`, `matches(omp, ours, view)` (`view`: the
// whole of oh-my-pi's view of that file). The same differences show in the agent
// differential test (tests/agent-diff/differences.mjs, kind `agent`) from the writing side.
import fs from 'node:fs';
import { replayFiltered } from '../agent-diff/differences.mjs';

export const KNOWN = [
  {
    key: 'messages: oh-my-pi filters the replay',
    field: 'messages',
    // oh-my-pi's buildSessionContext strips tool calls without a result on the path
    // (clearing that turn's thinking signatures, dropping a turn left empty) and drops
    // aborted/error assistant turns with their tool results; xcsh's (this package's)
    // returns the path's messages as stored. Accepted when filtering ours by that rule
    // (agent-diff's replayFiltered) gives oh-my-pi's.
    matches: (omp, ours) => JSON.stringify(ours.map(replayFiltered)) === JSON.stringify(omp),
  },
  {
    key: 'name: oh-my-pi\'s title line',
    field: 'name',
    // oh-my-pi 18 keeps the title in a padded first line ({"type":"title",...}) before
    // the header; xcsh keeps it in the header (`title`), where `Session` reads it, or in
    // session_info entries. The title line is not read: such a session has no name here.
    matches: (omp, ours, view) => ours === null && typeof omp === 'string'
      && JSON.parse(fs.readFileSync(view.file, 'utf8').split('\n', 1)[0]).type === 'title',
  },
  {
    key: 'models.default: oh-my-pi stops inferring it after a model change',
    field: 'models',
    // oh-my-pi infers models.default from assistant messages only until a model_change
    // of role default is on the path; xcsh lets every assistant message set it. Accepted
    // where oh-my-pi's value is that rule's on the leaf's path, the other roles equal.
    matches: (omp, ours, view) => omp.every((models, i) => {
      if (JSON.stringify(models) === JSON.stringify(ours[i])) return true;
      const { default: a, ...restA } = models;
      const { default: b, ...restB } = ours[i];
      return JSON.stringify(restA) === JSON.stringify(restB) && a === defaultAfterChange(view.entries, i) && a !== b;
    }),
  },
  {
    key: 'tree: entries sharing an id',
    field: 'tree',
    // A file where two entries share an id (the scripts' old-N.jsonl): this package's
    // tree holds every entry once; oh-my-pi's maps nodes by id, so the last entry with
    // the id stands in the place of each (the agent differential test's
    // duplicate-ids-tree, from the drop-in's side).
    matches: (omp, ours, view) => new Set(view.entries.map((e) => e.id)).size < view.entries.length,
  },
];

/** oh-my-pi's models.default at contexts[i] (0: the last entry, else entry i - 1 as the
 * leaf): the last default model_change on the path, else the last assistant message's. */
function defaultAfterChange(entries, i) {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const path = [];
  for (let e = i === 0 ? entries.at(-1) : entries[i - 1]; e; e = e.parentId ? byId.get(e.parentId) : undefined) {
    path.unshift(e);
    if (path.length > entries.length) break;
  }
  let model;
  let changed = false;
  for (const e of path) {
    if (e.type === 'model_change' && (e.role ?? 'default') === 'default') {
      model = e.model;
      changed = true;
    } else if (!changed && e.type === 'message' && e.message?.role === 'assistant') {
      model = `${e.message.provider}/${e.message.model}`;
    }
  }
  return model;
}
