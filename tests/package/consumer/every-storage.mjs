// The scenario over every storage the package ships for Node, Deno and Bun (node: modules:
// not for the browser bundle, which runs scenario.mjs itself).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scenario } from './scenario.mjs';
import { ranges } from './ranges.mjs';

/**
 * The scenario with each shipped storage of Node, Deno and Bun: node:fs (and how many
 * session files it wrote), memory, and node:fs/promises through AsyncSession; and each
 * one's readRange.
 */
export async function everyStorage(pkg) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-consumer-'));
  try {
    const onDisk = await scenario(pkg, pkg.Session, pkg.nodeStorage(), path.join(dir, 'agent'));
    const files = fs.readdirSync(path.join(dir, 'agent'), { recursive: true }).filter((f) => String(f).endsWith('.jsonl'));
    const inMemory = await scenario(pkg, pkg.Session, pkg.memoryStorage(), '/agent');
    const asyncOnDisk = await scenario(pkg, pkg.AsyncSession, pkg.nodeAsyncStorage(), path.join(dir, 'async-agent'));
    const readRange = {
      onDisk: await ranges(pkg.nodeStorage(), path.join(dir, 'ranges')),
      inMemory: await ranges(pkg.memoryStorage(), '/ranges'),
      asyncOnDisk: await ranges(pkg.nodeAsyncStorage(), path.join(dir, 'async-ranges')),
    };
    return { onDisk, files: files.length, inMemory, asyncOnDisk, ranges: readRange };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
