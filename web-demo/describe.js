// One line of text for a tree row: a short tag, a style class and a preview. Used by the
// worker when it flattens the tree, so the page only receives these short strings.

export function oneLine(s, max = 140) {
  const str = String(s ?? '').replace(/\s+/g, ' ').trim();
  return str.length > max ? `${str.slice(0, max - 1)}…` : str;
}

export function firstLine(s, max = 120) {
  const str = String(s ?? '').trim();
  const nl = str.indexOf('\n');
  const line = (nl >= 0 ? str.slice(0, nl) : str).trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

const nf = new Intl.NumberFormat('en-US');

const TYPE_TAGS = {
  user: ['user', 'user'],
  assistant: ['asst', 'assistant'],
  toolResult: ['tool', 'tool'],
  bashExecution: ['bash', 'bash'],
  custom: ['ext', 'custom'],
  hookMessage: ['ext', 'custom'],
  model_change: ['model', 'meta'],
  thinking_level_change: ['think', 'meta'],
  compaction: ['compact', 'compaction'],
  branch_summary: ['branch', 'branch'],
  custom_message: ['ext', 'custom'],
  custom_entry: ['state', 'meta'],
  label: ['label', 'meta'],
  ttsr_injection: ['ttsr', 'meta'],
  session_init: ['init', 'meta'],
  mode_change: ['mode', 'meta'],
  context_change: ['context', 'meta'],
  service_tier_change: ['tier', 'meta'],
  mcp_tool_selection: ['mcp', 'meta'],
};

/**
 * How much of any one string a preview reads: the worker asks the package for the tree
 * with longer strings cut there (`treeJson(PREVIEW_CHARS)`), so previews never see more.
 * A preview shows 140 characters; 160 leaves room for the whitespace it folds. (At 400, a
 * 100 MB session's tree was 47 MB of JSON and the viewer held 726 MB; at 160, 38 MB and
 * 533 MB.)
 */
export const PREVIEW_CHARS = 160;

/** The text of a content string or block array (images as `[image]`), cut early. */
export function textOf(content, max = PREVIEW_CHARS) {
  if (typeof content === 'string') return content.slice(0, max);
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const b of content) {
    if (out.length >= max) break;
    if (b?.type === 'text' && typeof b.text === 'string') out += (out ? ' ' : '') + b.text.slice(0, max);
    else if (b?.type === 'image') out += (out ? ' ' : '') + '[image]';
  }
  return out;
}

/** `{tag, cls, text}` of an entry. */
export function describeEntry(e) {
  const type = e.type === 'custom' ? 'custom_entry' : e.type;
  if (e.type === 'message') {
    const m = e.message ?? {};
    const [tag, cls] = TYPE_TAGS[m.role] ?? [String(m.role ?? 'msg').slice(0, 6), 'other'];
    let text = oneLine(textOf(m.content));
    if (m.role === 'assistant') {
      const calls = (Array.isArray(m.content) ? m.content : []).filter((b) => b?.type === 'toolCall').map((b) => b.name);
      if (calls.length) text = `${text ? `${text} ` : ''}→ ${calls.join(', ')}`;
      if (!text && m.errorMessage) text = `⚠ ${oneLine(m.errorMessage)}`;
      if (!text && Array.isArray(m.content) && m.content.some((b) => b?.type === 'thinking')) text = '(thinking)';
    } else if (m.role === 'toolResult') {
      text = `${m.toolName ?? 'tool'}${m.isError ? ' ✗' : ''}: ${text}`;
    } else if (m.role === 'bashExecution') {
      text = `$ ${oneLine(m.command)}`;
    }
    return { tag, cls, text: oneLine(text) };
  }
  const [tag, cls] = TYPE_TAGS[type] ?? [String(e.type ?? '?').slice(0, 7), 'other'];
  let text = '';
  switch (e.type) {
    case 'model_change':
      text = e.model ?? [e.provider, e.modelId].filter(Boolean).join('/');
      if (e.role && e.role !== 'default') text += ` (${e.role})`;
      break;
    case 'thinking_level_change':
      text = `thinking ${e.thinkingLevel ?? 'off'}`;
      break;
    case 'compaction':
      text = e.shortSummary ? oneLine(e.shortSummary) : firstLine(e.summary);
      if (e.tokensBefore) text += ` · ${nf.format(e.tokensBefore)} tok`;
      break;
    case 'branch_summary':
      text = oneLine(e.summary);
      break;
    case 'custom':
      text = e.customType ?? '';
      break;
    case 'custom_message':
      text = `${e.customType ?? ''}: ${oneLine(textOf(e.content))}`;
      break;
    case 'label':
      text = e.label === undefined || e.label === null ? `clear label on ${e.targetId}` : `“${e.label}” → ${e.targetId}`;
      break;
    case 'ttsr_injection':
      text = (e.injectedRules ?? []).join(', ');
      break;
    case 'session_init':
      text = oneLine(e.task ?? e.systemPrompt ?? '');
      break;
    case 'mode_change':
      text = e.mode ?? '';
      break;
    case 'context_change':
      text = [e.contextName, e.tenant, e.namespace].filter(Boolean).join(' · ');
      break;
    case 'service_tier_change':
      text = `service tier ${e.serviceTier ?? 'default'}`;
      break;
    case 'mcp_tool_selection':
      text = (e.selectedToolNames ?? []).join(', ');
      break;
    default:
      text = e.type ?? '';
  }
  return { tag, cls, text: oneLine(text) };
}
