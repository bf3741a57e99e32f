// Lazy drawing for the conversation: parts of a message that are costly to draw (Markdown,
// code colours, tool card bodies) are drawn when they come near the screen, so a window of
// 40 messages costs what the reader sees, not what was loaded. `drawVisible` draws at once
// what is on screen (before the first paint); exports draw everything (`withSyncRendering`).

let lazyRoot = null;
let sync = false;
let seen = null;
/** element -> the function that draws it, for elements waiting to come near the screen. */
const jobs = new WeakMap();

/** Draws Markdown and colours code lazily for elements inside `root` (the conversation). */
export function setLazyRoot(root) {
  lazyRoot = root;
  seen?.disconnect();
  seen = null;
}

/** Runs `fn` with everything drawn at once (an export: nothing is on screen to wait for). */
export function withSyncRendering(fn) {
  const was = sync;
  sync = true;
  try {
    return fn();
  } finally {
    sync = was;
  }
}

/**
 * Calls `draw()` when `el` comes near the screen in the lazy root (at once outside it, with
 * no root, or under `withSyncRendering`). `el` has the class `lazy-pending` until then.
 * `cosmetic` (colours): left to the next frame even by `drawVisible`.
 */
export function later(el, draw, { cosmetic = false } = {}) {
  if (sync || !lazyRoot) {
    draw();
    return;
  }
  jobs.set(el, draw);
  el.classList.add('lazy-pending');
  if (cosmetic) el.classList.add('lazy-cosmetic');
  seen ??= new IntersectionObserver(
    (entries) => {
      for (const e of entries) {
        // Not in the conversation (another panel drew it): drawn now.
        if (e.isIntersecting || (e.target.isConnected && !lazyRoot?.contains(e.target))) drawNow(e.target);
      }
    },
    { root: lazyRoot, rootMargin: '600px 0px' },
  );
  seen.observe(el);
}

function drawNow(el) {
  const draw = jobs.get(el);
  seen?.unobserve(el);
  el.classList.remove('lazy-pending', 'lazy-cosmetic');
  if (!draw) return;
  jobs.delete(el);
  draw();
}

/**
 * Draws at once what waits inside `container` (colours excepted): all of it (`all`), or
 * what is in the children of `container` on screen in the lazy root (the messages the
 * reader sees).
 */
export function drawVisible(container, { all = false } = {}) {
  if (!container) return;
  const boxes = all ? [container] : visibleChildren(container);
  for (const box of boxes) {
    for (let el = box.querySelector(PENDING); el; el = box.querySelector(PENDING)) drawNow(el);
  }
}

const PENDING = '.lazy-pending:not(.lazy-cosmetic)';

function visibleChildren(container) {
  if (!lazyRoot) return [container];
  const r = lazyRoot.getBoundingClientRect();
  const out = [];
  for (const child of container.children) {
    const b = child.getBoundingClientRect();
    if (b.bottom >= r.top - 200 && b.top <= r.bottom + 200) out.push(child);
  }
  return out;
}
