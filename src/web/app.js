// The web timeline (DESIGN §10 "Web timeline"): vanilla JS over the daemon's REST API and SSE
// stream, signed in by the session cookie (never a token in the page). Sessions per workspace with
// the fork tree, a session's events grouped by turn (paged), diffs between any two points or now,
// restore / undo-one-file / rewind / fork always through a preview and an explicit confirmation.
const PAGE = 500;
const $ = (sel) => document.querySelector(sel);
const state = { workspace: '', session: null, events: [], total: 0, offset: 0, picked: [], es: null };

/** Builds an element: h('button.primary', {onclick}, 'text', child…). */
function h(tag, attrs = {}, ...kids) {
  const [name, ...classes] = tag.split('.');
  const el = document.createElement(name);
  if (classes.length) el.className = classes.join(' ');
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined && kid !== false) el.append(kid instanceof Node ? kid : String(kid));
  return el;
}

class SignedOut extends Error {}

// The page key (DESIGN §10 "Security"): the cookie alone opens no API route, since browsers send it to
// every port of 127.0.0.1. The login redirect hands the key over in the fragment (#k=…, never sent to
// a server); the page drops it from the address bar and keeps it in this origin's session storage.
const KEY = (() => {
  const { location, sessionStorage, history } = window;
  const m = /^#k=([\w-]+)$/.exec(location.hash);
  if (m) {
    sessionStorage.setItem('ckpt-key', m[1]);
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem('ckpt-key') ?? '';
})();

async function api(path, body) {
  const headers = { 'x-ckpt-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json', 'x-ckpt': '1' }) };
  const init = body === undefined ? { headers } : { method: 'POST', headers, body: JSON.stringify(body) };
  const res = await fetch(path, { credentials: 'same-origin', ...init });
  if (res.status === 401) throw new SignedOut();
  const json = await res.json();
  if (!res.ok) throw new Error(json.error ? `${json.error.code}: ${json.error.message}` : `HTTP ${res.status}`);
  return json;
}

const q = (extra = {}) => `?${new URLSearchParams({ workspace: state.workspace, ...extra })}`;

// One formatter each (building an Intl formatter per row costs more than the row itself).
const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const dtf = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

function ago(iso) {
  const s = (Date.now() - Date.parse(iso)) / 1000;
  if (!Number.isFinite(s)) return '';
  if (s < 60) return rtf.format(-Math.round(s), 'second');
  if (s < 3600) return rtf.format(-Math.round(s / 60), 'minute');
  if (s < 86400) return rtf.format(-Math.round(s / 3600), 'hour');
  return rtf.format(-Math.round(s / 86400), 'day');
}
const timeEl = (iso) => h('time', { datetime: iso, title: dtf.format(new Date(iso)), class: 'mute' }, ago(iso));

function signedOut() {
  document.body.replaceChildren(h('main.signed-out', {}, h('p', { id: 'not-signed-in' }, 'Not signed in: run ckpt open for a fresh address.')));
}

async function guard(fn) {
  try {
    await fn();
  } catch (err) {
    if (err instanceof SignedOut) signedOut();
    else showError(err);
  }
}

function showError(err) {
  $('#detail').replaceChildren(h('p.drift', { role: 'alert' }, String(err.message ?? err)));
}

// ---- workspaces and sessions -------------------------------------------------------------------

// A shared store (issue 33) holds the workspaces of several machines: each is named with its machine,
// the machine and agent filters narrow the lists, and another machine's workspace is read-only here.
async function loadWorkspaces() {
  const { workspaces, machine } = await api('/workspaces');
  state.workspaces = workspaces;
  state.here = machine;
  const machines = [...new Set(workspaces.map((w) => w.machine).filter(Boolean))].sort();
  const msel = $('#machine');
  msel.hidden = machines.length < 2;
  msel.parentElement.hidden = machines.length < 2;
  msel.replaceChildren(h('option', { value: '' }, 'all machines'), ...machines.map((m) => h('option', { value: m }, m === machine ? `${m} (this machine)` : m)));
  msel.onchange = () => guard(() => listWorkspaces(msel.value));
  $('#agent').onchange = () => renderSessions();
  await listWorkspaces('');
}

async function listWorkspaces(machine) {
  const shown = state.workspaces.filter((w) => !machine || w.machine === machine);
  const sel = $('#workspace');
  sel.replaceChildren(...shown.map((w) => h('option', { value: w.id }, w.machine && state.workspaces.some((x) => x.machine !== w.machine) ? `${w.machine}: ${w.root}` : w.root)));
  sel.onchange = () => guard(async () => selectWorkspace(sel.value));
  if (shown.length) await selectWorkspace(shown[0].id);
  else $('#sessions').replaceChildren(h('p.mute', {}, 'No workspaces yet.'));
}

async function selectWorkspace(id) {
  state.workspace = id;
  const w = state.workspaces.find((x) => x.id === id);
  const foreign = Boolean(w?.machine && state.here && w.machine !== state.here);
  document.body.classList.toggle('foreign', foreign);
  $('#where').replaceChildren(
    ...(foreign
      ? [`This workspace is on machine ${w.machine} (${w.root}): read-only here. Restore it on that machine, or write a tag into a folder here with `, h('code', {}, 'ckpt export SESSION TAG DIR'), '.']
      : []),
  );
  connectLive();
  await loadSessions();
  const first = $('#sessions .session');
  if (first && !state.session) first.click();
}

async function loadSessions() {
  const { sessions } = await api(`/web/sessions${q()}`);
  state.sessions = sessions;
  renderSessions();
}

/** How long after its last event a running agent's session still counts as live (a crashed agent records no end). */
const LIVE_MS = 10 * 60_000;
/**
 * Live: an agent's own session (linked by the agent's session id, as hooks record it) that has not
 * ended and had an event lately. A session made by hand or by a script is never live: nothing is
 * running in it.
 */
const isLive = (s) => Boolean(s.externalId) && !s.endedAt && Date.now() - Date.parse(s.updatedAt) < LIVE_MS;

function renderSessions() {
  const agents = [...new Set((state.sessions ?? []).map((s) => s.agent).filter(Boolean))].sort();
  const asel = $('#agent');
  const picked = agents.includes(asel.value) ? asel.value : '';
  asel.replaceChildren(h('option', { value: '' }, 'all agents'), ...agents.map((a) => h('option', { value: a }, a)));
  asel.value = picked;
  asel.parentElement.hidden = agents.length < 2;
  const sessions = (state.sessions ?? []).filter((s) => !picked || s.agent === picked);
  state.titles = new Map(sessions.map((x) => [x.id, x.title]));
  // Fork tree: children under their parent, each level newest (last active) first.
  sessions.sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt));
  const byParent = new Map();
  for (const s of sessions) {
    const p = s.parent && sessions.some((x) => x.id === s.parent) ? s.parent : '';
    if (!byParent.has(p)) byParent.set(p, []);
    byParent.get(p).push(s);
  }
  const rows = [];
  const walk = (parent, depth) => {
    for (const s of byParent.get(parent) ?? []) {
      rows.push([s, depth]);
      walk(s.id, depth + 1);
    }
  };
  walk('', 0);
  $('#sessions').replaceChildren(
    h('h2', {}, 'Sessions'),
    ...rows.map(([s, depth]) => {
      const liveness = isLive(s) ? h('span.badge.live-session', {}, 'live') : s.endedAt ? 'ended' : '';
      const parts = [s.agent ? `${s.agent}${s.model ? ` (${s.model})` : ''}` : '', s.kind ?? '', s.forkedFrom ? `fork of ${s.forkedFrom.session}` : '', plural(s.turns, 'turn'), plural(s.filesTouched, 'file'), liveness].filter(Boolean);
      const meta = h('div.meta', {}, ...parts.flatMap((x) => [x, ' · ']), timeEl(s.updatedAt));
      const button = h(
        'button.session',
        { 'aria-current': state.session === s.id ? 'true' : 'false', 'data-id': s.id, onclick: () => guard(() => openSession(s.id)) },
        h('strong', {}, `${depth ? '⤷ ' : ''}${s.title || s.id}`),
        meta,
      );
      // Through the CSSOM, not a style attribute: the page's CSP refuses inline styles.
      button.style.paddingLeft = `${0.5 + depth * 1.2}em`;
      return button;
    }),
  );
}
// "live" goes stale by itself: re-judge it (and the times) every half minute without asking the daemon.
setInterval(() => state.sessions && renderSessions(), 30_000);

// ---- timeline ----------------------------------------------------------------------------------

async function openSession(id, offset) {
  state.session = id;
  state.picked = [];
  for (const b of document.querySelectorAll('.session')) b.setAttribute('aria-current', b.dataset.id === id ? 'true' : 'false');
  // The newest page unless asked for another (one request either way).
  const page = await api(`/sessions/${encodeURIComponent(id)}/events${q(offset === undefined ? { tail: '1', limit: PAGE } : { offset, limit: PAGE })}`);
  state.events = page.events;
  state.total = page.total;
  state.offset = page.offset;
  renderTimeline();
}

function renderTimeline() {
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
        h('button', { 'aria-label': `diff ${e.tag} to now`, onclick: () => guard(() => showDiff(e.tag, null)) }, 'Diff→now'),
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

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

function snippet(v) {
  const t = typeof v === 'string' ? v : JSON.stringify(v);
  return t.length > 160 ? `${t.slice(0, 160)}…` : t;
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
  if (from && to) guard(() => showDiff(from, to));
  else $('#detail').replaceChildren(h('p.mute', {}, `From ${from ?? '…'} to ${to ?? '…'}: pick the other end.`));
}

// ---- diff --------------------------------------------------------------------------------------

// The highlighter (dist/web/highlight.js, bundled by `npm run build`) loads on the first diff; without
// it (a build-free run from src/) the diff is shown uncoloured.
let highlighter = null;
const loadHighlighter = () => (highlighter ??= import('/web/highlight.js').catch(() => null));

/** What changed besides the lines: binary, too large, mode, type — as short words. */
function changeNotes(c) {
  const notes = [];
  if (c.type) notes.push(`${c.type.from} → ${c.type.to}`);
  if (c.mode) notes.push(`mode ${c.mode.from} → ${c.mode.to}`);
  if (c.binary) notes.push('binary file');
  if (c.truncated) notes.push('too large to diff');
  return notes;
}

const STATUS = { A: 'added', M: 'modified', D: 'deleted' };

async function showDiff(from, to) {
  const [d, hl] = await Promise.all([
    api(`/sessions/${encodeURIComponent(state.session)}/diff${q({ from, ...(to ? { to } : {}), patch: '1' })}`),
    loadHighlighter(),
  ]);
  const patches = splitPatch(d.patch ?? '');
  let mode = 'unified';
  const view = h('div', {});
  const renderView = () => {
    view.replaceChildren(...d.changes.map((c) => {
      const notes = changeNotes(c);
      const head = h('h4.file', { id: `f-${c.path}` }, h('span', { class: `status s-${c.status}`, title: STATUS[c.status] }, c.status), ` ${c.path}`, ...notes.map((n) => h('span.note', {}, n)));
      const hunks = patches.get(c.path);
      if (c.binary) return h('div', {}, head, h('p.mute', {}, 'Binary file: no line diff.'));
      if (c.truncated) return h('div', {}, head, h('p.mute', {}, 'Too large to diff line by line.'));
      if (!hunks?.length) return h('div', {}, head, h('p.mute', {}, notes.length ? 'No change to the content.' : 'No textual change.'));
      const code = codeCell(hl, c.path);
      return h('div', {}, head, mode === 'unified' ? unified(hunks, code) : sideBySide(hunks, code));
    }));
  };
  const toggle = h('button', { id: 'diff-mode', onclick: () => {
    mode = mode === 'unified' ? 'split' : 'unified';
    toggle.textContent = mode === 'unified' ? 'Side by side' : 'Unified';
    widenDetail(mode === 'split');
    renderView();
  } }, 'Side by side');
  widenDetail(false);
  const stat = h('table.stat', {}, ...d.changes.map((c) =>
    h('tr', {}, h('td', { class: `status s-${c.status}`, title: STATUS[c.status] }, c.status), h('td', {}, h('a', { href: `#f-${c.path}` }, c.path), ...changeNotes(c).map((n) => h('span.note', {}, n))),
      h('td.plus', {}, c.binary || c.truncated ? '' : `+${c.added}`), h('td.minus', {}, c.binary || c.truncated ? '' : `-${c.removed}`),
      h('td', {}, h('button', { 'aria-label': `undo ${c.path}`, onclick: () => guard(() => previewUndo(from, c.path)) }, 'Undo file…')))));
  const skipped = d.skipped?.length ? h('p.mute', {}, `not compared: ${d.skipped.map((s) => `${s.path} (${s.why})`).join(', ')}`) : '';
  $('#detail').replaceChildren(h('h2', {}, `Diff ${from} → ${to ?? 'now'}`), h('p.mute', {}, `${d.changes.length} files`), stat, skipped, h('p', {}, toggle), view);
  renderView();
  $('#detail').focus();
}

/** Side by side, the diff pane takes most of the width (the session list and the timeline narrow). */
function widenDetail(on) {
  document.querySelector('main')?.classList.toggle('wide', on);
}

/** A table cell maker for one file's lines, highlighted when its language is known. */
function codeCell(hl, path) {
  const lang = hl?.languageOf(path) ?? null;
  return (text) => {
    const td = h('td.code', {});
    if (lang && text) td.innerHTML = hl.highlightLine(text, lang); // highlight.js escapes the text
    else td.textContent = text;
    return td;
  };
}

/**
 * The API's multi-file unified patch, by path, as hunks: each file starts with a `====` line, then
 * optional `old mode` / `new mode` / `Binary files` lines, `--- a/p`, `+++ b/p`, then `@@` hunks.
 */
function splitPatch(text) {
  const out = new Map();
  let cur = null;
  let inHunks = false;
  for (const line of text.split('\n')) {
    if (/^={20,}$/.test(line)) {
      cur = { path: null, hunks: [] };
      inHunks = false;
    } else if (!cur) continue;
    else if (!inHunks && (line.startsWith('--- ') || line.startsWith('+++ '))) {
      const name = line.slice(4).split('\t')[0];
      if (name !== '/dev/null') {
        cur.path = name.replace(/^[ab]\//, '');
        out.set(cur.path, cur.hunks);
      }
    } else if (line.startsWith('@@')) {
      inHunks = true;
      const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(line);
      cur.hunks.push({ header: line, oldStart: Number(m?.[1] ?? 0), newStart: Number(m?.[2] ?? 0), lines: [] });
    } else if (inHunks && /^[ +-]/.test(line)) cur.hunks.at(-1).lines.push(line);
  }
  return out;
}

const num = (n) => h('td.num', {}, n ?? '');

function unified(hunks, code) {
  const rows = [];
  for (const hunk of hunks) {
    rows.push(h('tr.h', {}, h('td.num', {}), h('td.num', {}), h('td.code', {}, hunk.header)));
    let o = hunk.oldStart;
    let n = hunk.newStart;
    for (const l of hunk.lines) {
      const text = l.slice(1);
      if (l[0] === '-') rows.push(h('tr.d', {}, num(o++), num(), prefixed('-', code(text))));
      else if (l[0] === '+') rows.push(h('tr.a', {}, num(), num(n++), prefixed('+', code(text))));
      else rows.push(h('tr', {}, num(o++), num(n++), prefixed(' ', code(text))));
    }
  }
  return h('table.diff.unified', {}, h('tbody', {}, ...rows));
}

/** The +/- marker as a data attribute shown by CSS (so copying a line copies the code only). */
function prefixed(mark, td) {
  td.dataset.mark = mark;
  return td;
}

function marked(cls, td) {
  td.classList.add(cls);
  return td;
}

function sideBySide(hunks, code) {
  const rows = [];
  for (const hunk of hunks) {
    rows.push(h('tr.h', {}, h('td.num', {}), h('td.code', { colspan: 3 }, hunk.header)));
    let o = hunk.oldStart;
    let n = hunk.newStart;
    let dels = [];
    let adds = [];
    const flush = () => {
      for (let i = 0; i < Math.max(dels.length, adds.length); i++) {
        const left = dels[i] !== undefined ? [num(o++), marked('d', code(dels[i]))] : [num(), h('td.code.empty', {})];
        const right = adds[i] !== undefined ? [num(n++), marked('a', code(adds[i]))] : [num(), h('td.code.empty', {})];
        rows.push(h('tr', {}, ...left, ...right));
      }
      dels = [];
      adds = [];
    };
    for (const l of hunk.lines) {
      if (l[0] === '-') dels.push(l.slice(1));
      else if (l[0] === '+') adds.push(l.slice(1));
      else {
        flush();
        rows.push(h('tr', {}, num(o++), code(l.slice(1)), num(n++), code(l.slice(1))));
      }
    }
    flush();
  }
  return h('table.diff.split', {}, h('colgroup', {}, h('col.num', {}), h('col', {}), h('col.num', {}), h('col', {})), h('tbody', {}, ...rows));
}

// ---- restore, undo, rewind, fork: preview, then confirm ----------------------------------------

function planView(p) {
  const list = (title, items, cls = '') => (items?.length ? h('div', { class: `plan-part ${cls}` }, h('strong', {}, `${title} (${items.length})`), h('ul', {}, ...items.slice(0, 200).map((i) => h('li', {}, i)), items.length > 200 ? h('li.mute', {}, `… ${items.length - 200} more`) : '')) : '');
  const writes = (p.plan ?? []).filter((e) => e.action !== 'delete').map((e) => e.path);
  const deletes = (p.plan ?? []).filter((e) => e.action === 'delete').map((e) => e.path);
  const drift = p.drift?.length ? p.drift : (p.wouldRefuse?.paths ?? []);
  const nothing = !writes.length && !deletes.length && !p.restored?.length && !p.deleted?.length;
  return h('div', { id: 'plan' },
    nothing ? h('p.mute', {}, 'Nothing to change: the files already match.') : '',
    list('Writes', writes.length ? writes : p.restored, 'writes'),
    list('Deletes', deletes.length ? deletes : p.deleted, 'deletes'),
    list('Drift: changed since ckpt last looked', drift, 'drift'),
    list('Conflicts: last written by another session', (p.otherSessions ?? []).map((o) => `${o.path} — session ${o.session}`), 'conflicts'),
    list('Skipped', (p.skipped ?? []).map((i) => `${i.path}${i.why ? ` — ${i.why}` : ''}`), 'skipped'),
    list('Unchanged', p.unchanged, 'unchanged mute'));
}

/** A hunk turned around: what goes from the new side back to the old (removals listed first). */
function reverseHunk(hunk) {
  const lines = [];
  let minus = [];
  let plus = [];
  const flush = () => { lines.push(...minus, ...plus); minus = []; plus = []; };
  for (const l of hunk.lines) {
    if (l[0] === '+') minus.push(`-${l.slice(1)}`);
    else if (l[0] === '-') plus.push(`+${l.slice(1)}`);
    else { flush(); lines.push(l); }
  }
  flush();
  const m = /^@@ -(\d+(?:,\d+)?) \+(\d+(?:,\d+)?) @@(.*)$/.exec(hunk.header);
  return { header: m ? `@@ -${m[2]} +${m[1]} @@${m[3]}` : hunk.header, oldStart: hunk.newStart, newStart: hunk.oldStart, lines };
}

const REVERSED = { A: 'D', D: 'A', M: 'M' };

/**
 * What putting the workspace back to `tag` does to each of `paths`, as a diff from the present
 * files to the tag: the daemon's tag → now diff, turned around. Only recorded paths are compared, as
 * a restore only touches those.
 */
async function planDiff(tag, paths) {
  const want = new Set(paths);
  const [d, hl] = await Promise.all([api(`/sessions/${sid()}/diff${q({ from: tag, patch: '1' })}`), loadHighlighter()]);
  const patches = splitPatch(d.patch ?? '');
  const files = d.changes.filter((c) => want.has(c.path)).map((c) => {
    const status = REVERSED[c.status] ?? c.status;
    const notes = changeNotes(c).map((n) => n.replace(/^(.*) → (.*)$/, '$2 → $1'));
    const head = h('h4.file', {}, h('span', { class: `status s-${status}`, title: STATUS[status] }, status), ` ${c.path}`, ...notes.map((n) => h('span.note', {}, n)));
    const hunks = patches.get(c.path);
    if (c.binary) return h('div', {}, head, h('p.mute', {}, 'Binary file: no line diff.'));
    if (c.truncated) return h('div', {}, head, h('p.mute', {}, 'Too large to diff line by line.'));
    if (!hunks?.length) return h('div', {}, head, h('p.mute', {}, notes.length ? 'No change to the content.' : 'No textual change.'));
    return h('div', {}, head, unified(hunks.map(reverseHunk), codeCell(hl, c.path)));
  });
  return files.length ? files : [h('p.mute', {}, 'No line changes to show (folders only).')];
}

/** The plan's per-file changes, filled in when the diff arrives (the dialog opens at once). */
function planChanges(tag, preview, only) {
  const planned = preview.plan ? preview.plan.map((e) => e.path) : [...(preview.restored ?? []), ...(preview.deleted ?? [])];
  const paths = only ? planned.filter((p) => p === only || p.startsWith(`${only}/`)) : planned;
  if (!paths.length) return '';
  const box = h('div.plan-diff', { 'aria-label': 'changes the restore makes' }, h('p.mute', {}, 'Loading the changes…'));
  planDiff(tag, paths).then(
    (parts) => box.replaceChildren(h('strong', {}, 'Changes (now → after)'), ...parts),
    (err) => box.replaceChildren(h('p.mute', {}, `Could not show the changes: ${String(err.message ?? err)}`)),
  );
  return box;
}

/** Shows the plan in a dialog; resolves with {force} when confirmed, null when cancelled. */
function confirmPlan(title, preview, extra = [], changes = '') {
  const dlg = $('#confirm');
  return new Promise((resolve) => {
    const drift = preview.drift?.length > 0 || preview.wouldRefuse?.code === 'DRIFT';
    const overwrite = h('input', { type: 'checkbox', id: 'overwrite' });
    const go = h('button.primary', { id: 'confirm-go', disabled: drift }, 'Confirm');
    overwrite.onchange = () => { go.disabled = !overwrite.checked; };
    const close = (v) => { dlg.close(); resolve(v); };
    go.onclick = () => close({ force: drift });
    dlg.replaceChildren(
      h('h2', {}, title),
      ...extra,
      planView(preview),
      changes,
      drift ? h('p', {}, overwrite, h('label', { for: 'overwrite', class: 'drift' }, ' Overwrite the drifted files (they are kept in a recovery image)')) : '',
      h('p', {}, go, ' ', h('button', { onclick: () => close(null) }, 'Cancel')),
    );
    dlg.oncancel = () => resolve(null);
    dlg.showModal();
    (drift ? overwrite : go).focus();
  });
}

function afterRestore(title, result) {
  widenDetail(false);
  const undo = result.undo ? h('button.primary', { id: 'undo-restore', onclick: () => guard(() => previewRestore(result.undo)) }, `Undo this (restore ${result.undo})…`) : '';
  $('#detail').replaceChildren(h('h2', {}, title), h('p', { role: 'status' }, `${result.restored?.length ?? 0} written, ${result.deleted?.length ?? 0} deleted`), undo);
  return guard(async () => { await loadSessions(); await openSession(state.session); });
}

const sid = () => encodeURIComponent(state.session);

async function previewRestore(tag) {
  const body = { workspace: state.workspace, tag };
  const preview = await api(`/sessions/${sid()}/restore/preview`, body);
  const ok = await confirmPlan(`Restore the workspace to ${tag}?`, preview, [], planChanges(tag, preview));
  if (!ok) return;
  // A forced restore needs a token issued for force: preview again with it.
  const token = ok.force ? (await api(`/sessions/${sid()}/restore/preview`, { ...body, force: true })).token : preview.token;
  const res = await api(`/sessions/${sid()}/restore`, { ...body, ...(ok.force ? { force: true } : {}), token });
  await afterRestore(`Restored to ${tag}`, res);
}

async function previewUndo(tag, path) {
  const body = { workspace: state.workspace, tag, path };
  const preview = await api(`/sessions/${sid()}/undo`, { ...body, dryRun: true });
  const ok = await confirmPlan(`Undo ${path} to ${tag}?`, preview, [], planChanges(tag, preview, path));
  if (!ok) return;
  // The real call needs the preview's token (issued for force when forced: preview again with it).
  const token = ok.force ? (await api(`/sessions/${sid()}/undo`, { ...body, force: true, dryRun: true })).token : preview.token;
  await afterRestore(`Undid ${path}`, await api(`/sessions/${sid()}/undo`, { ...body, force: ok.force || undefined, token }));
}

async function previewRewind(tag, fork) {
  const body = { workspace: state.workspace, tag, fork };
  const preview = await api(`/sessions/${sid()}/rewind`, { ...body, dryRun: true });
  const said = preview.userMessage?.text ? h('p', {}, `The conversation goes back to turn ${preview.userMessage.turn}: `, h('q', {}, preview.userMessage.text)) : '';
  const hidden = preview.hidden?.length ? h('p.mute', {}, `${preview.hidden.length} later conversation entries ${fork ? 'stay in this session' : 'are hidden (kept in the log)'}.`) : '';
  const ok = await confirmPlan(fork ? `Fork a new session at ${tag}?` : `Rewind the session to ${tag}?`, preview, [said, hidden], planChanges(tag, preview));
  if (!ok) return;
  const token = ok.force ? (await api(`/sessions/${sid()}/rewind`, { ...body, force: true, dryRun: true })).token : preview.token;
  const res = await api(`/sessions/${sid()}/rewind`, { ...body, force: ok.force || undefined, token });
  if (typeof res.session === 'string') state.session = res.session; // a fork continues in its new session
  await afterRestore(fork ? `Forked at ${tag}` : `Rewound to ${tag}`, res);
}

// ---- live --------------------------------------------------------------------------------------

/** The event types ckpt writes (SSE delivers named events to named listeners only). */
const LIVE_TYPES = ['session', 'title', 'info', 'end', 'turn', 'capture', 'settle', 'scan', 'restore_started', 'restore_committed', 'restore_aborted', 'rewind', 'conflict', 'prune', 'compaction'];
let refresh = 0;
const atEnd = () => state.offset + state.events.length >= state.total;
async function retryLive(es, lastId) {
  if (state.es !== es) return;
  try {
    await api('/health');
    connectLive(lastId);
  } catch (err) {
    if (err instanceof SignedOut) signedOut();
    else setTimeout(() => retryLive(es, lastId), 3000);
  }
}

function connectLive(resumeFrom) {
  state.es?.close();
  const live = $('#live');
  let lastId = resumeFrom;
  const es = new EventSource(`/events?${new URLSearchParams({ workspace: state.workspace, key: KEY, ...(resumeFrom ? { lastEventId: resumeFrom } : {}) })}`);
  state.es = es;
  const reload = () => guard(async () => { await loadSessions(); if (state.session) await openSession(state.session, atEnd() ? undefined : state.offset); });
  es.addEventListener('hello', () => { live.className = 'live on'; live.textContent = 'live'; });
  // The browser resumes a dropped stream with Last-Event-ID and the daemon replays what was missed;
  // when it cannot (a restarted daemon, too much missed) it says `reset`: reload what is shown.
  es.addEventListener('reset', reload);
  es.onerror = () => {
    live.className = 'live off';
    live.textContent = es.readyState === EventSource.CLOSED ? 'offline' : 'reconnecting…';
    // The browser gives up on an answer that is not a stream; try again (resuming where it stopped),
    // and show the sign-in help when the daemon no longer knows this page (restarted: 401).
    if (es.readyState === EventSource.CLOSED) setTimeout(() => retryLive(es, lastId), 3000);
  };
  es.onmessage = null;
  const onEvent = (msg) => {
    if (msg.lastEventId) lastId = msg.lastEventId;
    const data = JSON.parse(msg.data);
    const last = state.events.at(-1)?.seq ?? -1;
    if (data.session === state.session && data.event.seq <= last && atEnd()) return; // already shown
    // A gap: events of types this page does not listen to (conversation events) came in between.
    if (data.session === state.session && atEnd() && data.event.seq > last + 1) reload();
    else if (data.session === state.session && atEnd()) {
      state.events.push(data.event);
      state.total++;
      if (state.events.length > PAGE) { state.events.shift(); state.offset++; }
      renderTimeline();
    } else if (data.session === state.session) state.total++;
    clearTimeout(refresh);
    refresh = setTimeout(() => guard(loadSessions), 500);
  };
  for (const t of LIVE_TYPES) es.addEventListener(t, onEvent);
}

// Keyboard: j/k move between timeline rows' first buttons; Escape closes the dialog (native).
document.addEventListener('keydown', (ev) => {
  if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement || $('#confirm').open) return;
  if (ev.key !== 'j' && ev.key !== 'k') return;
  const rows = [...document.querySelectorAll('#timeline .ev button')].filter((b) => b.textContent === 'From');
  const i = rows.indexOf(document.activeElement);
  const next = rows[ev.key === 'j' ? Math.min(rows.length - 1, i + 1) : Math.max(0, i - 1)];
  next?.focus();
  next?.scrollIntoView({ block: 'nearest' });
});

guard(loadWorkspaces);
