// Export of the open branch: the whole branch (asked of the worker, not just the loaded
// window) as Markdown, as one self-contained HTML page (the viewer's rendering, sanitized,
// CSS inline, no scripts, a Content-Security-Policy that loads nothing), or as the package's
// context JSON exactly as `Session.contextJson()` returns it. Files are saved through a Blob
// and an `<a download>`.

import { state } from './state.js';
import { call } from './rpc.js';
import { $, errMsg, fmtTime, h, toast } from './dom.js';
import { clampBlock, renderContent, renderText } from './content.js';
import { attachToolResult, renderLoneToolResult, renderToolCall, withOwnToolCards } from './tools.js';
import { branchToMarkdown, messageTitle } from './to-markdown.js';
import { withSyncRendering } from './lazy.js';

const KINDS = {
  markdown: { ext: 'md', type: 'text/markdown;charset=utf-8', label: 'Markdown' },
  html: { ext: 'html', type: 'text/html;charset=utf-8', label: 'HTML page' },
  json: { ext: 'json', type: 'application/json;charset=utf-8', label: 'context JSON' },
};

/** Wires the Export menu (`#export-menu`): one button per format. */
export function wireExport() {
  const menu = $('export-menu');
  if (!menu) return;
  menu.addEventListener('click', async (ev) => {
    const btn = ev.target.closest('button[data-export]');
    if (!btn) return;
    menu.open = false;
    menu.querySelector('summary')?.focus();
    await exportBranch(btn.dataset.export);
  });
  menu.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && menu.open) {
      ev.stopPropagation();
      menu.open = false;
      menu.querySelector('summary')?.focus();
    }
  });
  document.addEventListener('click', (ev) => {
    if (menu.open && !menu.contains(ev.target)) menu.open = false;
  });
}

/** Saves the open branch as `kind` (markdown, html, json). */
export async function exportBranch(kind) {
  const k = KINDS[kind];
  if (!k || !state.view) return;
  try {
    const branch = await call('exportBranch', {});
    const base = fileBase(branch);
    let text;
    if (kind === 'json') text = branch.json;
    else {
      const messages = JSON.parse(branch.json).messages ?? [];
      text = kind === 'markdown' ? branchToMarkdown(messages, { title: branch.title || base, facts: facts(branch, messages) }) : await branchToHtml(messages, branch, base);
    }
    download(`${base}.${k.ext}`, text, k.type);
    toast(`Saved the branch as ${k.label} (${base}.${k.ext})`, 'ok', 'export-toast');
  } catch (e) {
    toast(`Cannot export: ${errMsg(e)}`, 'error', 'export-toast');
  }
}

function fileBase(branch) {
  const name = String(branch.name ?? 'session').replace(/\.jsonl?$/i, '');
  const leaf = branch.leafId ? `-${String(branch.leafId).slice(0, 8)}` : '';
  return `${name}${leaf}`.replace(/[^\w.-]+/g, '_').slice(0, 120) || 'session';
}

function facts(branch, messages) {
  return [
    branch.sessionId ? `Session ${branch.sessionId}` : '',
    branch.cwd ? `Directory ${branch.cwd}` : '',
    branch.leafId ? `Branch ending at entry ${branch.leafId}` : '',
    `${messages.length} messages`,
    `Exported ${fmtTime(Date.now())} UTC`,
  ].filter(Boolean);
}

/** Saves `text` as a file named `name` (Blob + <a download>). */
export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

async function cssText(path) {
  try {
    const res = await fetch(path);
    return res.ok ? await res.text() : '';
  } catch {
    return '';
  }
}

/**
 * The branch as one HTML page: the viewer's own rendering of every message (nothing
 * clamped), stripped of buttons and internal links, with the page's CSS inline.
 */
async function branchToHtml(messages, branch, base) {
  const list = h('div', { class: 'msg-list' });
  withSyncRendering(() =>
    withOwnToolCards(() =>
      messages.forEach((m, i) => {
        const el = exportMessage(m, i);
        if (el) list.append(el);
      }),
    ),
  );
  // Static page: no controls, internal links as plain text, every card open.
  for (const b of list.querySelectorAll('button')) b.remove();
  for (const a of list.querySelectorAll('a.int-link')) a.replaceWith(h('span', { class: 'int-link' }, a.textContent));
  for (const el of list.querySelectorAll('[tabindex]')) el.removeAttribute('tabindex');
  for (const d of list.querySelectorAll('details.tool-card')) d.open = true;
  const [style, content, theme] = await Promise.all([cssText('style.css'), cssText('content.css'), cssText('vendor/highlight/theme.css')]);
  const title = branch.title || base;
  const factList = h('ul', { class: 'export-facts' }, facts(branch, messages).map((f) => h('li', null, f)));
  const doc = document.implementation.createHTMLDocument(title);
  doc.documentElement.lang = 'en';
  const csp = doc.createElement('meta');
  csp.httpEquiv = 'Content-Security-Policy';
  csp.content = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";
  const charset = doc.createElement('meta');
  charset.setAttribute('charset', 'utf-8');
  const viewport = doc.createElement('meta');
  viewport.name = 'viewport';
  viewport.content = 'width=device-width, initial-scale=1';
  const css = doc.createElement('style');
  // A block body: in the viewer's column flex body, `margin: 0 auto` would size the page to
  // its widest code line (980 px on a 390 px phone); a block takes the screen's width. A
  // message's heading (role and model) wraps on a narrow screen.
  css.textContent = `${style}\n${content}\n${theme}\nbody { display: block; height: auto; overflow: auto; } .export-page { max-width: 980px; margin: 0 auto; padding: 16px; } .msg { content-visibility: visible; } .msg-head .msg-title { flex: 0 1 auto; min-width: 0; display: block; overflow-wrap: anywhere; }`;
  doc.head.prepend(charset, csp, viewport);
  doc.head.append(css);
  const main = doc.createElement('main');
  main.className = 'export-page conversation';
  main.append(doc.importNode(h('h1', null, title), true), doc.importNode(factList, true), doc.importNode(list, true));
  doc.body.append(main);
  return `<!doctype html>\n${doc.documentElement.outerHTML}\n`;
}

function exportMessage(m, i) {
  const opts = { full: true, toolCall: (b) => renderToolCall(b, { full: true }) };
  if (m && m.role === 'toolResult' && attachToolResult(m, i, { full: true })) return null;
  const body = h('div', { class: 'msg-body' });
  const role = typeof m?.role === 'string' ? m.role : 'other';
  if (!m || typeof m !== 'object') body.append(clampBlock(String(m), { monospace: true, full: true }));
  else if (role === 'toolResult') body.append(renderLoneToolResult(m, { full: true }));
  else if (role === 'branchSummary') body.append(renderText(m.summary ?? ''));
  else if (role === 'compactionSummary') body.append(clampBlock(String(m.summary ?? ''), { markdown: true, full: true }));
  else if (role === 'bashExecution') {
    body.append(clampBlock(`$ ${m.command ?? ''}`, { monospace: true, lang: 'bash', full: true }));
    if (m.output) body.append(clampBlock(String(m.output), { monospace: true, full: true }));
  } else {
    renderContent(body, m.content, opts);
    if (m.errorMessage) body.append(h('div', { class: 'error-box' }, String(m.errorMessage)));
  }
  for (const d of body.querySelectorAll('details.thinking')) d.open = true;
  const known = ['user', 'assistant', 'toolResult', 'custom', 'branchSummary', 'compactionSummary', 'bashExecution'].includes(role);
  return h(
    'article',
    { class: `msg role-${known ? role : 'other'}${m?.isError ? ' is-error' : ''}` },
    h('header', { class: 'msg-head' }, h('h2', { class: 'msg-title' }, h('span', { class: 'role' }, m && typeof m === 'object' ? messageTitle(m) : 'Invalid message'), ` #${i + 1}`), m?.timestamp !== undefined ? h('span', { class: 'msg-meta' }, h('time', null, fmtTime(m.timestamp))) : null),
    body,
  );
}
