// Starts the viewer's worker (worker.js) as soon as the page's head is read, a classic
// script: the worker loads the package and reads the browser storage while the page loads
// its modules, so a session named in the address opens sooner. rpc.js talks to it
// (`xcshWorker`); an error before rpc.js listens is kept in `xcshWorker.failed`.
(() => {
  try {
    const w = new Worker(new URL('worker.js', document.baseURI), { type: 'module' });
    w.addEventListener('error', (ev) => {
      w.failed = ev.message || 'it could not start (is web-demo/pkg built? run scripts/build-js)';
    });
    window.xcshWorker = w;
  } catch {
    // rpc.js starts it, and reports what fails.
  }
})();
