// The colour theme: System (the system's prefers-color-scheme), Light or Dark, kept in
// localStorage. A classic (not module) script loaded in <head>, so the choice is on <html>
// (data-theme, read by style.css through color-scheme) before the first paint: no flash of
// the other theme. The Theme menu in the top bar (#theme-select) is wired once the page is
// parsed; another tab's change applies here too.
(() => {
  const KEY = 'xcsh-viewer-theme';
  const root = document.documentElement;

  /** The stored choice: 'light', 'dark' or 'system' (nothing stored, or storage refused). */
  const stored = () => {
    try {
      const v = localStorage.getItem(KEY);
      return v === 'light' || v === 'dark' ? v : 'system';
    } catch {
      return 'system';
    }
  };

  const apply = (theme) => {
    if (theme === 'light' || theme === 'dark') root.dataset.theme = theme;
    else delete root.dataset.theme;
  };

  apply(stored());

  document.addEventListener('DOMContentLoaded', () => {
    const select = document.getElementById('theme-select');
    if (!select) return;
    select.value = stored();
    select.addEventListener('change', () => {
      const theme = select.value === 'light' || select.value === 'dark' ? select.value : 'system';
      try {
        if (theme === 'system') localStorage.removeItem(KEY);
        else localStorage.setItem(KEY, theme);
      } catch {
        /* not kept (storage refused): this page still shows it */
      }
      apply(theme);
    });
    window.addEventListener('storage', (ev) => {
      if (ev.key !== KEY && ev.key !== null) return;
      apply(stored());
      select.value = stored();
    });
  });
})();
