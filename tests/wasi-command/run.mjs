// Run the WASI command under jco in Node: `jco transpile --instantiation async` output,
// with @bytecodealliance/preview2-shim as its whole WASI (files, streams, clock, random).
// Like `wasmtime run`, the guest gets the arguments, the preopened directories and the
// environment given here, and nothing else: no storage host code at all.
//
//   node run.mjs JCO_OUT [--dir HOST::GUEST]... [--env NAME=VALUE]... [--] ARGS...
//
// The exit status is the one the command gives to `wasi:cli/exit` (the shim exits the
// process with it), else 0 when `wasi:cli/run` returns ok and 1 when it returns err.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cli, clocks, filesystem, io, random } from '@bytecodealliance/preview2-shim';

const [out, ...rest] = process.argv.slice(2);
const preopens = {};
const env = {};
while (rest.length > 1 && (rest[0] === '--dir' || rest[0] === '--env')) {
  const [flag, value] = rest.splice(0, 2);
  if (flag === '--dir') {
    const [host, guest = host] = value.split('::');
    preopens[guest] = path.resolve(host);
  } else {
    const i = value.indexOf('=');
    env[value.slice(0, i)] = value.slice(i + 1);
  }
}
if (rest[0] === '--') rest.shift();

// A reader that stops reading early (`| head`) ends the output normally, as in the CLI.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code !== 'EPIPE') throw e;
  });
}
filesystem._setPreopens(preopens); // the shim preopens nothing else
cli._setArgs(['xcsh-session', ...rest]);
cli._setEnv(env); // not the Node process's environment
cli._setCwd(undefined); // no initial directory, as wasmtime gives none

const file = path.join(out, 'xcsh_session_wasi_command.js');
const { instantiate } = await import(pathToFileURL(file).href);
const component = await instantiate((name) => WebAssembly.compile(fs.readFileSync(path.join(out, name))), {
  'wasi:cli/environment': cli.environment,
  'wasi:cli/exit': cli.exit,
  'wasi:cli/stdin': cli.stdin,
  'wasi:cli/stdout': cli.stdout,
  'wasi:cli/stderr': cli.stderr,
  'wasi:clocks/wall-clock': clocks.wallClock,
  'wasi:filesystem/preopens': filesystem.preopens,
  'wasi:filesystem/types': filesystem.types,
  'wasi:io/error': io.error,
  'wasi:io/poll': io.poll,
  'wasi:io/streams': io.streams,
  'wasi:random/insecure': random.insecure,
});
try {
  component.run.run(); // jco throws the `err` of the result
  process.exitCode = 0;
} catch (e) {
  if (e?.constructor?.name !== 'ComponentError') throw e;
  process.exitCode = 1;
}
