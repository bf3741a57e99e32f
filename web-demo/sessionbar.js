// The session bar: title, chips, the open branch's totals (tokens, cost, duration, models),
// load warnings and the buttons of the edit actions (import, fork, delete; edits.js runs them)
// of the open session.

import { SOURCE_NAMES, events, state } from './state.js';
import { $, fmtBytes, fmtCount, fmtNum, fmtTime, h, oneLine } from './dom.js';
import { deleteOpenSession, forkSession, importCurrent } from './edits.js';
import { editTarget } from './edit-target.js';
import { fmtCost, fmtDuration } from './totals.js';

// `full`: what the tooltip says when the chip shows less (a path's file name).
const chip = (label, value, cls = '', full = value) =>
  value === undefined || value === null || value === ''
    ? null
    : h('span', { class: `chip ${cls}`, title: `${label}: ${full}`, dataset: { testid: `chip-${label}` } }, h('span', { class: 'chip-k' }, label), h('span', { class: 'chip-v' }, String(value)));

/** The session bar follows the session shown and the branch line the branch (state.js `events`). */
export function wireSessionBar() {
  events.addEventListener('session', renderSessionBar);
  events.addEventListener('selection', renderConvMeta);
  events.addEventListener('tree', renderTotals); // the branch's totals come with the tree rows
}

/** Draws the session bar of the open session (`state.view`). */
export function renderSessionBar() {
  const v = state.view;
  const header = v.header ?? {};
  const report = v.report ?? {};
  const version = v.version;
  const migration = report.migration;

  // Reader's words on the screen; the format versions and the load time in the tooltips.
  const toVersion = migration?.toVersion ?? 3;
  const format = migration ? `session format v${version}, converted to v${toVersion}${v.writable ? ' and rewritten in this copy' : ' in memory to show it (the file is not changed)'}` : `session format v${version}`;
  const file = v.size ? `${v.name} · ${fmtBytes(v.size)}` : v.name;
  const title = v.title; // the core's rule: header title, else the first user message
  const where = v.source ? SOURCE_NAMES[v.source] ?? v.source : v.origin === 'sample' ? 'sample' : 'file';
  // On a narrow screen the file's chips fold away behind the Details button (layout.css).
  const chips = h(
    'span',
    { class: 'sb-chips', id: 'sb-chips' },
    chip('id', header.id, 'mono'),
    chip('cwd', header.cwd, 'mono'),
    chip('created', fmtTime(header.timestamp)),
    migration
      ? h(
          'span',
          {
            class: 'badge badge-info sb-note',
            dataset: { testid: v.writable ? 'updated-format' : 'older-format' },
            title: v.writable
              ? `This copy was made from an older session file (format v${version}) and written in the current one (v${toVersion}).`
              : `An older session file (format v${version}): converted to the current format (v${toVersion}) in memory to show it; the file is not changed. “Import” writes a copy in the current format.`,
          },
          v.writable ? 'Copy updated from an older session file' : 'Older session file: shown as the current version, the file is unchanged',
        )
      : null,
    chip('file', file, '', `${file} · ${format} · read in ${Math.round(v.loadMs)} ms`),
    header.parentSession ? chip('parent', header.parentSession.slice(header.parentSession.lastIndexOf('/') + 1), 'mono', header.parentSession) : null,
  );
  const top = h(
    'div',
    { class: 'sb-row' },
    h('h1', { class: `sb-title${header.title ? '' : ' untitled'}`, title: header.title ? title : `untitled · ${v.name}` }, title ?? v.name),
    h('button', { type: 'button', class: 'btn btn-small sb-more', 'aria-expanded': String(detailsOpen), 'aria-controls': 'sb-chips', title: 'Show or hide the file\'s details', onclick: toggleDetails }, 'Details'),
    chips,
  );

  const source = h(
    'span',
    { class: `chip chip-source src-${v.source ?? v.origin ?? 'file'}`, dataset: { testid: 'chip-source' }, title: v.path ?? v.name },
    h('span', { class: 'chip-k' }, 'in'),
    h('span', { class: 'chip-v' }, v.writable ? `${where} · editable` : `${where} · read-only`),
  );
  const actions = h('span', { class: 'sb-actions' }, source);
  if (v.writable) {
    actions.append(
      h('button', { type: 'button', class: 'btn btn-small', id: 'fork-btn', title: 'Continue in a copy of this session under a new id (artifacts copied)', onclick: forkSession }, 'Fork'),
      h('button', { type: 'button', class: 'btn btn-small btn-danger', id: 'delete-btn', title: `Delete this session from the ${where}`, onclick: (ev) => deleteCurrent(ev.currentTarget) }, 'Delete'),
    );
  } else {
    const target = editTarget();
    actions.append(
      h(
        'button',
        { type: 'button', class: 'btn btn-small btn-accent', id: 'import-btn', title: `Copy this session (and its artifacts) into the ${SOURCE_NAMES[target]} to label, branch and fork it`, onclick: () => importCurrent() },
        target === 'opfs' ? 'Import to browser storage' : 'Copy to memory',
      ),
    );
  }

  const warnings = collectWarnings(report, v.warnings ?? []);
  const rows = [h('div', { class: 'sb-line' }, top, actions), h('div', { class: 'sb-row sb-totals', id: 'session-totals', dataset: { testid: 'session-totals' } })];
  if (warnings.length) {
    rows.push(
      h(
        'details',
        { class: 'sb-warnings', open: Boolean(report.headerProblem), dataset: { testid: 'load-warnings' } },
        h('summary', null, `⚠ ${warnings.length} load warning${warnings.length === 1 ? '' : 's'}`),
        h('ul', null, warnings.map((w) => h('li', null, w))),
      ),
    );
  } else {
    rows.push(h('div', { class: 'sb-clean' }, '✓ loaded cleanly'));
  }
  $('session-bar').replaceChildren(...rows);
  $('session-bar').classList.toggle('sb-open', detailsOpen);
  renderTotals();
}

let detailsOpen = false;
function toggleDetails(ev) {
  detailsOpen = !detailsOpen;
  ev.currentTarget.setAttribute('aria-expanded', String(detailsOpen));
  $('session-bar').classList.toggle('sb-open', detailsOpen);
}

/** The open branch's totals (the worker's `meta.totals`, see totals.js) as chips. */
function renderTotals() {
  const box = $('session-totals');
  const t = state.meta?.totals;
  if (!box) return;
  if (!t || !t.messages) {
    box.replaceChildren();
    return;
  }
  const tokens = `${fmtNum(t.input)} in · ${fmtNum(t.output)} out`;
  const span = t.firstAt !== null ? `from ${fmtTime(t.firstAt)} to ${fmtTime(t.lastAt)} (UTC)` : '';
  const parts = [
    h('span', { class: 'sb-totals-k', title: 'Totals of the branch shown, from its first entry to the selected one (compacted messages included)' }, 'This branch'),
    chip('tokens', tokens, 'chip-total', `${tokens} (input and output tokens of ${fmtCount(t.assistantMessages, 'assistant message')})`),
    t.cacheRead || t.cacheWrite ? chip('cache', `${fmtNum(t.cacheRead)} read · ${fmtNum(t.cacheWrite)} written`, 'chip-total') : null,
    t.cost !== null ? chip('cost', fmtCost(t.cost), 'chip-total', `${fmtCost(t.cost)}, the sum of ${fmtCount(t.costMessages, 'message')} that carry a cost`) : null,
    t.durationMs !== null ? chip('duration', fmtDuration(t.durationMs), 'chip-total', `${fmtDuration(t.durationMs)}, ${span}`) : null,
    t.models.length ? chip('models', t.models.map((m) => m.name).join(', '), 'chip-total mono', t.models.map((m) => `${m.name} (${fmtCount(m.messages, 'message')})`).join(', ')) : null,
  ];
  box.replaceChildren(...parts.filter(Boolean));
}

const ISSUE_NAMES = { unparsable: 'unparsable line skipped', tornTail: 'torn last line dropped', gluedRecord: 'glued records split' };

function collectWarnings(report, extra) {
  const out = [];
  for (const i of report.issues ?? []) {
    out.push(`line ${i.line}: ${ISSUE_NAMES[i.kind] ?? i.kind}${i.detail ? ` — ${oneLine(i.detail, 200)}` : ''}`);
  }
  if (report.headerProblem) out.push(`header: ${report.headerProblem}`);
  if (report.invalidUtf8) out.push('the file is not valid UTF-8 (bad bytes replaced)');
  if (report.nonEntries) out.push(`${report.nonEntries} record(s) that are not entries were kept aside`);
  if (report.duplicateIds) out.push(`${report.duplicateIds} duplicate entry id(s)`);
  if (report.backupPath) out.push(`original bytes kept in ${report.backupPath}`);
  for (const b of report.missingBlobs ?? []) out.push(`blob ${b} not found`);
  for (const w of extra) if (!out.includes(String(w))) out.push(String(w));
  return out;
}

/** The conversation's header line: messages, thinking level, model, mode; and the totals. */
function renderConvMeta() {
  const ctx = state.meta ?? {};
  const parts = [state.history ? `${fmtCount(state.count, 'message')} (whole history)` : fmtCount(state.count, 'message')];
  const said = [`${fmtCount(state.count, 'message')} in the branch shown${state.history ? ': its whole history, every compaction where it happened' : ''}`];
  if (ctx.thinkingLevel) {
    parts.push(`thinking ${ctx.thinkingLevel}`);
    said.push(`thinking level: ${ctx.thinkingLevel}`);
  }
  const model = ctx.models?.default ?? Object.values(ctx.models ?? {})[0];
  if (model) {
    parts.push(String(model));
    said.push(`model: ${model}`);
  }
  if (ctx.mode && ctx.mode !== 'none') {
    parts.push(`mode ${ctx.mode}`);
    said.push(`mode: ${ctx.mode}`);
  }
  const meta = $('conv-meta');
  meta.textContent = parts.join(' · ');
  meta.title = said.join(' · ');
  renderTotals();
}

/** Delete asks for a second click (within 4 s) before it deletes the open session. */
async function deleteCurrent(button) {
  if (button.dataset.armed !== '1') {
    button.dataset.armed = '1';
    button.textContent = 'Delete? Click again';
    setTimeout(() => {
      if (button.isConnected) {
        button.dataset.armed = '';
        button.textContent = 'Delete';
      }
    }, 4000);
    return;
  }
  await deleteOpenSession();
}
