// Message content: text (clamped, with inline code and internal links), tool calls, images and JSON blocks.

import { CLAMP_CHARS, CLAMP_LINES } from './state.js';
import { fmtBytes, fmtCount, fmtNum, h, shortId } from './dom.js';

/** Renders a content string or an array of blocks into `body`. */
export function renderContent(body, content, { monospace = false } = {}) {
  if (content === undefined || content === null) return;
  if (typeof content === 'string') {
    body.append(monospace ? clampBlock(content, { monospace }) : clampBlock(content, { markdown: true }));
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
        if (String(b.text ?? '').length) body.append(clampBlock(String(b.text), monospace ? { monospace } : { markdown: true }));
        break;
      case 'thinking': {
        const text = String(b.thinking ?? '');
        body.append(
          h(
            'details',
            { class: 'thinking' },
            h('summary', null, h('span', null, 'Thinking'), h('span', { class: 'muted' }, ` · ${fmtCount(text.length, 'char')}${b.redacted ? ' · redacted' : ''}`)),
            clampBlock(text, { markdown: true }),
          ),
        );
        break;
      }
      case 'toolCall':
        body.append(renderToolCall(b));
        break;
      case 'image':
        body.append(renderImage(b));
        break;
      default:
        body.append(jsonDetails(`${b.type ?? 'unknown'} block`, b, true));
    }
  }
}

function renderToolCall(b) {
  let args = b.arguments;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      /* keep the raw string */
    }
  }
  const json = typeof args === 'string' ? args : JSON.stringify(args ?? {}, null, 2);
  return h(
    'div',
    { class: 'tool-call', title: b.id ? `toolCallId ${b.id}` : undefined },
    h('div', { class: 'tool-call-head' }, h('span', { class: 'arrow' }, '→'), h('span', { class: 'tool-name' }, String(b.name ?? 'tool')), b.id ? h('span', { class: 'mono muted' }, shortId(b.id)) : null),
    clampBlock(json, { monospace: true, lines: 16 }),
  );
}

const MIME_RE = /^image\/[a-z0-9.+-]+$/i;

function renderImage(b) {
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
 * the visible part is put in the DOM until the reader asks for more.
 */
export function clampBlock(text, { monospace = false, markdown = false, lines = CLAMP_LINES } = {}) {
  const wrap = h('div', { class: monospace ? 'block mono-block' : 'block' });
  const make = (t) => (monospace ? h('pre', { class: 'code' }, linkify(t)) : markdown ? renderText(t) : h('div', { class: 'text' }, linkify(t)));
  let cut = -1;
  let count = 0;
  for (let i = 0; i < text.length && i < CLAMP_CHARS * 4; i++) {
    if (text.charCodeAt(i) === 10 && ++count >= lines) {
      cut = i;
      break;
    }
  }
  if (cut < 0 && text.length > CLAMP_CHARS) cut = CLAMP_CHARS;
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
        wrap.replaceChildren(make(text));
      },
    },
    `Show all · ${fmtCount(totalLines, 'line')}, ${fmtCount(text.length, 'char')}`,
  );
  wrap.classList.add('clamped');
  wrap.append(make(text.slice(0, cut)), more);
  return wrap;
}

function countLines(text) {
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** Plain text with a little markdown: fenced code, `inline code`, **bold**, # headings. No HTML. */
export function renderText(text) {
  const out = h('div', { class: 'text' });
  const fence = /```([^\n`]*)\n([\s\S]*?)(?:```|$)/g;
  let last = 0;
  let m;
  while ((m = fence.exec(text))) {
    if (m.index > last) out.append(prose(text.slice(last, m.index)));
    out.append(h('pre', { class: 'code', title: m[1] || undefined }, linkify(m[2].replace(/\n$/, ''))));
    last = fence.lastIndex;
    if (m[0].length === 0) break;
  }
  if (last < text.length) out.append(prose(text.slice(last)));
  return out;
}

/** Markdown headings become bold lines; the rest goes through inlineCode. */
function prose(text) {
  const frag = document.createDocumentFragment();
  const heading = /^#{1,6}[ \t]+(.+)$/gm;
  let last = 0;
  let m;
  while ((m = heading.exec(text))) {
    if (m.index > last) frag.append(inlineCode(text.slice(last, m.index)));
    frag.append(h('span', { class: 'md-h' }, inlineCode(m[1])));
    last = heading.lastIndex;
  }
  if (last < text.length) frag.append(inlineCode(text.slice(last)));
  return frag;
}

function inlineCode(text) {
  const frag = document.createDocumentFragment();
  const parts = text.split(/(`[^`\n]+`|\*\*[^*\n]+\*\*)/g);
  for (const p of parts) {
    if (p.length > 2 && p.startsWith('`') && p.endsWith('`')) frag.append(h('code', null, linkify(p.slice(1, -1))));
    else if (p.length > 4 && p.startsWith('**') && p.endsWith('**')) frag.append(h('strong', null, linkify(p.slice(2, -2))));
    else if (p) frag.append(linkify(p));
  }
  return frag;
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
