// A browser app as a user writes it: the default entry, no bundler configuration. It opens
// a sample session and prints its context. No top-level await here either: Vite 5 and 6
// refuse it in their default build target.
import { ready, Session } from 'xcsh-session';
import { show } from './show.mjs';

show(ready, Session);
