// Message content: text (Markdown, clamped, with internal links), code blocks (highlighted,
// focusable, with a copy button), images and JSON blocks. Tool calls are drawn by the
// `toolCall` renderer the caller passes (tools.js).

import { CLAMP_CHARS, CLAMP_LINES } from './state.js';
import { fmtBytes, fmtCount, h, toast } from './dom.js';
import { highlightInto, renderMarkdown } from './markdown.js';
import { drawVisible } from './lazy.js';

/**
 * Renders a content string or an array of blocks into `body`. `monospace`: text as output
 * (tool results); `full`: nothing clamped (exports); `toolCall(block)`: the element of a
 * tool call block (a JSON block without it).
 */
export function renderContent(body, content, { monospace = false, full = false, toolCall = null } = {}) {
  if (content === undefined || content === null) return;
  const textOpts = monospace ? { monospace, full } : { markdown: true, full };
  if (typeof content === 'string') {
    body.append(clampBlock(content, textOpts));
    return;
  }
  if (!Array.isArray(content)) {
    body.append(jsonDetails('content', content, true));
    return;
  }
  for (const b of content) {
    if (!b || typeof b !== 'object') continue;
    switch (b.type) {
      case 'text':
        if (String(b.text ?? '').length) body.append(clampBlock(String(b.text), textOpts));
        break;
      case 'thinking': {
        const text = String(b.thinking ?? '');
        body.append(
          h(
            'details',
            { class: 'thinking' },
            h('summary', null, h('span', null, 'Thinking'), h('span', { class: 'muted' }, ` · ${fmtCount(text.length, 'char')}${b.redacted ? ' · redacted' : ''}`)),
            clampBlock(text, { markdown: true, full }),
          ),
        );
        break;
      }
      case 'toolCall':
        body.append(toolCall ? toolCall(b) : jsonDetails(`tool call ${b.name ?? ''}`, b, true));
        break;
      case 'image':
        body.append(renderImage(b));
        break;
      default:
        body.append(jsonDetails(`${b.type ?? 'unknown'} block`, b, true));
    }
  }
}

const MIME_RE = /^image\/[a-z0-9.+-]+$/i;

/** An image block as a figure (only `data:image/...;base64`; blob references are named, not loaded). */
export function renderImage(b) {
  const data = typeof b.data === 'string' ? b.data : '';
  const mime = typeof b.mimeType === 'string' && MIME_RE.test(b.mimeType) ? b.mimeType : 'image/png';
  if (!data || data.startsWith('blob:') || !/^[A-Za-z0-9+/=\s_-]+$/.test(data)) {
    return h('div', { class: 'image-missing' }, data.startsWith('blob:') ? `image kept in the blob store (${data.slice(0, 24)}…), not available here` : 'image without data');
  }
  const img = h('img', { alt: `image (${mime})`, loading: 'lazy', decoding: 'async', title: `${mime} · ${fmtBytes(Math.floor((data.length * 3) / 4))} · click to zoom` });
  img.src = `data:${mime};base64,${data.replace(/\s+/g, '')}`;
  img.addEventListener('click', () => img.classList.toggle('zoomed'));
  return h('figure', { class: 'image' }, img, h('figcaption', null, mime));
}

/** A collapsible block of `value` as pretty JSON. */
export function jsonDetails(title, value, open = false) {
  let text;
  try {
    text = JSON.stringify(value, null, 2);
  } catch {
    text = String(value);
  }
  return h('details', { class: 'json-details', open }, h('summary', null, title), clampBlock(text ?? 'undefined', { monospace: true, lines: 30 }));
}

/**
 * A text block that shows the first lines of long content with a button to expand. Only
 * the visible part is put in the DOM until the reader asks for more. `monospace`: a code
 * block (coloured as `lang` if given); `markdown`: Markdown; `full`: never clamped.
 */
export function clampBlock(text, { monospace = false, markdown = false, lines = CLAMP_LINES, lang = '', full = false, label = '' } = {}) {
  const wrap = h('div', { class: monospace ? 'block mono-block' : 'block' });
  const make = (t) => (monospace ? codeBlock(codePre(t, lang), lang, label) : markdown ? renderText(t) : h('div', { class: 'text' }, linkify(t)));
  let cut = -1;
  let count = 0;
  for (let i = 0; !full && i < text.length && i < CLAMP_CHARS * 4; i++) {
    if (text.charCodeAt(i) === 10 && ++count >= lines) {
      cut = i;
      break;
    }
  }
  if (!full && cut < 0 && text.length > CLAMP_CHARS) cut = CLAMP_CHARS;
  if (cut > CLAMP_CHARS) cut = CLAMP_CHARS;
  if (cut < 0) {
    wrap.append(make(text));
    return wrap;
  }
  const totalLines = countLines(text);
  const more = h(
    'button',
    {
      type: 'button',
      class: 'btn btn-small expand',
      onclick: () => {
        // Shown whole: the box grows to the text, no longer capped at a part of the screen.
        wrap.classList.replace('clamped', 'expanded');
        wrap.replaceChildren(make(text));
        drawVisible(wrap, { all: true });
        wrap.querySelector('pre')?.focus();
      },
    },
    `Show all · ${fmtCount(totalLines, 'line')}, ${fmtCount(text.length, 'char')}`,
  );
  wrap.classList.add('clamped');
  wrap.append(make(text.slice(0, cut)), more);
  return wrap;
}

/** A `pre.code` of `text`: coloured as `lang` when known, else with internal links. */
function codePre(text, lang) {
  const pre = h('pre', { class: 'code' });
  if (!(lang && !/\b(?:artifact|agent):\/\//.test(text) && highlightInto(pre, text, lang))) pre.append(linkify(text));
  return pre;
}

/**
 * A code block as the reader gets it: `pre` focusable (Tab, then arrow keys scroll it) and
 * named, with a button that copies its text.
 */
export function codeBlock(pre, lang = '', label = '') {
  const name = label || (lang ? `Code, ${lang}` : 'Code');
  pre.tabIndex = 0;
  pre.setAttribute('role', 'region');
  pre.setAttribute('aria-label', name);
  const copy = h(
    'button',
    {
      type: 'button',
      class: 'btn btn-small code-copy',
      'aria-label': `Copy ${name.charAt(0).toLowerCase()}${name.slice(1)}`,
      title: 'Copy this code',
      onclick: () => copyText(pre.textContent, 'Code copied'),
    },
    'Copy',
  );
  return h('div', { class: 'code-block' }, pre, copy);
}

/** Puts `text` on the clipboard and says so in a toast. */
export async function copyText(text, done = 'Copied') {
  try {
    await navigator.clipboard.writeText(text);
    toast(done, 'ok', 'copy-toast');
    return true;
  } catch (e) {
    toast(`Cannot copy: ${e?.message ?? 'the browser refused'}`, 'error', 'copy-toast');
    return false;
  }
}

function countLines(text) {
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** Markdown text (sanitized; see markdown.js) with internal links and code blocks as above. */
export function renderText(text) {
  return renderMarkdown(String(text ?? ''), { linkify, codeBlock });
}

// artifact://<n> and agent://<id>[/path | ?q=...] (brackets allowed for [0] steps).
const INTERNAL_URL = /\b(?:artifact:\/\/[0-9A-Za-z_-]*|agent:\/\/[^\s"'`<>(){},;\\]+)/g;

/** Text with artifact:// and agent:// URLs turned into buttons that open the linked content. */
export function linkify(text) {
  if (!text.includes('://')) return text;
  const frag = document.createDocumentFragment();
  let last = 0;
  for (const m of text.matchAll(INTERNAL_URL)) {
    let url = m[0];
    // Trailing punctuation belongs to the prose, and so does an unmatched `]`.
    for (;;) {
      if (/[.,:;!?]$/.test(url)) url = url.slice(0, -1);
      else if (url.endsWith(']') && url.split('[').length < url.split(']').length) url = url.slice(0, -1);
      else break;
    }
    if (!url || url.endsWith('://')) continue;
    if (m.index > last) frag.append(text.slice(last, m.index));
    frag.append(h('a', { href: '#', class: 'int-link', dataset: { url }, title: `Open ${url}` }, url));
    last = m.index + url.length;
  }
  if (last === 0) return text;
  if (last < text.length) frag.append(text.slice(last));
  return frag;
}
