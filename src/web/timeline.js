// The timeline of one session: its events grouped by turn, a page at a time (newest first shown),
// each checkpoint with its actions (pick From/To for a diff, diff to now, restore, rewind, fork).
import { $, api, guard, h, PAGE, plural, q, snippet, state, timeEl } from './page.js';
import { showDiff } from './diff.js';
import { previewRestore, previewRewind, previewUndo } from './dialogs.js';

/** The diff pane for `from` → `to`, whose files' "Undo file…" put them back as at `from`. */
const diff = (from, to) => showDiff(from, to, (path) => previewUndo(from, path));

let opens = 0;
export async function openSession(id, offset) {
  state.session = id;
  state.picked = [];
  for (const b of document.querySelectorAll('.session')) b.setAttribute('aria-current', b.dataset.id === id ? 'true' : 'false');
  // The newest page unless asked for another (one request either way).
  const ticket = ++opens;
  const page = await api(`/sessions/${encodeURIComponent(id)}/events${q(offset === undefined ? { tail: '1', limit: PAGE } : { offset, limit: PAGE })}`);
  if (ticket !== opens) return; // another session (or page) was opened meanwhile: its answer is the one shown
  state.events = page.events;
  state.total = page.total;
  state.offset = page.offset;
  renderTimeline();
}

export function renderTimeline() {
  const id = state.session;
  const pager = () => h(
    'div.pager',
    {},
    h('button', { disabled: state.offset === 0, onclick: () => guard(() => openSession(id, Math.max(0, state.offset - PAGE))) }, '← older'),
    h('span.mute', {}, `events ${state.offset + 1}–${state.offset + state.events.length} of ${state.total}`),
    h('button', { disabled: state.offset + state.events.length >= state.total, onclick: () => guard(() => openSession(id, state.offset + PAGE)) }, 'newer →'),
  );
  const turns = [];
  let current = null;
  for (const e of state.events) {
    if (e.type === 'turn' || !current) {
      current = { turn: e.type === 'turn' ? e : null, events: [] };
      turns.push(current);
      if (e.type === 'turn') continue;
    }
    current.events.push(e);
  }
  const pickHelp = h('p.mute', {}, 'Pick two points (From / To) to compare, or diff a point against now.');
  $('#timeline').replaceChildren(h('h2', {}, `Timeline · ${state.titles?.get(id) || id} `, h('span.mute', {}, id)), pickHelp, pager(), ...turns.map(renderTurn), state.total > PAGE ? pager() : '');
}

function renderTurn({ turn, events }) {
  const body = h('div', {}, ...events.slice(0, 50).map(renderEvent));
  const undoPrompt = turn
    ? h('button.undo-prompt', { 'aria-label': `undo turn ${turn.turn} and everything after`, title: 'Rewind: put the files back as they were before this prompt and move the conversation back to it', onclick: () => guard(() => previewRewind(String(turn.turn), false)) }, 'Undo this prompt and everything after…')
    : '';
  const box = h('div.turn', {}, turn ? h('h3', {}, `Turn ${turn.turn} `, timeEl(turn.at), ' ', undoPrompt) : h('h3.mute', {}, 'Before the first turn'));
  if (turn?.text) box.append(h('div.prompt', {}, turn.text));
  box.append(body);
  if (events.length > 50) {
    const more = h('button', { onclick: () => { body.append(...events.slice(50).map(renderEvent)); more.remove(); } }, `show ${events.length - 50} more`);
    box.append(more);
  }
  return box;
}

/** A row's paths: before a tool ran an absent path is one it creates; after it, one it deleted. */
function fileList(files, absent = 'new', max = 6) {
  if (!files?.length) return '';
  const names = files.map((f) => `${f.path}${f.state === 'absent' ? ` (${absent})` : f.state === 'skipped' ? ` (not recorded: ${f.why ?? 'skipped'})` : ''}`);
  return h('span.files', {}, names.slice(0, max).join(', ') + (names.length > max ? ` … +${names.length - max}` : ''));
}

function renderEvent(e) {
  // The time goes before a row's action buttons (which wrap onto their own line).
  const row = (cls, kind, ...rest) => {
    const actions = rest.filter((x) => x instanceof Node && x.classList?.contains('actions'));
    return h(`div.ev.${cls}`, { 'data-seq': e.seq }, h('span.kind', {}, kind), ...rest.filter((x) => !actions.includes(x)), timeEl(e.at), ...actions);
  };
  switch (e.type) {
    case 'capture': {
      const isScan = /scan/i.test(e.tool) || e.reason === 'scan';
      // The image a restore / undo / rewind took before changing files: restoring to it undoes that.
      const isRecovery = e.tool === 'restore' || /^(restore|rewind|undo) /.test(e.reason ?? '');
      const picked = state.picked.includes(e.tag);
      const el = row(
        isScan ? 'scan' : isRecovery ? 'recovery' : 'capture',
        isScan ? 'scan' : isRecovery ? 'recovery' : 'tool',
        h('strong', {}, `${e.tag} ${e.tool}`),
        e.reason ? h('span.mute', {}, e.reason) : '',
        fileList(e.files),
        h('span.actions', {},
        h('button', { 'aria-label': `from ${e.tag}`, 'aria-pressed': state.picked[0] === e.tag ? 'true' : null, onclick: () => pick(e.tag, 0) }, 'From'),
        h('button', { 'aria-label': `to ${e.tag}`, 'aria-pressed': state.picked[1] === e.tag ? 'true' : null, onclick: () => pick(e.tag, 1) }, 'To'),
        h('button', { 'aria-label': `diff ${e.tag} to now`, onclick: () => guard(() => diff(e.tag, null)) }, 'Diff→now'),
        h('button', { 'aria-label': `restore ${e.tag}`, onclick: () => guard(() => previewRestore(e.tag)) }, 'Restore…'),
        h('button', { 'aria-label': `rewind ${e.tag}`, onclick: () => guard(() => previewRewind(e.tag, false)) }, 'Rewind…'),
        h('button', { 'aria-label': `fork ${e.tag}`, onclick: () => guard(() => previewRewind(e.tag, true)) }, 'Fork…')),
      );
      if (picked) el.classList.add('picked');
      return el;
    }
    case 'settle': return row('settle', 'settled', h('strong', {}, e.tag), fileList(e.files, 'deleted'));
    case 'restore_started': return row('restore', 'restore', `to ${e.to}: ${plural(e.plan?.length ?? 0, 'path')} planned`);
    case 'restore_committed': return row('restore', 'restored', e.result?.undo ? `undo with ${e.result.undo}` : '');
    case 'rewind': return row('rewind', 'rewind', `to ${e.to}`);
    case 'conflict': return row('conflict', 'conflict', `${e.path} also changed by session ${e.otherSession}`);
    case 'prune': return row('prune', 'prune', `checkpoints before ${e.before} pruned`);
    case 'session': return row('start', e.forkedFrom ? 'fork' : 'start', e.forkedFrom ? `forked from ${e.forkedFrom.session} at ${e.forkedFrom.seq}` : (e.title ?? ''));
    case 'end': return row('end', 'end', '');
    case 'restore_aborted': return row('conflict', 'restore aborted', e.reason ?? '');
    case 'title': return row('info', 'title', e.title ?? '');
    case 'info': return row('info', 'info', Object.entries(e.set ?? {}).map(([k, v]) => `${k}: ${v}`).join(', '));
    case 'compaction': return row('info', 'compaction', e.summary ? snippet(e.summary) : '');
    // A conversation event the agent recorded (message, tool call…): its text, shortened.
    default: return row('talk', e.type, h('span.mute', {}, snippet(e.text ?? e.content ?? e.message ?? '')));
  }
}

function pick(tag, which) {
  state.picked[which] = tag;
  for (const el of document.querySelectorAll('.ev.picked')) el.classList.remove('picked');
  for (const b of document.querySelectorAll('#timeline .actions button[aria-pressed]')) b.removeAttribute('aria-pressed');
  const names = state.picked.map((t, i) => t && `${i ? 'to' : 'from'} ${t}`);
  for (const b of document.querySelectorAll('#timeline .actions button')) {
    if (!names.includes(b.getAttribute('aria-label'))) continue;
    b.setAttribute('aria-pressed', 'true');
    b.closest('.ev').classList.add('picked');
  }
  const [from, to] = state.picked;
  if (from && to) guard(() => diff(from, to));
  else $('#detail').replaceChildren(h('p.mute', {}, `From ${from ?? '…'} to ${to ?? '…'}: pick the other end.`));
}
