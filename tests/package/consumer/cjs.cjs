// `require` in Node and Bun: every shipped storage.
const pkg = require('xcsh-session');

import('./every-storage.mjs')
  .then(({ everyStorage }) => everyStorage(pkg))
  .then((seen) => console.log(JSON.stringify(seen)));
