// Keeps a local Garage cluster running for scripts/garage-local: starts it in DIR, writes
// DIR/env (the S3 variables a client needs, as shell `export` lines) and DIR/keeper.pid,
// and stops the cluster on SIGTERM, or by itself after its lifetime (default 15 min), so a
// demo that never says stop leaves nothing running.
// Usage: node garage-keeper.mjs DIR [LIFETIME_SECONDS]
import fs from 'node:fs';
import path from 'node:path';
import { startCluster } from './garage.mjs';

const dir = path.resolve(process.argv[2]);
const lifetime = Number(process.argv[3] ?? 900) * 1000;
const cluster = await startCluster({ dir: path.join(dir, 'nodes') });
const env = { ...cluster.env, AWS_ENDPOINT_URL: cluster.nodes[0].endpoint };
fs.writeFileSync(path.join(dir, 'env.tmp'), Object.entries(env).map(([k, v]) => `export ${k}=${v}\n`).join(''));
fs.renameSync(path.join(dir, 'env.tmp'), path.join(dir, 'env'));
fs.writeFileSync(path.join(dir, 'keeper.pid'), `${process.pid}\n`);
const stop = async () => {
  await cluster.stop();
  fs.rmSync(path.join(dir, 'nodes'), { recursive: true, force: true });
  fs.rmSync(path.join(dir, 'env'), { force: true });
  fs.rmSync(path.join(dir, 'keeper.pid'), { force: true });
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
setTimeout(stop, lifetime);
