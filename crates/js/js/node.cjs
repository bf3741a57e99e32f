// `require('xcsh-session')`: the ES module entry (node.mjs), loaded by Node's require of
// ES modules (Node 20.19+ and 22.12+; Bun and Deno too). node.mjs has no top-level await,
// so it loads synchronously.
module.exports = require('./node.mjs');
