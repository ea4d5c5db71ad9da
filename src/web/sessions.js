// The session list of the chosen workspace: the fork tree (children under their parent, newest
// first), filtered by agent, with each session's agent, turns, files and whether it is live.
import { $, api, guard, h, plural, q, state, timeEl } from './page.js';
import { openSession } from './timeline.js';

let loads = 0;
export async function loadSessions() {
  const ticket = ++loads;
  const { sessions } = await api(`/web/sessions${q()}`);
  // Only the latest call's answer is shown: a slower one (the workspace the page opened on, when
  // another was picked meanwhile) must not replace the list of the workspace now selected.
  if (ticket !== loads) return;
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

export function renderSessions() {
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
