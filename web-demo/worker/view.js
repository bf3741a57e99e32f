// The open session ("view") and what the page has been told about it: {session, src, path,
// name, size, loadMs, text, origin, rows, outline, timings, gen}. One at a
// time; a session being opened becomes the view only once it is built (open.js).
import { fail } from './reply.js';

let view = null;
let gen = 0;

/** A new view's number (`v.gen`): what the page names when it asks for that view's tree. */
export function nextViewGen() {
  return ++gen;
}

/** The open view; fails when no session is open. */
export function needView() {
  if (!view) throw fail('no session is open', 'notFound');
  return view;
}

/** The open view when it can be edited (a session of the browser storage or memory). */
export function needWritable() {
  const v = needView();
  if (!v.src?.writable || !v.session.file) {
    throw fail('This session is read-only: import it into the browser storage (or memory) to edit a copy.', 'readOnly');
  }
  return v;
}

/** Whether `session` is the open view's session. */
export function isOpen(session) {
  return view?.session === session;
}

/** Makes `next` the open view; the previous view's session is freed. */
export function replaceView(next) {
  if (view && view.session !== next.session) {
    try {
      view.session.free();
    } catch {
      /* already freed */
    }
  }
  view = next;
}

/** Closes the open view when it is the session at `path` of `src` (deleted); says whether it was. */
export function closeViewOf(src, path) {
  const closed = Boolean(view && view.src === src && view.session.file === path);
  if (closed) {
    view.session.free();
    view = null;
  }
  return closed;
}
