// Declarations of `xcsh-session` in Node, Deno and Bun (node.mjs), the same names as in
// browsers (api.d.mts).
export * from './api.mjs';
