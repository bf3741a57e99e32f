// Starts scripts/serve.mjs on a free port for a test or a benchmark and resolves with
// {child, url} once it prints its URL (within 10 s, or the promise rejects with what it
// printed). `root`: the directory served (default web-demo/).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export function startServer({ root } = {}) {
  const args = [path.join(ROOT, 'scripts', 'serve.mjs'), '--port', '0', ...(root ? ['--root', root] : [])];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve.mjs printed no URL within 10 s:\n${out}${err}`)), 10_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/^Serving the session viewer at (http:\/\/127\.0\.0\.1:(\d+)\/)$/m);
      if (!m) return;
      clearTimeout(timer);
      if (m[2] === '0') reject(new Error('serve.mjs printed port 0, not the real one'));
      else resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve.mjs exited with ${code}:\n${out}${err}`));
    });
  });
}
