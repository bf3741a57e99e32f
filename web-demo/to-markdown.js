// Messages as Markdown text: what "Copy" puts on the clipboard and what "Export → Markdown"
// writes. Plain text in, plain text out (no DOM): user and assistant text as written,
// thinking as a quote, tool calls and outputs in code fences long enough for their content.

const ROLE_TITLES = {
  user: 'User',
  assistant: 'Assistant',
  toolResult: 'Tool result',
  custom: 'Extension message',
  branchSummary: 'Branch summary',
  compactionSummary: 'Compaction summary',
  bashExecution: 'Shell',
};

/** The heading words of message `m`: "User", "Assistant · provider/model", "Tool result · bash". */
export function messageTitle(m) {
  const role = typeof m?.role === 'string' ? m.role : 'unknown';
  const base = Object.hasOwn(ROLE_TITLES, role) ? ROLE_TITLES[role] : role;
  if (role === 'assistant') {
    const model = [m.provider, m.model].filter(Boolean).join('/');
    return model ? `${base} · ${model}` : base;
  }
  if (role === 'toolResult') return `${base} · ${m.toolName ?? 'tool'}`;
  if (role === 'custom') return `Extension · ${m.customType ?? 'custom'}`;
  return base;
}

/** `text` in a code fence longer than any run of backticks in it. */
export function fenced(text, lang = '') {
  const s = String(text ?? '');
  let longest = 2;
  for (const m of s.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${s.replace(/\n$/, '')}\n${fence}`;
}

function argsOf(b) {
  if (typeof b.arguments !== 'string') return b.arguments ?? {};
  try {
    return JSON.parse(b.arguments);
  } catch {
    return b.arguments;
  }
}

function toolCallMd(b) {
  const args = argsOf(b);
  const name = String(b.name ?? 'tool');
  if (args && typeof args === 'object' && typeof args.command === 'string') {
    const rest = { ...args };
    delete rest.command;
    return `**Tool call: ${name}**\n\n${fenced(args.command, 'bash')}${Object.keys(rest).length ? `\n\n${fenced(JSON.stringify(rest, null, 2), 'json')}` : ''}`;
  }
  return `**Tool call: ${name}**\n\n${fenced(typeof args === 'string' ? args : JSON.stringify(args, null, 2), 'json')}`;
}

/** The content (a string or blocks) as Markdown; `output`: text as program output (fenced). */
export function contentMd(content, { output = false } = {}) {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return output ? fenced(content) : content;
  if (!Array.isArray(content)) return fenced(JSON.stringify(content, null, 2), 'json');
  const parts = [];
  for (const b of content) {
    if (!b || typeof b !== 'object') continue;
    if (b.type === 'text') {
      const t = String(b.text ?? '');
      if (t) parts.push(output ? fenced(t) : t);
    } else if (b.type === 'thinking') {
      const t = String(b.thinking ?? '');
      if (t) parts.push(`> **Thinking**\n>\n${t.split('\n').map((l) => `> ${l}`.trimEnd()).join('\n')}`);
    } else if (b.type === 'toolCall') {
      parts.push(toolCallMd(b));
    } else if (b.type === 'image') {
      parts.push(`*[image: ${typeof b.mimeType === 'string' ? b.mimeType : 'image'}]*`);
    } else {
      parts.push(fenced(JSON.stringify(b, null, 2), 'json'));
    }
  }
  return parts.join('\n\n');
}

/** The body of message `m` as Markdown (no heading). */
export function messageBodyMd(m) {
  if (!m || typeof m !== 'object') return fenced(String(m));
  switch (m.role) {
    case 'toolResult':
      return contentMd(m.content, { output: true }) + (m.isError ? '\n\n*(error)*' : '');
    case 'branchSummary':
    case 'compactionSummary':
      return String(m.summary ?? '');
    case 'bashExecution':
      return `${fenced(`$ ${m.command ?? ''}`, 'bash')}${m.output ? `\n\n${fenced(m.output)}` : ''}${m.exitCode !== undefined && m.exitCode !== null ? `\n\n*exit ${m.exitCode}*` : ''}`;
    default: {
      const body = contentMd(m.content);
      const err = m.errorMessage ? `\n\n> **Error:** ${String(m.errorMessage)}` : '';
      return body + err;
    }
  }
}

/** Message `m` (number `index`, from 0) as Markdown: a heading, then its body. */
export function messageToMarkdown(m, index, { level = 2 } = {}) {
  return `${'#'.repeat(level)} ${messageTitle(m)} · #${index + 1}\n\n${messageBodyMd(m)}\n`;
}

/** A whole branch as one Markdown document. */
export function branchToMarkdown(messages, { title = 'Session', facts = [] } = {}) {
  const head = [`# ${title}`, '', ...facts.map((f) => `- ${f}`), ''];
  return `${head.join('\n')}\n${messages.map((m, i) => messageToMarkdown(m, i)).join('\n')}`;
}
