// The address's query: which session is shown (`?sample=<file>`, `?source=<key>&path=<path>`,
// `?opened=<name>`; none for the default sample). The place in it is the fragment (location.js).

import { state } from './state.js';

/**
 * The address of what is shown. Opening another session is a new history entry (so Back
 * returns to the one before, in the app); anything else replaces the current one.
 */
export function setUrl(params) {
  const url = new URL(location.href);
  for (const k of ['sample', 'source', 'path', 'opened']) url.searchParams.delete(k);
  for (const [k, v] of Object.entries(params)) if (v) url.searchParams.set(k, v);
  if (url.href === location.href) return;
  const other = ['sample', 'source', 'path', 'opened'].some((k) => url.searchParams.get(k) !== new URL(location.href).searchParams.get(k));
  if (other) url.hash = ''; // the place (location.js) was in the other session
  if (other && !state.restoring) history.pushState(null, '', url);
  else history.replaceState(null, '', url);
}
