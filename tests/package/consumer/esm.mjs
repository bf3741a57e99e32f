// `import` in Node, Deno and Bun: both shipped storages.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as pkg from 'xcsh-session';
import { asyncScenario, scenario } from './scenario.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-consumer-'));
const onDisk = scenario(pkg, pkg.nodeStorage(), path.join(dir, 'agent'));
const files = fs.readdirSync(path.join(dir, 'agent'), { recursive: true }).filter((f) => f.endsWith('.jsonl'));
const inMemory = scenario(pkg, pkg.memoryStorage(), '/agent');
const asyncOnDisk = await asyncScenario(pkg, pkg.nodeAsyncStorage(), path.join(dir, 'async-agent'));
fs.rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ onDisk, files: files.length, inMemory, asyncOnDisk }));
