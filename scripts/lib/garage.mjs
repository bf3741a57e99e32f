// A Garage cluster on loopback (the sync tier's, scripts/garage-local's): N nodes (replication 3 by default), each
// with its own ports and directories under `dir`, a bucket and a key. Nodes can be killed,
// stopped and started again; `stop()` ends them all. Garage comes from the tool cache
// (scripts/setup test installs it).
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const TOOLS = process.env.XCSH_TOOLS_DIR || path.join(os.homedir(), '.cache', 'xcsh-session', 'tools');
export const GARAGE = path.join(TOOLS, 'garage', 'bin', 'garage');

/** A free loopback port (closed again at once; Garage binds it right after). */
async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Waits until `ok()` is true (polling every 50 ms), at most `ms`. */
export async function until(ok, what, ms = 60_000) {
  const t0 = Date.now();
  for (;;) {
    if (await ok()) return;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startCluster({ dir, nodes = 3, replication = 3 }) {
  if (!fs.existsSync(GARAGE)) throw new Error(`garage is missing (${GARAGE}): run scripts/setup test`);
  const secret = crypto.randomBytes(32).toString('hex');
  const list = [];
  for (let i = 0; i < nodes; i++) {
    const home = path.join(dir, `node${i}`);
    fs.mkdirSync(home, { recursive: true });
    const [rpc, s3, admin] = [await freePort(), await freePort(), await freePort()];
    const config = path.join(home, 'garage.toml');
    fs.writeFileSync(config, [
      `metadata_dir = "${home}/meta"`,
      `data_dir = "${home}/data"`,
      'db_engine = "lmdb"',
      `replication_factor = ${replication}`,
      `rpc_bind_addr = "127.0.0.1:${rpc}"`,
      `rpc_public_addr = "127.0.0.1:${rpc}"`,
      `rpc_secret = "${secret}"`,
      '[s3_api]',
      's3_region = "garage"',
      `api_bind_addr = "127.0.0.1:${s3}"`,
      'root_domain = ".s3.garage.localhost"',
      '[admin]',
      `api_bind_addr = "127.0.0.1:${admin}"`,
    ].join('\n') + '\n', { mode: 0o600 });
    list.push({ home, config, rpc, s3, endpoint: `http://127.0.0.1:${s3}`, child: null });
  }
  const cli = (node, args) => {
    const r = spawnSync(GARAGE, ['-c', node.config, ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`garage ${args.join(' ')}: ${r.stderr || r.stdout}`);
    return r.stdout;
  };
  const start = (node) => {
    const log = fs.openSync(path.join(node.home, 'log'), 'a');
    node.child = spawn(GARAGE, ['-c', node.config, 'server'], { stdio: ['ignore', log, log] });
    node.exited = new Promise((r) => node.child.once('exit', r));
  };
  const listening = (node) => new Promise((resolve) => {
    const s = net.connect(node.s3, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
  for (const n of list) start(n);
  const ids = [];
  for (const n of list) {
    await until(() => { try { ids.push(cli(n, ['node', 'id', '-q']).trim()); return true; } catch { return false; } }, 'a node id');
  }
  for (const id of ids.slice(1)) cli(list[0], ['node', 'connect', id]);
  for (const id of ids) cli(list[0], ['layout', 'assign', '-z', 'dc1', '-c', '100M', id.slice(0, 16)]);
  cli(list[0], ['layout', 'apply', '--version', '1']);
  await until(() => { try { cli(list[0], ['bucket', 'create', 'sync-test']); return true; } catch { return false; } }, 'the layout');
  const key = cli(list[0], ['key', 'create', 'sync-key']);
  const keyId = /Key ID:\s+(\S+)/.exec(key)[1];
  const secretKey = /Secret key:\s+(\S+)/.exec(key)[1];
  cli(list[0], ['bucket', 'allow', '--read', '--write', '--owner', 'sync-test', '--key', 'sync-key']);
  for (const n of list) await until(() => listening(n), `node ${n.s3} listening`);

  const cluster = {
    nodes: list,
    bucket: 'sync-test',
    /** The S3 variables a client needs (no endpoint: each test says which node). */
    env: { AWS_ACCESS_KEY_ID: keyId, AWS_SECRET_ACCESS_KEY: secretKey, AWS_REGION: 'garage' },
    /** Objects in the bucket, as Garage counts them. */
    objects: () => Number(/Objects:\s+(\d+)/.exec(cli(list[0], ['bucket', 'info', 'sync-test']))?.[1] ?? NaN),
    async kill(i) {
      list[i].child.kill('SIGKILL');
      await list[i].exited;
    },
    async stopAll() {
      for (const n of list) n.child?.kill('SIGTERM');
      await Promise.all(list.map((n) => n.exited));
    },
    async start(i) {
      start(list[i]);
      await until(() => listening(list[i]), `node ${i} listening again`);
      await cluster.healthy();
    },
    /** Waits until every node sees every other connected (after a restart); asks the
     * first node to connect to the others meanwhile, as a restarted node may wait long
     * before it tries again by itself. */
    async healthy() {
      await until(() => list.every((n) => {
        for (const id of ids.slice(1)) {
          try { cli(list[0], ['node', 'connect', id]); } catch { /* not up yet */ }
        }
        try {
          const out = cli(n, ['status']);
          return !/FAILED NODES/.test(out) && (out.match(/127\.0\.0\.1:\d+/g) ?? []).length === list.length;
        } catch {
          return false;
        }
      }), 'every node connected');
    },
    async startAll() {
      for (const n of list) start(n);
      for (const n of list) await until(() => listening(n), `node ${n.s3} listening again`);
      await cluster.healthy();
    },
    async stop() {
      for (const n of list) n.child?.kill('SIGKILL');
      await Promise.all(list.map((n) => n.exited));
    },
  };
  return cluster;
}

/**
 * A TCP proxy in front of `port` that can hold the client's requests: `holdAfter(n)` lets
 * n more S3 requests through (counted by their request lines) and then holds every byte
 * until `release()`. A sync can so be stopped between two requests, wherever the test
 * wants, without a timer.
 */
export async function gate(port) {
  let budget = Infinity;
  let requests = 0;
  const queues = new Set(); // connections with bytes held, each flushed in order
  const waiters = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.pipe(client);
    const conn = { queue: [], flush() { for (const c of this.queue.splice(0)) if (!upstream.destroyed) upstream.write(c); } };
    client.on('data', (chunk) => {
      const n = (chunk.toString('latin1').match(/^(GET|PUT|HEAD|POST|DELETE) \//gm) ?? []).length;
      if (conn.queue.length > 0 || (n > 0 && budget <= 0)) {
        conn.queue.push(chunk);
        queues.add(conn);
        for (const w of waiters.splice(0)) w();
        return;
      }
      requests += n;
      budget -= n;
      upstream.write(chunk);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    requests: () => requests,
    holdAfter(n) { budget = n; },
    /** Resolves once a request is being held. */
    held: () => new Promise((r) => (queues.size ? r() : waiters.push(r))),
    release() {
      budget = Infinity;
      for (const c of queues) c.flush();
      queues.clear();
    },
    close: () => new Promise((r) => server.close(r)),
  };
}
