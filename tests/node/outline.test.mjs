// Session.outline(): the tree as outline rows in typed columns, what the viewer's tree
// shows (the core makes the order, the previews and each row's totals digest).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Session, FIXTURES, fixture, user, assistant } from './helpers.mjs';

/** Pre-order ids of `tree()` (each entry once), to hold the outline's rows against. */
function treeIds(nodes, out = []) {
  const stack = [...nodes].reverse();
  while (stack.length) {
    const n = stack.pop();
    out.push(n.entry.id);
    stack.push(...[...n.children].reverse());
  }
  return out;
}

test('the outline lists every entry once, in typed columns of one row each', () => {
  for (const name of FIXTURES) {
    const s = Session.fromText(fixture(name));
    const o = s.outline();
    const n = s.entries().length;
    assert.equal(o.ids.length, n, name);
    assert.deepEqual([...o.ids].sort(), treeIds(s.tree()).sort(), `${name}: the tree's entries`);
    for (const [key, type] of [['parent', Int32Array], ['depth', Uint16Array], ['flags', Uint8Array], ['kids', Uint32Array], ['end', Uint32Array], ['kind', Uint16Array]]) {
      assert.ok(o[key] instanceof type && o[key].length === n, `${name}: ${key} is a ${type.name} of ${n}`);
    }
    assert.equal(o.texts.length, n);
    assert.ok(o.texts.every((t) => typeof t === 'string' && t.length <= 140), 'one line of at most 140 each');
    assert.ok([...o.kind].every((k) => Array.isArray(o.kindTable[k]) && o.kindTable[k].length === 2), 'each kind is a [tag, class]');
    for (const key of ['message', 'time', 'input', 'output', 'cacheRead', 'cacheWrite', 'cost', 'model']) assert.equal(o.digests[key].length, n, `digests.${key}`);
    for (let i = 0; i < n; i++) {
      assert.ok(o.parent[i] < i, 'a parent comes before its children');
      assert.ok(o.end[i] > i && o.end[i] <= n, 'a subtree ends after its entry');
    }
    s.free();
  }
});

test('a side branch is listed right under its branch point; labels and totals digests by row', () => {
  const s = Session.inMemory('/w');
  const root = s.appendMessage(user('start'));
  const main = s.appendMessage(assistant('main line'));
  s.appendMessage(user('more'));
  s.appendMessage(assistant('and more'));
  s.branch(root);
  const side = s.appendMessage(user('side question'));
  s.appendLabelChange(side, 'aside');
  const o = s.outline();
  assert.deepEqual(o.ids.slice(0, 3), [root, side, o.ids[2]], 'the side branch (and its label) first under the branch point');
  assert.equal(o.ids[o.ids.length - 1] !== side, true);
  assert.equal(o.flags[0] & 1, 1, 'the root forks');
  assert.equal(o.parent[o.ids.indexOf(main)], 0);
  const row = o.ids.indexOf(side);
  assert.deepEqual(o.labels, [[row, 'aside']]);
  assert.equal(o.texts[row], 'side question');
  assert.deepEqual(o.kindTable[o.kind[row]], ['user', 'user']);
  assert.equal(o.texts[o.ids.indexOf(main)], 'main line');
  assert.equal(o.digests.message[o.ids.indexOf(main)], 2, 'an assistant message');
  assert.equal(o.digests.message[row], 1, 'a message');
  s.free();
});

test('previews read strings only up to previewChars', () => {
  const s = Session.inMemory('/w');
  s.appendMessage(user(`${'a'.repeat(30)} ${'b'.repeat(300)}`));
  assert.equal(s.outline(10).texts[0], 'a'.repeat(10));
  assert.equal(s.outline().texts[0].length, 140);
  s.free();
});

test('outlineBuilder makes the same outline a few rows at a time, and refuses a session changed meanwhile', () => {
  for (const name of FIXTURES) {
    const s = Session.fromText(fixture(name));
    const whole = s.outline();
    const b = s.outlineBuilder();
    assert.equal(b.rows, whole.ids.length, name);
    let steps = 0;
    const seen = [];
    while (!b.step(s, 7)) {
      steps++;
      seen.push(b.done);
    }
    assert.deepEqual(seen, seen.map((_, i) => 7 * (i + 1)), `${name}: each step describes 7 rows`);
    assert.equal(steps, Math.max(0, Math.ceil(whole.ids.length / 7) - 1));
    assert.deepEqual(b.finish(), whole, `${name}: the same outline`);
    s.free();
  }
  const s = Session.inMemory('/w');
  s.appendMessage(user('a question'));
  s.appendMessage(assistant('an answer'));
  const b = s.outlineBuilder();
  s.appendMessage(user('one more'));
  assert.throws(() => b.step(s, 7), /the session changed since its outline was begun/);
  s.free();
});
