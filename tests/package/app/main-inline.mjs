// The same app over `xcsh-session/inline`: the .wasm inside the JavaScript, for bundlers
// that emit no asset for it (esbuild, Rollup).
import { ready, Session } from 'xcsh-session/inline';
import { show } from './show.mjs';

show(ready, Session);
