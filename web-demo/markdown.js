// Markdown of session text: marked (GFM) -> DOMPurify (strict allow-list) -> DOM, then
// code blocks highlighted by highlight.js, links made safe and artifact:// / agent:// URLs
// turned into the viewer's internal links. The three libraries are vendored in vendor/
// (scripts/build-web-vendor, pinned in package.json); without them text is shown plain.
//
// Session text is hostile input: raw HTML in it is shown as text (never parsed), images
// become links (nothing is fetched), and whatever marked emits goes through DOMPurify with
// only the tags and attributes below; links keep http(s), mailto and the internal schemes.
//
// Inside the conversation a text block starts as plain text (internal links already
// working) and becomes Markdown when it comes near the screen, and a code block is coloured
// when it does (lazy.js).

import { h } from './dom.js';
import { later } from './lazy.js';

const libs = await Promise.all([
  import('./vendor/marked/marked.esm.js'),
  import('./vendor/dompurify/purify.es.mjs'),
  import('./vendor/highlight/highlight.min.js'),
]).catch(() => null);

/** True when marked, DOMPurify and highlight.js are loaded (vendor/ is there). */
export const markdownAvailable = Boolean(libs);

const HIGHLIGHT_MAX_CHARS = 20_000; // larger code blocks are shown without colours
const AUTO_DETECT_MAX_CHARS = 2_000; // unlabelled code blocks are auto-detected up to this size

const ALLOWED_TAGS = ['p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 'del', 's', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'a', 'span'];
const ALLOWED_ATTR = ['href', 'title', 'class', 'start', 'align'];
const SAFE_URL = /^(?:https?:\/\/|mailto:|artifact:\/\/|agent:\/\/)/i;
// DOMPurify checks every attribute value that may be a URL with this: schemes other than
// these are dropped; a value with no scheme (align="right") passes, and links are then
// kept only when they match SAFE_URL (fixLinks).
const PURIFY_URI = /^(?:(?:https?|mailto|artifact|agent):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i;
const INTERNAL = /^(?:artifact|agent):\/\//i;

let marked = null;
let purify = null;
let hljs = null;
let hljsPurify = null;

if (libs) {
  const [m, p, hl] = libs;
  hljs = hl.default;
  hljs.configure({ ignoreUnescapedHTML: true });
  const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  marked = new m.Marked({
    async: false,
    gfm: true,
    breaks: true,
    renderer: {
      // Raw HTML in a message is text the author typed: shown as is, never parsed.
      html: ({ text }) => escape(text),
      // Images are not loaded from anywhere: a link to them (if the URL is allowed) instead.
      image: ({ href, text }) => `<a href="${escape(href)}">${escape(`image: ${text || href}`)}</a>`,
      checkbox: ({ checked }) => (checked ? '☑ ' : '☐ '),
    },
  });
  purify = p.default(window);
  purify.addHook('uponSanitizeAttribute', (_node, data) => {
    if (data.attrName === 'class' && !/^language-[\w+#.-]{1,40}$/.test(data.attrValue)) data.keepAttr = false;
    if (data.attrName === 'align' && !/^(left|right|center)$/.test(data.attrValue)) data.keepAttr = false;
  });
  hljsPurify = p.default(window);
}

const PURIFY_CONFIG = {
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOWED_URI_REGEXP: PURIFY_URI,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
};

/**
 * Markdown `text` as a sanitized `div.text.md`. `linkify` turns artifact:// and agent://
 * URLs of plain text into internal links; `codeBlock(pre, lang)` wraps each code block
 * (the caller's copy button and keyboard focus). Inside the lazy root it starts as plain
 * text and is drawn when it comes near the screen.
 */
export function renderMarkdown(text, { linkify, codeBlock } = {}) {
  const out = h('div', { class: 'text md plain' });
  out.append(linkify ? linkify(text) : text);
  if (!marked) return out;
  later(out, () => {
    const frag = markdownFragment(text, { linkify, codeBlock });
    out.classList.remove('plain');
    out.replaceChildren(frag);
  });
  return out;
}

function markdownFragment(text, { linkify, codeBlock }) {
  const frag = purify.sanitize(marked.parse(text), PURIFY_CONFIG);
  fixLinks(frag);
  for (const pre of frag.querySelectorAll('pre')) {
    const code = pre.querySelector('code');
    const lang = /(?:^|\s)language-([\w+#.-]+)/.exec(code?.className ?? '')?.[1]?.toLowerCase() ?? '';
    pre.className = 'code';
    if (code) code.removeAttribute('class');
    const plain = pre.textContent;
    if (linkify && plain.includes('://') && hasInternalUrl(plain)) pre.replaceChildren(linkify(plain));
    else highlightInto(pre, plain, lang);
    if (codeBlock) {
      const slot = document.createComment('');
      pre.replaceWith(slot);
      slot.replaceWith(codeBlock(pre, lang));
    }
  }
  for (const table of frag.querySelectorAll('table')) {
    const wrap = h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Table' });
    table.replaceWith(wrap);
    wrap.append(table);
  }
  if (linkify) linkifyText(frag, linkify);
  return frag;
}

/**
 * Colours `pre`'s code (`text`) as `lang` (or a guess for short unlabelled blocks); inside
 * the lazy root when it comes near the screen. Returns whether it will be coloured (false:
 * too long, unknown language, no highlight.js).
 */
export function highlightInto(pre, text, lang) {
  pre.dataset.lang = lang || '';
  if (!hljs || text.length > HIGHLIGHT_MAX_CHARS) return false;
  if (lang && !hljs.getLanguage(lang)) return false;
  if (!lang && (text.length > AUTO_DETECT_MAX_CHARS || !text.includes('\n'))) return false;
  pre.textContent = text;
  later(pre, () => highlightNow(pre, text, lang), { cosmetic: true });
  return true;
}

function highlightNow(pre, text, lang) {
  let result = null;
  try {
    if (lang) result = hljs.highlight(text, { language: lang, ignoreIllegals: true });
    else {
      const auto = hljs.highlightAuto(text);
      if (auto.relevance >= 5) result = auto;
    }
  } catch {
    result = null;
  }
  if (!result) {
    pre.textContent = text;
    return false;
  }
  // highlight.js escapes the code; its spans go through the sanitizer all the same.
  const frag = hljsPurify.sanitize(result.value, { ALLOWED_TAGS: ['span'], ALLOWED_ATTR: ['class'], RETURN_DOM_FRAGMENT: true });
  pre.replaceChildren(h('code', { class: 'hljs' }, frag));
  if (!lang && result.language) pre.dataset.lang = result.language;
  pre.dataset.highlighted = result.language || lang;
  return true;
}

/** The language highlight.js knows for a file name's extension ('' if none). */
export function languageOfPath(path) {
  const ext = /\.([A-Za-z0-9+]+)$/.exec(String(path ?? ''))?.[1]?.toLowerCase();
  if (!ext || !hljs) return '';
  return hljs.getLanguage(ext) ? ext : '';
}

function hasInternalUrl(text) {
  return /\b(?:artifact|agent):\/\//.test(text);
}

/** Internal links become the viewer's buttons-as-links; others open in a new tab, safely. */
function fixLinks(root) {
  for (const a of root.querySelectorAll('a')) {
    const href = a.getAttribute('href') ?? '';
    if (!href || !SAFE_URL.test(href)) {
      a.replaceWith(...a.childNodes);
    } else if (INTERNAL.test(href)) {
      a.setAttribute('href', '#');
      a.className = 'int-link';
      a.dataset.url = href;
      a.title = `Open ${href}`;
    } else {
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      a.className = 'ext-link';
      if (!a.title) a.title = href;
    }
  }
}

/** Runs `linkify` over the text nodes that are not inside a link. */
function linkifyText(root, linkify) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const hits = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.nodeValue.includes('://') && hasInternalUrl(n.nodeValue) && !n.parentElement?.closest('a, pre')) hits.push(n);
  }
  for (const n of hits) {
    const out = linkify(n.nodeValue);
    if (typeof out !== 'string') n.replaceWith(out);
  }
}
