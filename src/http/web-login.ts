// The web page's login (DESIGN §10 "Web timeline"): `ckpt serve` / `ckpt open` get a one-time code
// (POST /web/code, bearer token), the browser opens /login?code=…, the daemon consumes the code and
// answers with an HttpOnly, SameSite=Strict session cookie and a redirect to `/`, so the code never
// stays in the address bar. The API accepts that cookie alongside the bearer token; a request that
// changes something with the cookie must also carry `X-Ckpt: 1`, which a cross-site form cannot send.
// Codes and sessions live in memory only: a restarted daemon asks for a new code.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { CkptError } from '../index.js';

export const COOKIE_NAME = 'ckpt_session';
const CODE_TTL_MS = 5 * 60_000;
const SESSION_TTL_MS = 12 * 3600_000;
/** The Content-Security-Policy of every page the daemon serves: nothing from anywhere else. */
export const PAGE_CSP = "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export interface WebLogin {
  /** A fresh one-time code (valid for 5 minutes, usable once). */
  issueCode(): string;
  /** Whether the request carries a live session cookie (and, for a write, the X-Ckpt header). */
  cookieAuthorized(c: Context): boolean;
  /** Registers GET /login and POST /web/code (the latter behind the bearer guard). */
  register(app: Hono): void;
}

export function createWebLogin(): WebLogin {
  const codes = new Map<string, number>();
  const sessions = new Map<string, number>();
  const sweep = (m: Map<string, number>): void => {
    const now = Date.now();
    for (const [k, until] of m) if (until < now) m.delete(k);
  };
  const takeFrom = (m: Map<string, number>, given: string, consume: boolean): boolean => {
    sweep(m);
    const g = Buffer.from(given);
    for (const k of m.keys()) {
      const kb = Buffer.from(k);
      if (kb.length === g.length && timingSafeEqual(kb, g)) {
        if (consume) m.delete(k);
        return true;
      }
    }
    return false;
  };
  const issueCode = (): string => {
    sweep(codes);
    const code = randomBytes(18).toString('base64url');
    codes.set(code, Date.now() + CODE_TTL_MS);
    return code;
  };
  return {
    issueCode,
    cookieAuthorized(c) {
      const value = cookieValue(c.req.header('cookie'), COOKIE_NAME);
      if (!value || !takeFrom(sessions, value, false)) return false;
      return c.req.method === 'GET' || c.req.method === 'HEAD' || c.req.header('x-ckpt') === '1';
    },
    register(app) {
      app.get('/login', (c) => {
        const code = c.req.query('code') ?? '';
        c.header('cache-control', 'no-store');
        c.header('referrer-policy', 'no-referrer');
        c.header('content-security-policy', PAGE_CSP);
        if (!code || !takeFrom(codes, code, true)) {
          return c.html(loginFailedPage(), 401);
        }
        const session = randomBytes(32).toString('base64url');
        sessions.set(session, Date.now() + SESSION_TTL_MS);
        c.header('set-cookie', `${COOKIE_NAME}=${session}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_TTL_MS / 1000}`);
        // 303 to `/`: the address bar (and the history entry) no longer holds the code.
        return c.redirect('/', 303);
      });
      app.post('/web/code', (c) => {
        if (c.req.header('authorization') === undefined) throw new CkptError('UNAUTHORIZED', 'a login code needs the bearer token', {});
        return c.json({ code: issueCode(), expiresInMs: CODE_TTL_MS });
      });
    },
  };
}

/** Paths reachable without token or cookie: the login exchange itself. */
export function isPublicPath(path: string): boolean {
  return path === '/login';
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function loginFailedPage(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>ckpt — sign in</title>
<meta name="color-scheme" content="light dark"></head><body style="font-family:system-ui;max-width:40em;margin:3em auto">
<h1>ckpt: not signed in</h1><p id="not-signed-in">This address needs a fresh one-time code. Run <code>ckpt open</code> in a terminal
(or restart <code>ckpt serve</code>) and use the address it prints.</p></body></html>`;
}
