#!/usr/bin/env node
// A tiny static file server for the in-browser session viewer (web-demo/), with no
// dependencies. Listens on 127.0.0.1 only.
//
//   node scripts/serve.mjs [--port N] [--root DIR]
//
// The port comes from --port, else $PORT, else 8080; `--port 0` picks a free port. The
// first line printed to stdout is always `Serving the session viewer at <url>` (tests read
// it). SIGINT / SIGTERM close the server and exit with status 0.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));

function parseArgs(argv) {
  const opts = { port: process.env.PORT ?? '8080', root: resolve(here, '..', 'web-demo') };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.includes('=') ? a.split(/=(.*)/s, 2) : [a, undefined];
    const value = () => inline ?? argv[++i];
    if (flag === '--port' || flag === '-p') opts.port = value();
    else if (flag === '--root') opts.root = resolve(value());
    else if (flag === '--help' || flag === '-h') {
      console.log('usage: node scripts/serve.mjs [--port N] [--root DIR]   (default port: $PORT or 8080; 0 = any free port)');
      process.exit(0);
    } else {
      console.error(`serve.mjs: unknown argument ${a}`);
      process.exit(2);
    }
  }
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`serve.mjs: invalid port ${JSON.stringify(opts.port)}`);
    process.exit(2);
  }
  return { ...opts, port };
}

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.jsonl': 'application/x-ndjson; charset=utf-8',
  '.wasm': 'application/wasm',
  '.map': 'application/json; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

const { port, root } = parseArgs(process.argv.slice(2));

function send(res, status, text) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(text);
}

const server = createServer(async (req, res) => {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return send(res, 405, 'Method not allowed\n');
  }
  let pathname;
  try {
    pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  } catch {
    return send(res, 400, 'Bad request\n');
  }
  if (pathname.includes('\0')) return send(res, 400, 'Bad request\n');
  // Resolve inside root only; `normalize` collapses any `..` before the check.
  let file = normalize(join(root, pathname));
  if (file !== root && !file.startsWith(root + sep)) return send(res, 403, 'Forbidden\n');
  try {
    let info = await stat(file);
    if (info.isDirectory()) {
      if (!pathname.endsWith('/')) {
        res.writeHead(301, { Location: pathname + '/' });
        return res.end();
      }
      file = join(file, 'index.html');
      info = await stat(file);
    }
    if (!info.isFile()) return send(res, 404, 'Not found\n');
    res.writeHead(200, {
      'Content-Type': MIME[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'Content-Length': info.size,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file)
      .on('error', () => res.destroy())
      .pipe(res);
  } catch {
    send(res, 404, 'Not found\n');
  }
});

server.on('error', (err) => {
  console.error(`serve.mjs: cannot listen on 127.0.0.1:${port}: ${err.message}`);
  process.exit(1);
});

server.listen(port, '127.0.0.1', () => {
  const actual = server.address().port;
  console.log(`Serving the session viewer at http://127.0.0.1:${actual}/`);
});

function shutdown(signal) {
  server.close(() => process.exit(0));
  server.closeAllConnections?.();
  // Do not hang on a stuck connection.
  setTimeout(() => process.exit(0), 1000).unref();
  process.stderr.write(`\nserve.mjs: ${signal}, stopping\n`);
}
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));
