// `xcsh-session/agent/streaming-output`: the agent's `OutputSink` (streaming tool output
// with a bounded tail, spilled whole to an artifact file past `spillThreshold`), checked
// against what the agent's sink does with the same chunks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OutputSink } from '../../pkg/agent-streaming-output.mjs';
import * as agentModule from '../../pkg/agent.mjs';

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-sink-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function dumpOf(chunks, options) {
  const sink = new OutputSink(options);
  for (const chunk of chunks) sink.push(chunk);
  return sink.dump();
}

// ---- the module ----

test('OutputSink comes from the streaming-output module, not the session-manager module', async () => {
  assert.equal(typeof OutputSink, 'function');
  assert.equal('OutputSink' in agentModule, false, 'no clash with the agent tools\' OutputSink');
  const pkg = JSON.parse(fs.readFileSync(new URL('../../pkg/package.json', import.meta.url), 'utf8'));
  assert.deepEqual(pkg.exports['./agent/streaming-output'], {
    types: './agent-streaming-output.d.mts', default: './agent-streaming-output.mjs',
  });
});

// ---- the agent's behaviour, point by point ----

test('the end of a long line stays in the tail, the bash markers with it', async () => {
  // The bash executor's markers after a command whose 100 KB line has no final LF.
  const markers = '__XCSH_CWD__:/tmp/xcsh-test/project-one:__XCSH_CWD_END__\n__XCSH_EXIT__:3:__XCSH_EXIT_END__\n';
  assert.equal(Buffer.byteLength(markers), 91);
  const d = await dumpOf(['x'.repeat(100_000), markers]);
  assert.equal(d.truncated, true);
  assert.ok(d.output.endsWith(`${'x'.repeat(1000)}${markers}`), 'the line\'s end and both markers');
  assert.equal(d.outputBytes, 50 * 1024);
  assert.equal(d.totalBytes, 100_091);
});

test('lines are the LFs plus one: output ending in LF has an empty last line', async () => {
  const d = await dumpOf(['a\nb\n']);
  assert.equal(d.totalLines, 3);
  assert.equal(d.outputLines, 3);
  assert.equal((await dumpOf(['a\nb'])).totalLines, 2);
  assert.equal((await dumpOf([])).totalLines, 0);
});

test('a lone CR is removed, as the agent\'s sanitizeText does (not a line break)', async () => {
  const d = await dumpOf(['10%\r100%\r\ndone\r']);
  assert.equal(d.output, '10%100%\ndone');
  assert.equal(d.totalLines, 2);
});

test('a lone surrogate is removed, and counted as the 3 bytes of U+FFFD', async () => {
  const d = await dumpOf(['a\ud800b\udc00c\u{1f600}']);
  assert.equal(d.output, 'abc\u{1f600}');
  assert.equal(d.totalBytes, Buffer.byteLength('a\ud800b\udc00c\u{1f600}'));
  const masked = await dumpOf(['x\udfff'], { maskSecrets: (s) => s.replace('x', '*') });
  assert.equal(masked.output, '*');
});

test('artifactId is absent when none was given, though the output spilled', async (t) => {
  const artifactPath = path.join(tempDir(t), 'out.log');
  const d = await dumpOf(['abc', 'def'], { artifactPath, spillThreshold: 5 });
  assert.equal(d.truncated, true);
  assert.equal(fs.readFileSync(artifactPath, 'utf8'), 'abcdef');
  assert.equal(d.artifactId, undefined);
});

test('image sequences are kept when the terminal shows images (imageProtocol set)', async () => {
  const sixel = '\u001bPqabc\u001b\\';
  const kitty = '\u001b_Ga=T,f=100;iVBOR\u001b\\';
  const seen = [];
  const kept = await dumpOf([`before\n${sixel}\n${kitty.slice(0, 5)}`, `${kitty.slice(5)}after`], {
    imageProtocol: '\u001bPq', onChunk: (c) => seen.push(c),
  });
  assert.equal(kept.output, `before\n${sixel}\n${kitty}after`);
  assert.equal(seen.length, 2);
  assert.equal((await dumpOf([sixel])).output, '', 'stripped without imageProtocol');
  assert.equal((await dumpOf([sixel], { imageProtocol: null })).output, '', 'null: no images');
});

// ---- what the agent's tests say of its sink ----

test('totals and the notice line, as the agent\'s first OutputSink test', async () => {
  const sink = new OutputSink();
  sink.push('hello\nworld');
  assert.deepEqual(await sink.dump('notice'), {
    output: '[notice]\nhello\nworld', truncated: false, totalLines: 2, totalBytes: 11, outputLines: 2, outputBytes: 11,
  });
});

test('past spillThreshold the tail is the last bytes', async () => {
  const d = await dumpOf(['abc', 'def'], { spillThreshold: 5 });
  assert.deepEqual([d.truncated, d.output, d.totalBytes, d.outputBytes], [true, 'bcdef', 6, 5]);
});

// ---- kept from the sink's own guarantees ----

test('spills long output whole to its artifact, and keeps short output in memory', async (t) => {
  const root = tempDir(t);
  const artifactPath = path.join(root, '0.bash.log');
  const seen = [];
  const sink = new OutputSink({ artifactPath, artifactId: '0', spillThreshold: 1000, onChunk: (c) => seen.push(c) });
  const line = `${'y'.repeat(99)}\n`;
  for (let i = 0; i < 5; i++) sink.push(line);
  assert.equal(fs.existsSync(artifactPath), false, '500 bytes: still in memory');
  for (let i = 0; i < 15; i++) sink.push(line);
  const summary = await sink.dump('exit code 0');
  assert.equal(summary.truncated, true);
  assert.equal(summary.artifactId, '0');
  assert.equal(fs.readFileSync(artifactPath, 'utf8'), line.repeat(20), 'the whole output, in order');
  assert.ok(summary.output.startsWith('[exit code 0]\n'));
  assert.ok(summary.outputBytes <= 1000);
  assert.equal(summary.totalLines, 21);
  assert.equal(summary.totalBytes, 2000);
  assert.equal(seen.length, 20, 'every chunk, unthrottled');
});

test('masks secrets, throttles onChunk and sanitizes escapes split across chunks', async () => {
  const seen = [];
  const sink = new OutputSink({
    maskSecrets: (s) => s.replaceAll('hunter2', '***'), onChunk: (c) => seen.push(c), chunkThrottleMs: 60_000,
  });
  sink.push('pass=hunter2 \u001b[3');
  sink.push('1mred\u001b[0m\r');
  sink.push('\n');
  const summary = await sink.dump();
  assert.equal(summary.output, 'pass=*** red\n');
  assert.deepEqual(seen, ['pass=*** \u001b[3'], 'throttled to the first chunk, masked, raw');
});

test('createInput takes bytes split inside a character', async () => {
  const sink = new OutputSink();
  const writer = sink.createInput().getWriter();
  const bytes = new TextEncoder().encode('héllo\n');
  await writer.write(bytes.slice(0, 2));
  await writer.write(bytes.slice(2));
  await writer.close();
  assert.equal((await sink.dump()).output, 'héllo\n');
});

test('an artifact that cannot be written leaves the tail and says why', async (t) => {
  const sink = new OutputSink({ artifactPath: path.join(tempDir(t), 'no', 'such', 'dir', '0.log'), artifactId: '0', spillThreshold: 10 });
  sink.push('0123456789abcdef\n');
  const summary = await sink.dump();
  assert.equal(summary.truncated, true);
  assert.equal(summary.artifactId, undefined);
  assert.match(summary.artifactError, /no such|ENOENT|not found/i);
});

test('memory stays bounded: a megabyte of output keeps a tail of spillThreshold bytes', async () => {
  const sink = new OutputSink({ spillThreshold: 4096 });
  const chunk = `${'z'.repeat(1023)}\n`;
  for (let i = 0; i < 1024; i++) sink.push(chunk);
  const d = await sink.dump();
  assert.equal(d.outputBytes, 4096);
  assert.equal(d.totalBytes, 1024 * 1024);
});
