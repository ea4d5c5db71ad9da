// The web timeline's static files (DESIGN §10 "Web timeline"): src/web/ (copied to dist/web/ by
// `npm run build`) read once at start and served from memory at `/` and `/web/<name>`, behind the
// same guard as the API (cookie or token), with a `default-src 'self'` CSP: the page loads nothing
// from anywhere else and works offline. Each file is gzipped once at start and sent gzipped to a
// browser that accepts it (the highlighter is three times smaller so).
import { readFileSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { Hono } from 'hono';
import { CkptError } from '../index.js';
import { PAGE_CSP } from './web-login.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface WebAsset {
  type: string;
  body: Buffer;
  gzip: Buffer;
}

/** The page's files by name (only the served types; nothing else in the folder is reachable). */
export function loadWebAssets(dir = fileURLToPath(new URL('../web/', import.meta.url))): Map<string, WebAsset> {
  const assets = new Map<string, WebAsset>();
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return assets;
  }
  for (const name of names) {
    const ext = name.slice(name.lastIndexOf('.'));
    const type = TYPES[ext];
    if (!type || name.endsWith('.test.js')) continue;
    const body = readFileSync(new URL(name, `file://${dir.endsWith('/') ? dir : `${dir}/`}`));
    assets.set(name, { type, body, gzip: gzipSync(body, { level: 9 }) });
  }
  return assets;
}

export function registerWebAssets(app: Hono, assets = loadWebAssets()): void {
  const send = (name: string, acceptEncoding: string | undefined): Response => {
    const a = assets.get(name);
    if (!a) throw new CkptError('NOT_FOUND', `no page asset ${name}`, { name });
    const gzip = /\bgzip\b/.test(acceptEncoding ?? '');
    return new Response(new Uint8Array(gzip ? a.gzip : a.body), {
      headers: {
        ...(gzip ? { 'content-encoding': 'gzip' } : {}),
        vary: 'accept-encoding',
        'content-type': a.type,
        'content-security-policy': PAGE_CSP,
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      },
    });
  };
  app.get('/', (c) => send('index.html', c.req.header('accept-encoding')));
  app.get('/web/:name', (c) => send(c.req.param('name'), c.req.header('accept-encoding')));
}
