// The diff pane: a diff between two points of the session (or a point and now) with its stat table,
// unified or side by side, syntax-highlighted once the highlighter has loaded; and the pieces the
// restore dialogs reuse for the changes a plan makes (patch splitting, unified tables, notes).
import { $, api, guard, h, q, state } from './page.js';

// The highlighter (dist/web/highlight.js, bundled by `npm run build`) loads on the first diff; without
// it (a build-free run from src/) the diff is shown uncoloured.
let highlighter = null;
export const loadHighlighter = () => (highlighter ??= import('/web/highlight.js').catch(() => null));

/** What changed besides the lines: binary, too large, mode, type — as short words. */
export function changeNotes(c) {
  const notes = [];
  if (c.dir) notes.push('folder');
  if (c.type) notes.push(`${c.type.from} → ${c.type.to}`);
  if (c.mode) notes.push(`mode ${c.mode.from} → ${c.mode.to}`);
  if (c.binary) notes.push('binary file');
  if (c.truncated) notes.push('too large to diff');
  // Found by the diff's look: changed since ckpt last recorded it (a restore would put it back, or refuse it as drift).
  if (c.unrecorded) notes.push('not recorded yet');
  return notes;
}

export const STATUS = { A: 'added', M: 'modified', D: 'deleted' };

/** Shows the diff `from` → `to` (null: now); `undoFile(path)` is a file's "Undo file…" action. */
export async function showDiff(from, to, undoFile) {
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
      h('td.plus', {}, c.binary || c.truncated || c.dir ? '' : `+${c.added}`), h('td.minus', {}, c.binary || c.truncated || c.dir ? '' : `-${c.removed}`),
      h('td', {}, h('button', { 'aria-label': `undo ${c.path}`, onclick: () => guard(() => undoFile(c.path)) }, 'Undo file…')))));
  const skipped = d.skipped?.length ? h('p.mute', {}, `not compared: ${d.skipped.map((s) => `${s.path} (${s.why})`).join(', ')}`) : '';
  $('#detail').replaceChildren(h('h2', {}, `Diff ${from} → ${to ?? 'now'}`), h('p.mute', {}, `${d.changes.length} files`), stat, skipped, h('p', {}, toggle), view);
  renderView();
  $('#detail').focus();
}

/** Side by side, the diff pane takes most of the width (the session list and the timeline narrow). */
export function widenDetail(on) {
  document.querySelector('main')?.classList.toggle('wide', on);
}

/** A table cell maker for one file's lines, highlighted when its language is known. */
export function codeCell(hl, path) {
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
export function splitPatch(text) {
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

export function unified(hunks, code) {
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
