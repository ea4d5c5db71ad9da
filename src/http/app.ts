// The daemon's HTTP application (DESIGN §6, §10 "Daemon"): guards first — the Host header must name
// a loopback address (or the host the user explicitly chose), so a web page cannot reach the daemon
// through DNS rebinding; every route needs the bearer token; bodies are capped; no CORS headers are
// ever sent — then the routes, and one error mapping: `{error:{code,message,data}}` with the status
// of DESIGN §7 (httpStatusOf).
import { timingSafeEqual } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { CkptError, httpStatusOf, toCkptError } from '../index.js';
import type { DaemonState } from './daemon-state.js';
import type { EventHub } from './event-hub.js';
import { buildOpenApi } from './openapi.js';
import { createRouter } from './route.js';
import { addCheckpointRoutes } from './routes-checkpoints.js';
import { addInspectRoutes } from './routes-inspect.js';
import { addEventRoutes } from './routes-events.js';
import { addHookRoutes, isHookPath } from './routes-hooks.js';
import { addRestoreRoutes } from './routes-restore.js';
import { addSessionRoutes } from './routes-sessions.js';
import { addStoreRoutes } from './routes-store.js';
import { registerWebAssets } from './web-assets.js';
import { addWebRoutes } from './web-routes.js';
import { createWebLogin, isPublicPath, loginFailedPage, type WebLogin } from './web-login.js';

export const MAX_BODY_BYTES = 1024 * 1024;
const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export interface AppOptions {
  state: DaemonState;
  hub: EventHub;
  token: string;
  version: string;
  /** An explicitly chosen listen host that clients may also name in Host. */
  host?: string;
  /** Listening on a unix socket: the Host header is not checked (browsers cannot reach a socket). */
  socket?: boolean;
  /** Open SSE streams (ended on shutdown). */
  streams: Set<() => void>;
  /** Called for every error answered with a 5xx (logging). */
  onServerError?: (err: CkptError) => void;
  /** The web page's one-time codes and cookie sessions (default: a fresh one). */
  web?: WebLogin;
}

export function createApp(options: AppOptions): Hono {
  const app = new Hono();
  const allowedHosts = new Set(LOOPBACK_NAMES);
  if (options.host) allowedHosts.add(options.host.includes(':') && !options.host.startsWith('[') ? `[${options.host}]` : options.host);
  const token = Buffer.from(options.token);
  const web = options.web ?? createWebLogin();

  app.onError((err, c) => errorResponse(c, toCkptError(err), options.onServerError));
  app.notFound((c) => errorResponse(c, new CkptError('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`, { method: c.req.method, path: c.req.path })));

  app.use(async (c, next) => {
    if (!options.socket) {
      const host = hostName(c.req.header('host'));
      if (host === undefined || !allowedHosts.has(host)) {
        throw new CkptError('FORBIDDEN', `Host ${JSON.stringify(c.req.header('host') ?? '')} is not a loopback name: refused (DNS rebinding protection)`, { host: c.req.header('host') ?? null });
      }
    }
    // Hooks take the bearer token only: a browser's cookie must not be able to record into a session.
    if (isPublicPath(c.req.path) || (!isHookPath(c.req.path) && web.cookieAuthorized(c))) return next();
    const auth = c.req.header('authorization') ?? '';
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    const given = m ? Buffer.from(m[1]!) : undefined;
    if (!given || given.length !== token.length || !timingSafeEqual(given, token)) {
      if (c.req.path === '/' && c.req.method === 'GET') return c.html(loginFailedPage(), 401);
      throw new CkptError('UNAUTHORIZED', 'missing or wrong bearer token (ckpt serve --print-token shows it)', {});
    }
    await next();
  });
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => errorResponse(c, new CkptError('BLOB_TOO_LARGE', `request body over ${MAX_BODY_BYTES} bytes`, { maxBytes: MAX_BODY_BYTES })),
  });
  // A hook's body may carry whole files (a Write's content): the hook route reads it with the hook
  // input cap itself, and answers an oversized one as the hook command does (never blocking the agent).
  app.use((c, next) => (isHookPath(c.req.path) ? next() : limit(c, next)));

  const router = createRouter(app);
  addSessionRoutes(router, options.state);
  addCheckpointRoutes(router, options.state);
  addInspectRoutes(router, options.state);
  addRestoreRoutes(router, options.state, options.token);
  addStoreRoutes(router, options.state);
  addEventRoutes(router, options.hub, { streams: options.streams });
  addHookRoutes(app, router, options.state);
  router.add({ method: 'get', path: '/health', summary: 'the daemon is up: pid, store, version', handler: async () => ({
      ok: true,
      pid: process.pid,
      store: options.state.store.dir,
      version: options.version,
      watching: options.state.trackers().map((t) => ({ root: t.root, dirs: t.watchedDirs })),
      scans: options.state.scans,
      memory: process.memoryUsage(),
    }),
  });
  addWebRoutes(router, options.state);
  web.register(app);
  registerWebAssets(app);
  const openapi = buildOpenApi(router.docs, options.version);
  app.get('/openapi.json', (c) => c.json(openapi));
  return app;
}

function errorResponse(c: Context, err: CkptError, onServerError?: (err: CkptError) => void): Response {
  const status = httpStatusOf(err);
  if (status >= 500) onServerError?.(err);
  return c.json({ error: err.toJSON() }, status as 400);
}

/** The host part of a Host header (`name`, `name:port`, `[v6]:port`), lower-cased. */
function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? undefined : h.slice(0, end + 1);
  }
  const colon = h.indexOf(':');
  return colon < 0 ? h : h.slice(0, colon);
}
