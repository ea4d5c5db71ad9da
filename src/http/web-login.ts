// The web page's login (DESIGN §10 "Web timeline"): `ckpt serve` / `ckpt open` get a one-time code
// (POST /web/code, bearer token), the browser opens /login?code=…, the daemon consumes the code and
// answers with an HttpOnly, SameSite=Strict session cookie and a redirect to `/`, so the code never
// stays in the address bar. The API accepts that cookie alongside the bearer token; a request that
// changes something with the cookie must also carry `X-Ckpt: 1`, which a cross-site form cannot send.
// Codes and sessions live in memory only: a restarted daemon asks for a new code.
//
// The cookie alone is not enough (issue 27 item 2): browsers send it to every port of 127.0.0.1
// (cookies are not port-scoped, and all loopback ports are one "site" for SameSite), so a dev server
// the agent started, or another local user's listener, receives it. Each cookie session therefore has
// a second secret, the page key, handed to the page in the login redirect's URL fragment (`/#k=…`:
// a fragment is never sent to any server) and kept by the page in its own origin's storage; every API
// request carries it in `X-Ckpt-Key` (the EventSource, which cannot set headers, as `?key=`). The
// cookie alone opens only the page shell and its static assets, which hold no data.
//
// `/login` answers only the daemon's own user (peer-uid.ts, Linux): `ckpt open` passes the code on
// xdg-open's command line, readable by every local user, who could otherwise redeem it first.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { CkptError } from '../index.js';
import { peerUid, type PeerSocket } from './peer-uid.js';

export const COOKIE_NAME = 'ckpt_session';
const CODE_TTL_MS = 5 * 60_000;
const SESSION_TTL_MS = 12 * 3600_000;
/** The Content-Security-Policy of every page the daemon serves: nothing from anywhere else. */
export const PAGE_CSP = "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export interface WebLogin {
  /** A fresh one-time code (valid for 5 minutes, usable once). */
  issueCode(): string;
  /**
   * The live session cookie the request carries, when it also carries that session's page key
   * (`X-Ckpt-Key`; `?key=` on GET /events) and, for a write, the X-Ckpt header; else undefined. The
   * page shell and its static assets need the cookie only.
   */
  cookieAuthorized(c: Context): string | undefined;
  /** Registers GET /login and POST /web/code (the latter checks the bearer token itself). */
  register(app: Hono, hasToken: (authorization: string | undefined) => boolean): void;
}

export function createWebLogin(): WebLogin {
  const codes = new Map<string, { until: number }>();
  /** Cookie value -> its expiry and page key. */
  const sessions = new Map<string, { until: number; key: string }>();
  const sweep = (m: Map<string, { until: number }>): void => {
    const now = Date.now();
    for (const [k, v] of m) if (v.until < now) m.delete(k);
  };
  const takeFrom = <V extends { until: number }>(m: Map<string, V>, given: string, consume: boolean): V | undefined => {
    sweep(m);
    for (const [k, v] of m) {
      if (sameSecret(k, given)) {
        if (consume) m.delete(k);
        return v;
      }
    }
    return undefined;
  };
  const issueCode = (): string => {
    sweep(codes);
    const code = randomBytes(18).toString('base64url');
    codes.set(code, { until: Date.now() + CODE_TTL_MS });
    return code;
  };
  return {
    issueCode,
    cookieAuthorized(c) {
      // Every cookie of that name, not the first: a page on another loopback port can set one for
      // this host with a longer Path (`ckpt_session=junk; Path=/sessions`), which the browser then
      // sends first, and the page was signed out for good, a new sign-in included (a probe, 2026-12-06).
      let value: string | undefined;
      let session: { until: number; key: string } | undefined;
      for (const v of cookieValues(c.req.header('cookie'), COOKIE_NAME)) {
        session = takeFrom(sessions, v, false);
        if (session) {
          value = v;
          break;
        }
      }
      if (!session) return undefined;
      const read = c.req.method === 'GET' || c.req.method === 'HEAD';
      if (read && isPageAsset(c.req.path)) return value;
      const key = c.req.header('x-ckpt-key') ?? (read && c.req.path === '/events' ? c.req.query('key') : undefined);
      if (key === undefined || !sameSecret(session.key, key)) return undefined;
      return read || c.req.header('x-ckpt') === '1' ? value : undefined;
    },
    register(app, hasToken) {
      app.get('/login', (c) => {
        const code = c.req.query('code') ?? '';
        c.header('cache-control', 'no-store');
        c.header('referrer-policy', 'no-referrer');
        c.header('content-security-policy', PAGE_CSP);
        // `ckpt open` passes the code on xdg-open's command line, which every local user can read: a
        // connection another user made is refused before the code is looked at, so it stays the browser's.
        if (!ownUser((c.env as { incoming?: { socket?: PeerSocket } } | undefined)?.incoming?.socket)) {
          return c.html(otherUserPage(), 403);
        }
        // HEAD (a link preview, a prefetch) changes nothing, as every GET-like request: it says whether
        // the code is good without spending it or signing anyone in (a probe, 2026-12-06: it spent it).
        if (c.req.method === 'HEAD') return c.body(null, code && takeFrom(codes, code, false) ? 200 : 401);
        if (!code || !takeFrom(codes, code, true)) {
          return c.html(loginFailedPage(), 401);
        }
        const session = randomBytes(32).toString('base64url');
        const key = randomBytes(32).toString('base64url');
        sessions.set(session, { until: Date.now() + SESSION_TTL_MS, key });
        c.header('set-cookie', `${COOKIE_NAME}=${session}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_TTL_MS / 1000}`);
        // 303 to `/`: the address bar (and the history entry) no longer holds the code. The page key
        // rides in the fragment, which the page removes from the address bar at once.
        return c.redirect(`/#k=${key}`, 303);
      });
      app.post('/web/code', (c) => {
        // The token itself, not just some Authorization header: a cookie plus any value minted codes (issue 27 item 3).
        if (!hasToken(c.req.header('authorization'))) throw new CkptError('UNAUTHORIZED', 'a login code needs the bearer token', {});
        return c.json({ code: issueCode(), expiresInMs: CODE_TTL_MS });
      });
    },
  };
}

/**
 * False when the connection is known to come from another local user than the daemon's (Linux,
 * peer-uid.ts). Root is trusted (docs/SECURITY.md; WSL's localhost relay connects as root).
 */
function ownUser(socket: PeerSocket | undefined): boolean {
  const uid = socket && process.getuid ? peerUid(socket) : undefined;
  return uid === undefined || uid === 0 || uid === process.getuid!();
}

function otherUserPage(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>ckpt — sign in</title></head>
<body style="font-family:system-ui;max-width:40em;margin:3em auto"><h1>ckpt: refused</h1><p id="other-user">This sign-in
came from another user of this machine than the one running the ckpt daemon.</p></body></html>`;
}

/** The page shell and its static files (no data in them): the cookie alone opens them, so a browser can navigate to them. */
function isPageAsset(path: string): boolean {
  return path === '/' || /^\/web\/[\w.-]+\.(?:js|css|svg|png|ico|map)$/.test(path);
}

function sameSecret(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** Paths reachable without token or cookie: the login exchange itself. */
export function isPublicPath(path: string): boolean {
  return path === '/login';
}

/** Every value of the cookie `name` in a Cookie header, in the order sent (at most 16). */
export function cookieValues(header: string | undefined, name: string): string[] {
  const values: string[] = [];
  if (!header) return values;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
    if (values.length === 16) break;
  }
  return values;
}

export function loginFailedPage(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>ckpt — sign in</title>
<meta name="color-scheme" content="light dark"></head><body style="font-family:system-ui;max-width:40em;margin:3em auto">
<h1>ckpt: not signed in</h1><p id="not-signed-in">This address needs a fresh one-time code. Run <code>ckpt open</code> in a terminal
(or restart <code>ckpt serve</code>) and use the address it prints.</p></body></html>`;
}
