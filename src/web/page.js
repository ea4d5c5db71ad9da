// The page's common ground (DESIGN §10 "Web timeline"): the shared state of the views, the element
// builder, the signed-in API client (the page key), times, and the error guard every action runs in.
// Every other module of the page imports this one; it imports none of them.
export const PAGE = 500;
export const $ = (sel) => document.querySelector(sel);
export const state = { workspace: '', session: null, events: [], total: 0, offset: 0, picked: [], es: null };

/** Builds an element: h('button.primary', {onclick}, 'text', child…). */
export function h(tag, attrs = {}, ...kids) {
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

export class SignedOut extends Error {}

// The page key (DESIGN §10 "Security"): the cookie alone opens no API route, since browsers send it to
// every port of 127.0.0.1. The login redirect hands the key over in the fragment (#k=…, never sent to
// a server); the page drops it from the address bar and keeps it in this origin's session storage.
export const KEY = (() => {
  const { location, sessionStorage, history } = window;
  const m = /^#k=([\w-]+)$/.exec(location.hash);
  if (m) {
    sessionStorage.setItem('ckpt-key', m[1]);
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem('ckpt-key') ?? '';
})();

export async function api(path, body) {
  const headers = { 'x-ckpt-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json', 'x-ckpt': '1' }) };
  const init = body === undefined ? { headers } : { method: 'POST', headers, body: JSON.stringify(body) };
  const res = await fetch(path, { credentials: 'same-origin', ...init });
  if (res.status === 401) throw new SignedOut();
  const json = await res.json();
  if (!res.ok) throw new Error(json.error ? `${json.error.code}: ${json.error.message}` : `HTTP ${res.status}`);
  return json;
}

export const q = (extra = {}) => `?${new URLSearchParams({ workspace: state.workspace, ...extra })}`;

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
export const timeEl = (iso) => h('time', { datetime: iso, title: dtf.format(new Date(iso)), class: 'mute' }, ago(iso));

export function signedOut() {
  document.body.replaceChildren(h('main.signed-out', {}, h('p', { id: 'not-signed-in' }, 'Not signed in: run ckpt open for a fresh address.')));
}

export async function guard(fn) {
  try {
    await fn();
  } catch (err) {
    if (err instanceof SignedOut) signedOut();
    else showError(err);
  }
}

export function showError(err) {
  $('#detail').replaceChildren(h('p.drift', { role: 'alert' }, String(err.message ?? err)));
}

export const sid = () => encodeURIComponent(state.session);

export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function snippet(v) {
  const t = typeof v === 'string' ? v : JSON.stringify(v);
  return t.length > 160 ? `${t.slice(0, 160)}…` : t;
}

/**
 * Calls that run against the order of the modules (a restore in a dialog reloads the session list and
 * the timeline, which open dialogs): app.js fills them in at start, so no module imports one that
 * imports it.
 */
export const late = { reload: async () => {} };
