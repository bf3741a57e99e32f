// The tree of the open session as outline rows in columns (typed arrays, cheap to send),
// and what the worker keeps of them to build contexts (`v.rows`: ids, parents, kinds,
// the totals' digest of each entry).
import { describeEntry, PREVIEW_CHARS } from '../describe.js';
import { entryDigest } from '../totals.js';
import { checkpoint, progress } from './reply.js';

/** Subtree sizes (entries), bottom-up without recursion: a fork lists its smaller branches first. Returns the number of entries. */
function subtreeSizes(roots) {
  const order = [];
  const stack = [...roots];
  while (stack.length) {
    const node = stack.pop();
    if (!node?.entry) continue;
    order.push(node);
    if (Array.isArray(node.children)) for (const c of node.children) stack.push(c);
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i];
    let size = 1;
    if (Array.isArray(node.children)) for (const c of node.children) size += c?.size ?? 0;
    node.size = size;
  }
  return order.length;
}

const bySize = (a, b) => (a?.size ?? 0) - (b?.size ?? 0);

/**
 * The tree as outline rows in columns (cheap to send), depth first: ids, parent row, depth,
 * flags (1 fork, 2 first of siblings' branch, 4 last sibling), children count, end (the row
 * after the entry's subtree), kind (tag/class), preview text, labels. At a fork the smaller
 * branches come first, so a side branch is listed right under its branch point and the
 * longest line goes on below it. Iterative: linear sessions nest thousands deep.
 */
export async function buildRows(v, reqId) {
  // Previews and totals read no string past its first PREVIEW_CHARS characters: the
  // outline cuts the rest (a real 100 MB session: 104 MB of tree JSON → 47 MB).
  const json = v.session.treeJson(PREVIEW_CHARS);
  await checkpoint(reqId);
  const roots = JSON.parse(json);
  await checkpoint(reqId);
  const total = subtreeSizes(roots);
  const ids = [];
  const texts = [];
  const kindsOf = new Map();
  const kindTable = [];
  const parent = [];
  const depth = [];
  const flags = [];
  const kids = [];
  const end = [];
  const kind = [];
  const labels = [];
  const digests = []; // per row: what the session totals need (totals.js)
  const stack = [];
  const pushKids = (list, d, fork, parentRow) => {
    const sorted = list.length > 1 ? list.slice().sort(bySize) : list;
    for (let i = sorted.length - 1; i >= 0; i--) stack.push({ node: sorted[i], depth: d, branchStart: fork, last: i === sorted.length - 1, parentRow });
  };
  pushKids(roots, 0, roots.length > 1, -1);
  while (stack.length) {
    const { node, depth: d, branchStart, last, parentRow } = stack.pop();
    if (!node || !node.entry) continue;
    const children = Array.isArray(node.children) ? node.children : [];
    const fork = children.length > 1;
    const row = ids.length;
    if ((row & 8191) === 8191) {
      progress(reqId, 'tree', row, total);
      if ((row & 32767) === 32767) await checkpoint(reqId);
    }
    const { tag, cls, text } = describeEntry(node.entry);
    const k = `${tag}\u0000${cls}`;
    let ki = kindsOf.get(k);
    if (ki === undefined) {
      ki = kindTable.length;
      kindsOf.set(k, ki);
      kindTable.push([tag, cls]);
    }
    ids.push(String(node.entry.id));
    texts.push(text);
    parent.push(parentRow);
    depth.push(d);
    flags.push((fork ? 1 : 0) | (branchStart ? 2 : 0) | (last ? 4 : 0));
    kids.push(children.length);
    end.push(row + node.size);
    kind.push(ki);
    digests.push(entryDigest(node.entry));
    if (node.label !== undefined && node.label !== null) labels.push([row, String(node.label)]);
    node.entry = null; // let the big tree go as we walk it
    pushKids(children, fork ? d + 1 : d, fork, row);
  }
  const kindArr = Uint16Array.from(kind);
  v.rows = { ids, digests, parent: Int32Array.from(parent), kind: kindArr, tags: kindTable.map(([tag]) => tag), index: new Map(ids.map((id, i) => [id, i])) };
  return {
    ids,
    texts,
    parent: Int32Array.from(parent),
    depth: Uint16Array.from(depth, (d) => Math.min(d, 65535)),
    flags: Uint8Array.from(flags),
    kids: Uint32Array.from(kids),
    end: Uint32Array.from(end),
    kind: Uint16Array.from(kindArr),
    kindTable,
    labels,
  };
}
