// The scenario over every storage the package ships for Node, Deno and Bun (node: modules:
// not for the browser bundle, which runs scenario.mjs itself).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scenario } from './scenario.mjs';

/**
 * The scenario with each shipped storage of Node, Deno and Bun: node:fs (and how many
 * session files it wrote), memory, and node:fs/promises through AsyncSession.
 */
export async function everyStorage(pkg) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-consumer-'));
  try {
    const onDisk = await scenario(pkg, pkg.Session, pkg.nodeStorage(), path.join(dir, 'agent'));
    const files = fs.readdirSync(path.join(dir, 'agent'), { recursive: true }).filter((f) => String(f).endsWith('.jsonl'));
    const inMemory = await scenario(pkg, pkg.Session, pkg.memoryStorage(), '/agent');
    const asyncOnDisk = await scenario(pkg, pkg.AsyncSession, pkg.nodeAsyncStorage(), path.join(dir, 'async-agent'));
    return { onDisk, files: files.length, inMemory, asyncOnDisk };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
