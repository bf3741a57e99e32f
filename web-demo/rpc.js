// Worker messaging: posts {id, op, args} to worker.js and resolves each answer; progress reports go to the caller's onProgress.

import { showBanner } from './dom.js';

// Started by worker-start.js in the page's head (while the page loads its modules), else here.
const worker = globalThis.xcshWorker ?? new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const pending = new Map();
let nextId = 1;

worker.addEventListener('message', (ev) => {
  const d = ev.data;
  const p = pending.get(d?.id);
  if (!p) return;
  if (d.type === 'progress') {
    p.onProgress?.(d);
    return;
  }
  pending.delete(d.id);
  if (d.ok) p.resolve(d.result);
  else p.reject(Object.assign(new Error(d.error?.message ?? 'worker error'), { kind: d.error?.kind, code: d.error?.code }));
});
worker.addEventListener('error', (ev) => {
  ev.preventDefault();
  const msg = `The viewer's worker stopped: ${ev.message || 'it could not start (is web-demo/pkg built? run scripts/build-js)'}`;
  for (const p of pending.values()) p.reject(new Error(msg));
  pending.clear();
  showBanner('error', msg);
});

/** Calls an operation of the worker; `onProgress` receives its progress reports. */
export function call(op, args = {}, { onProgress } = {}) {
  const id = nextId++;
  // It failed before this module listened (see worker-start.js).
  if (worker.failed) return Promise.reject(new Error(`The viewer's worker stopped: ${worker.failed}`));
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, onProgress });
    worker.postMessage({ id, op, args });
  });
}
