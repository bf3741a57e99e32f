// node scripts/lib/world-docs.mjs WIT-FILE WORLD COMPONENT
//
// Adds the doc comments of world WORLD (in WIT-FILE) to COMPONENT, in place, as the
// standard `package-docs` custom section that `wasm-tools component wit` (and `jco wit`)
// read back: the world's own docs and the docs of each of its `import`/`export` lines.
//
// Why only the world: `wasm-tools component new` drops every doc comment, and when a
// component is decoded, `package-docs` is applied to its root package only; the
// interfaces it imports and exports (`xcsh:session/storage@0.2.0`, ...) decode as a
// foreign package, whose docs the binary format has no place for. Their docs are in
// wit/xcsh-session.wit, which jco types / wasmtime bindgen read.
import fs from 'node:fs';

const [witFile, worldName, component] = process.argv.slice(2);
if (!component) {
  console.error('usage: world-docs.mjs WIT-FILE WORLD COMPONENT');
  process.exit(2);
}

const lines = fs.readFileSync(witFile, 'utf8').split('\n');
const pkg = /^package\s+([^;@]+)(@[^;]+)?;/m.exec(lines.join('\n'));
if (!pkg) throw new Error(`${witFile}: no package declaration`);
const [namespace, name] = pkg[1].trim().split(':');
const version = pkg[2] ?? '';

/** The `///` lines right above line `i`, joined (none: undefined). */
function docsAbove(i) {
  const docs = [];
  for (let j = i - 1; j >= 0 && /^\s*\/\/\//.test(lines[j]); j--) {
    docs.unshift(lines[j].replace(/^\s*\/\/\/ ?/, ''));
  }
  return docs.length ? docs.join('\n') : undefined;
}

/** A world item's name as the decoder keys it: `ns:pkg/iface@version`. */
function qualified(item) {
  if (item.includes(':')) return item;
  return `${namespace}:${name}/${item}${version}`;
}

const start = lines.findIndex((l) => new RegExp(`^\\s*world\\s+${worldName}\\s*\\{`).test(l));
if (start < 0) throw new Error(`${witFile}: no world ${worldName}`);
const world = { docs: docsAbove(start), interface_import_docs: {}, interface_export_docs: {} };
for (let i = start + 1; i < lines.length && !/^\s*}/.test(lines[i]); i++) {
  const item = /^\s*(import|export)\s+([^;]+);/.exec(lines[i]);
  const docs = item && docsAbove(i);
  if (!docs) continue;
  const map = item[1] === 'import' ? world.interface_import_docs : world.interface_export_docs;
  map[qualified(item[2].trim())] = docs;
}
for (const k of ['interface_import_docs', 'interface_export_docs']) {
  if (!Object.keys(world[k]).length) delete world[k];
}

// A custom section: id 0, size, name (length-prefixed), payload. The payload is the
// package-docs format version 0 (one byte) and its JSON; the decoder names a
// component's world `root`.
const leb = (n) => {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return Buffer.from(out);
};
const sectionName = Buffer.from('package-docs');
const payload = Buffer.concat([Buffer.from([0]), Buffer.from(JSON.stringify({ worlds: { root: world } }))]);
const body = Buffer.concat([leb(sectionName.length), sectionName, payload]);
const bytes = fs.readFileSync(component);
if (bytes.includes(sectionName)) throw new Error(`${component} already has a package-docs section`);
fs.writeFileSync(component, Buffer.concat([bytes, Buffer.from([0]), leb(body.length), body]));
