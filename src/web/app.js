// The web timeline (DESIGN §10 "Web timeline"): vanilla JS over the daemon's REST API and SSE
// stream, signed in by the session cookie (never a token in the page). Sessions per workspace with
// the fork tree, a session's events grouped by turn (paged), diffs between any two points or now,
// restore / undo-one-file / rewind / fork always through a preview and an explicit confirmation.
//
// This is the page's entry (index.html loads it as a module): the workspace picker, the keyboard and
// the start. The views are modules beside it — page.js (state, API, element builder), sessions.js,
// timeline.js, diff.js, dialogs.js, live.js — served as they are from src/ and bundled into one
// dist/web/app.js by `npm run build` (scripts/bundle-web.js).
import { $, api, guard, h, late, state } from './page.js';
import { connectLive } from './live.js';
import { loadSessions, renderSessions } from './sessions.js';
import { openSession } from './timeline.js';

late.reload = async () => {
  await loadSessions();
  await openSession(state.session);
};

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
  if (state.workspace !== id) return; // another workspace was picked meanwhile: it opens its own session
  const first = $('#sessions .session');
  if (first && !state.session) first.click();
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
