// Restore, undo one file, rewind and fork: each previews its plan (with the changes it makes, as a
// diff from now) in a dialog and changes nothing until the user confirms; a drift must be confirmed
// separately. The real call carries the preview's token.
import { $, api, guard, h, late, q, sid, state } from './page.js';
import { changeNotes, codeCell, loadHighlighter, splitPatch, STATUS, unified, widenDetail } from './diff.js';

function planView(p) {
  const list = (title, items, cls = '') => (items?.length ? h('div', { class: `plan-part ${cls}` }, h('strong', {}, `${title} (${items.length})`), h('ul', {}, ...items.slice(0, 200).map((i) => h('li', {}, i)), items.length > 200 ? h('li.mute', {}, `… ${items.length - 200} more`) : '')) : '');
  const writes = (p.plan ?? []).filter((e) => e.action !== 'delete').map((e) => e.path);
  const deletes = (p.plan ?? []).filter((e) => e.action === 'delete').map((e) => e.path);
  const drift = p.drift?.length ? p.drift : p.wouldRefuse?.code === 'DRIFT' ? p.wouldRefuse.paths : [];
  const missing = p.wouldRefuse?.code === 'BLOB_NOT_FOUND' ? p.wouldRefuse.paths : [];
  const nothing = !writes.length && !deletes.length && !p.restored?.length && !p.deleted?.length;
  return h('div', { id: 'plan' },
    nothing ? h('p.mute', {}, 'Nothing to change: the files already match.') : '',
    list('Writes', writes.length ? writes : p.restored, 'writes'),
    list('Deletes', deletes.length ? deletes : p.deleted, 'deletes'),
    list('Drift: changed since ckpt last looked', drift, 'drift'),
    list('Missing from the store: the restore would fail (BLOB_NOT_FOUND)', missing, 'drift'),
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
  return guard(late.reload);
}

/**
 * The token of a forced call: a preview asked again with force (a token is issued for exactly what it
 * was asked). It must show what the user confirmed — else the files moved since, and running it would
 * overwrite what nobody saw: refused, to be previewed again.
 */
async function forcedToken(url, body, shown) {
  const again = await api(url, body);
  if (JSON.stringify([again.plan, again.drift]) !== JSON.stringify([shown.plan, shown.drift])) {
    throw new Error('The files changed since this preview: open it again to see what it would do now.');
  }
  return again.token;
}

export async function previewRestore(tag) {
  const body = { workspace: state.workspace, tag };
  const preview = await api(`/sessions/${sid()}/restore/preview`, body);
  const ok = await confirmPlan(`Restore the workspace to ${tag}?`, preview, [], planChanges(tag, preview));
  if (!ok) return;
  const token = ok.force ? await forcedToken(`/sessions/${sid()}/restore/preview`, { ...body, force: true }, preview) : preview.token;
  const res = await api(`/sessions/${sid()}/restore`, { ...body, ...(ok.force ? { force: true } : {}), token });
  await afterRestore(`Restored to ${tag}`, res);
}

export async function previewUndo(tag, path) {
  const body = { workspace: state.workspace, tag, path };
  const preview = await api(`/sessions/${sid()}/undo`, { ...body, dryRun: true });
  const ok = await confirmPlan(`Undo ${path} to ${tag}?`, preview, [], planChanges(tag, preview, path));
  if (!ok) return;
  const token = ok.force ? await forcedToken(`/sessions/${sid()}/undo`, { ...body, force: true, dryRun: true }, preview) : preview.token;
  await afterRestore(`Undid ${path}`, await api(`/sessions/${sid()}/undo`, { ...body, force: ok.force || undefined, token }));
}

export async function previewRewind(tag, fork) {
  const body = { workspace: state.workspace, tag, fork };
  const preview = await api(`/sessions/${sid()}/rewind`, { ...body, dryRun: true });
  const said = preview.userMessage?.text ? h('p', {}, `The conversation goes back to turn ${preview.userMessage.turn}: `, h('q', {}, preview.userMessage.text)) : '';
  const hidden = preview.hidden?.length ? h('p.mute', {}, `${preview.hidden.length} later conversation entries ${fork ? 'stay in this session' : 'are hidden (kept in the log)'}.`) : '';
  const ok = await confirmPlan(fork ? `Fork a new session at ${tag}?` : `Rewind the session to ${tag}?`, preview, [said, hidden], planChanges(tag, preview));
  if (!ok) return;
  const token = ok.force ? await forcedToken(`/sessions/${sid()}/rewind`, { ...body, force: true, dryRun: true }, preview) : preview.token;
  const res = await api(`/sessions/${sid()}/rewind`, { ...body, force: ok.force || undefined, token });
  if (typeof res.session === 'string') state.session = res.session; // a fork continues in its new session
  await afterRestore(fork ? `Forked at ${tag}` : `Rewound to ${tag}`, res);
}
