// The append timing shared by the hosts' append rows (resource-append.mjs in jco,
// cli-append.mjs over the CLI host): appends 0-1 untimed, the next `reps` the cold
// samples, untimed up to `WARMUP` (a host lives for many appends, and jco's glue only
// runs at full speed after a few hundred calls), then the `reps` timed ones. Each append
// is followed by a flush; `append(message)` and `flush()` may return Promises.
// Returns {appendMs, appendFlushMs, coldAppendMs, coldAppendFlushMs, warmupAppends,
// extra}: `extra[i]` is what `append` and `flush` returned for timed sample i.
export const WARMUP = 500;

export async function appendSamples(reps, append, flush) {
  const out = { appendMs: [], appendFlushMs: [], coldAppendMs: [], coldAppendFlushMs: [], extra: [] };
  const coldFrom = 2;
  const warmupAppends = Math.max(WARMUP, coldFrom + reps);
  for (let i = 0; i < warmupAppends + reps; i++) {
    const message = JSON.stringify({
      role: 'user', content: [{ type: 'text', text: `Benchmark append ${i}: please run the tests again and summarize the failures.` }],
      timestamp: 1_767_700_000_000 + i,
    });
    const t = performance.now();
    const a = await append(message);
    const appended = performance.now() - t;
    const f = await flush();
    const flushed = performance.now() - t;
    if (i >= warmupAppends) {
      out.appendMs.push(appended);
      out.appendFlushMs.push(flushed);
      out.extra.push([a, f]);
    } else if (i >= coldFrom && i < coldFrom + reps) {
      out.coldAppendMs.push(appended);
      out.coldAppendFlushMs.push(flushed);
    }
  }
  return { ...out, warmupAppends };
}
