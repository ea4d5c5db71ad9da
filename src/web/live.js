// The live stream: the daemon's SSE feed of the workspace's events, appended to the timeline as they
// come (or a reload when some were missed), resumed after a drop, and the live/offline badge.
import { $, api, guard, KEY, PAGE, SignedOut, signedOut, state } from './page.js';
import { loadSessions } from './sessions.js';
import { openSession, renderTimeline } from './timeline.js';

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

export function connectLive(resumeFrom) {
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
