// The daemon's HTTP application (DESIGN §6, §10 "Daemon"): guards first (request-guard.ts) — the
// Host header must name a loopback address (or the host the user explicitly chose), so a web page
// cannot reach the daemon through DNS rebinding; every route needs the bearer token; bodies are
// capped; no CORS headers are ever sent — then the routes, and one error mapping:
// `{error:{code,message,data}}` with the status of DESIGN §7 (httpStatusOf). The hook route is
// served in front of this app (hook-lane.ts); only its OpenAPI entry is here.
import { createHash } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { CkptError, httpStatusOf, toCkptError } from '../index.js';
import type { DaemonState } from './daemon-state.js';
import type { EventHub } from './event-hub.js';
import { buildOpenApi } from './openapi.js';
import { createRouter } from './route.js';
import { addCheckpointRoutes } from './routes-checkpoints.js';
import { addInspectRoutes } from './routes-inspect.js';
import { addEventRoutes, type StreamBacklog } from './routes-events.js';
import { addHookDocs, isHookPath } from './hook-lane.js';
import { unauthorized, type RequestGuard } from './request-guard.js';
import { addRestoreRoutes } from './routes-restore.js';
import { addSessionRoutes } from './routes-sessions.js';
import { addStoreRoutes } from './routes-store.js';
import { registerWebAssets } from './web-assets.js';
import { addWebRoutes } from './web-routes.js';
import { createWebLogin, isPublicPath, loginFailedPage, type WebLogin } from './web-login.js';
import { createStreamGate, type StreamLimits } from './stream-gate.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** Who made the request, for per-client limits: `web:<digest of its sign-in>` or `token`. */
    ckptClient: string;
  }
}

export const MAX_BODY_BYTES = 1024 * 1024;

export interface AppOptions {
  state: DaemonState;
  hub: EventHub;
  token: string;
  /** Host and bearer-token checks (shared with the hook lane). */
  guard: RequestGuard;
  version: string;
  /** Open SSE streams (ended on shutdown). */
  streams: Set<() => void>;
  /** Caps on open SSE streams per client and overall (default DEFAULT_STREAM_LIMITS). */
  streamLimits?: StreamLimits;
  /** How far one SSE stream may fall behind before it is ended (default DEFAULT_STREAM_BACKLOG). */
  streamBacklog?: StreamBacklog;
  /** Called for every error answered with a 5xx (logging). */
  onServerError?: (err: CkptError) => void;
  /** The web page's one-time codes and cookie sessions (default: a fresh one). */
  web?: WebLogin;
}

export function createApp(options: AppOptions): Hono {
  const app = new Hono();
  const { guard } = options;
  const web = options.web ?? createWebLogin();

  app.onError((err, c) => errorResponse(c, toCkptError(err), options.onServerError));
  app.notFound((c) => errorResponse(c, new CkptError('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`, { method: c.req.method, path: c.req.path })));

  // Answers carry the user's files and prompts: never kept in a browser's disk cache (outside the
  // private store, beyond gc and session rm: a probe found a `.env` there), never sniffed into HTML.
  // Static pages set their own (revalidated) policy.
  app.use(async (c, next) => {
    await next();
    if (!c.res.headers.has('cache-control')) c.res.headers.set('cache-control', 'no-store');
    c.res.headers.set('x-content-type-options', 'nosniff');
  });
  app.use(async (c, next) => {
    guard.checkHost(c.req.header('host'), (c.env as { incoming?: { socket?: { localAddress?: string } } } | undefined)?.incoming?.socket?.localAddress);
    // Hook paths take the bearer token only: a browser's cookie must not be able to record into a session.
    if (isPublicPath(c.req.path)) return next();
    const cookie = isHookPath(c.req.path) ? undefined : web.cookieAuthorized(c);
    if (cookie !== undefined) {
      // One browser sign-in is one client (a digest: the cookie itself must not sit in memory twice).
      c.set('ckptClient', `web:${createHash('sha256').update(cookie).digest('hex').slice(0, 16)}`);
      return next();
    }
    if (!guard.hasToken(c.req.header('authorization'))) {
      if (c.req.path === '/' && c.req.method === 'GET') return c.html(loginFailedPage(), 401);
      throw unauthorized();
    }
    c.set('ckptClient', 'token');
    await next();
  });
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => errorResponse(c, new CkptError('BLOB_TOO_LARGE', `request body over ${MAX_BODY_BYTES} bytes`, { maxBytes: MAX_BODY_BYTES })),
  });
  app.use(limit);

  const router = createRouter(app);
  addSessionRoutes(router, options.state);
  addCheckpointRoutes(router, options.state);
  addInspectRoutes(router, options.state);
  addRestoreRoutes(router, options.state, options.token);
  addStoreRoutes(router, options.state);
  addEventRoutes(router, options.hub, { streams: options.streams, gate: createStreamGate(options.streamLimits), ...(options.streamBacklog ? { backlog: options.streamBacklog } : {}) });
  addHookDocs(router);
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
  web.register(app, (h) => guard.hasToken(h));
  registerWebAssets(app);
  const openapi = buildOpenApi(router.docs, options.version);
  app.get('/openapi.json', (c) => c.json(openapi));
  return app;
}

function errorResponse(c: Context, err: CkptError, onServerError?: (err: CkptError) => void): Response {
  const status = httpStatusOf(err);
  if (status >= 500) onServerError?.(err);
  if (typeof err.data.retryAfterSeconds === 'number') c.header('retry-after', String(err.data.retryAfterSeconds));
  return c.json({ error: err.toJSON() }, status as 400);
}
