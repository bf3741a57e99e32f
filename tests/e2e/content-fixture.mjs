// A session made for the content tests (content, export): Markdown of every kind, a code
// block, tool calls of the shapes the real fixtures use (bash, edit with oldText/newText and
// its details.diff, read), and 85 messages so the conversation needs three windows of 40,
// with two call/result pairs split across window edges:
//   #40 (index 39) calls tA, #41 (index 40) is its result: across the first windows from the start;
//   #45 (index 44) calls tB, #46 (index 45) is its result: across the window from the end.

let clock = Date.UTC(2026, 2, 1, 9, 0, 0);

export const LONG_LINE = `const value = ${'"abcdefghij" + '.repeat(40)}"end";`;

export const MARKDOWN = [
  'Here is the plan:',
  '',
  '- first item',
  '- second item with `inline code`',
  '',
  '1. step one',
  '2. step two',
  '',
  '| name | value |',
  '|------|------:|',
  '| alpha | 1 |',
  '| beta | 2 |',
  '',
  'See https://example.com/docs and the log at artifact://0.',
  '',
  '```python',
  'def greet(name):',
  '    return f"hello {name}"  # a comment',
  '```',
  '',
  '```js',
  LONG_LINE,
  '```',
].join('\n');

function entry(i, message) {
  clock += 1000;
  return { type: 'message', id: `c0ffee${String(i).padStart(2, '0')}`, parentId: i === 0 ? null : `c0ffee${String(i - 1).padStart(2, '0')}`, timestamp: new Date(clock).toISOString(), message: { ...message, timestamp: clock } };
}

const assistant = (content) => ({ role: 'assistant', content, api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5', usage: { input: 10, output: 5 }, stopReason: 'toolUse' });
const result = (id, toolName, text, extra = {}) => ({ role: 'toolResult', toolCallId: id, toolName, content: [{ type: 'text', text }], isError: false, ...extra });

/** The messages of the session, in order (index = message number - 1). */
export function contentMessages() {
  const m = [];
  m.push({ role: 'user', content: MARKDOWN });
  m.push(
    assistant([
      { type: 'thinking', thinking: 'The **plan** is fine.' },
      { type: 'text', text: 'I will run the tests, fix the file and read it back.' },
      { type: 'toolCall', id: 'tBash', name: 'bash', arguments: { command: 'cargo test --quiet 2>&1 | tail -n 5', timeout: 120 } },
    ]),
  );
  m.push(result('tBash', 'bash', 'test result: ok. 42 passed; 0 failed'));
  m.push(
    assistant([
      { type: 'toolCall', id: 'tEdit', name: 'edit', arguments: { path: 'src/lib.rs', oldText: 'fn add(a: i32, b: i32) -> i32 {\n    a - b\n}', newText: 'fn add(a: i32, b: i32) -> i32 {\n    a + b\n}' } },
    ]),
  );
  m.push(result('tEdit', 'edit', 'Successfully replaced text in src/lib.rs.', { details: { diff: '  1 fn add(a: i32, b: i32) -> i32 {\n- 2     a - b\n+ 2     a + b\n  3 }' } }));
  m.push(assistant([{ type: 'toolCall', id: 'tRead', name: 'read', arguments: { path: 'src/lib.rs', offset: 1, limit: 20 } }]));
  m.push(result('tRead', 'read', 'fn add(a: i32, b: i32) -> i32 {\n    a + b\n}'));
  while (m.length < 39) m.push(m.length % 2 ? assistant([{ type: 'text', text: `filler answer ${m.length + 1}` }]) : { role: 'user', content: `filler question ${m.length + 1}` });
  m.push(assistant([{ type: 'toolCall', id: 'tA', name: 'bash', arguments: { command: 'echo across-the-first-window' } }]));
  m.push(result('tA', 'bash', 'across-the-first-window'));
  while (m.length < 44) m.push(m.length % 2 ? assistant([{ type: 'text', text: `filler answer ${m.length + 1}` }]) : { role: 'user', content: `filler question ${m.length + 1}` });
  m.push(assistant([{ type: 'toolCall', id: 'tB', name: 'bash', arguments: { command: 'echo across-the-last-window' } }]));
  m.push(result('tB', 'bash', 'across-the-last-window'));
  while (m.length < 84) m.push(m.length % 2 ? assistant([{ type: 'text', text: `filler answer ${m.length + 1}` }]) : { role: 'user', content: `filler question ${m.length + 1}` });
  m.push({ role: 'user', content: 'the last message of the branch' });
  return m;
}

/** The session file's text (JSONL, format v3). */
export function contentSession() {
  clock = Date.UTC(2026, 2, 1, 9, 0, 0);
  const head = { type: 'session', version: 3, id: 'c0ffee00c0ffee00', timestamp: new Date(clock).toISOString(), cwd: '/work/content', title: 'Content rendering demo' };
  return [head, ...contentMessages().map((msg, i) => entry(i, msg))].map((e) => JSON.stringify(e)).join('\n') + '\n';
}
