// The top bar's Menu button on a narrow screen: the bar then shows the name, "Sessions…" and
// Menu, and Menu opens the rest (history, open a file or a folder, samples, where copies
// go, the theme). Wider, the button is hidden and everything shows (layout.css).

import { $ } from './dom.js';

/** Wires the Menu button (call once at start). */
export function wireMenu() {
  const button = $('menu-toggle');
  const bar = $('topbar');
  const set = (open) => {
    bar.classList.toggle('menu-open', open);
    button.setAttribute('aria-expanded', String(open));
    button.textContent = open ? 'Close menu' : 'Menu';
  };
  button.addEventListener('click', () => set(!bar.classList.contains('menu-open')));
  bar.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && bar.classList.contains('menu-open')) {
      set(false);
      button.focus();
    }
  });
  // Opening something from the menu closes it (the session or the box opens below).
  bar.addEventListener('change', (ev) => {
    if (ev.target.matches('#sample-select, #file-input, #folder-input')) set(false);
  });
  bar.addEventListener('click', (ev) => {
    if (ev.target.closest('#open-picker, #open-history')) set(false);
  });
}
