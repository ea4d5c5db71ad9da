// Running the daemon (DESIGN §10 "Daemon"): one per store (claim file; a second start fails with
// LOCKED naming where the first listens), listening on 127.0.0.1 unless a host is chosen explicitly,
// or on a unix socket (mode 0600). `close()` stops accepting, ends the live event streams, lets the
// requests in flight (writes among them) finish, then releases the claim.
import { chmod, lstat, unlink } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { assertNoDaemon, catchUpOwnersOnce, owerId, claimDaemon, CkptError, createAfterCallQueue, invalidValue, daemonToken, hookKey, lastDaemonPort, type DaemonInfo, type Store } from '../index.js';
import { createApp } from './app.js';
import { createDaemonState, type FullScan } from './daemon-state.js';
import { createEventHub } from './event-hub.js';
import { createHookLane } from './hook-lane.js';
import { createQuietGate } from './quiet-gate.js';
import { createRequestGuard, isLoopbackAddress } from './request-guard.js';
import type { StreamBacklog } from './routes-events.js';
import type { StreamLimits } from './stream-gate.js';

export interface DaemonOptions {
  store: Store;
  /** TCP port (default 0: any free port). */
  port?: number;
  /** Listen host (default 127.0.0.1); a non-loopback one only with `allowRemote`. */
  host?: string;
  /**
   * Listen on a non-loopback `host` (`ckpt serve --host H --allow-remote`): the token, the cookie and
   * every file the API serves then cross the network in clear text. Refused without it (issue 27 item 9).
   */
  allowRemote?: boolean;
  /** Listen on this unix socket instead of TCP. */
  socket?: string;
  version: string;
  /** Server-side failures (5xx) and feed errors, for the daemon's log. */
  log?: (line: string) => void;
  /** Where full scans run (default: in this process; `ckpt serve` runs them in a child process). */
  fullScan?: FullScan;
  /**
   * Called once no request has been in flight for this long (the on-demand daemon exits then; the
   * next once-per-prompt hook starts it again). Default: never.
   */
  idle?: { ms: number; onIdle: () => void };
  /** Caps on live `GET /events` streams per client and overall (default 32 and 256; 429 beyond). */
  streamLimits?: StreamLimits;
  /** How far one `GET /events` stream may fall behind its events before it is ended (tests; default as the hub keeps). */
  streamBacklog?: StreamBacklog;
}

export interface RunningDaemon {
  info: DaemonInfo;
  url: string;
  token: string;
  /** Graceful stop: in-flight requests finish first (at most `graceMs`, default 30 s). */
  close(graceMs?: number): Promise<void>;
}

export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const { store } = options;
  const host = options.host ?? '127.0.0.1';
  if (!options.socket && !isLoopbackAddress(host)) {
    if (!options.allowRemote) {
      throw invalidValue('--host', host, `--host ${host} is not a loopback address: the daemon would serve its token, cookie and your files to the network in clear text; add --allow-remote if you really mean it`, { host });
    }
    options.log?.(`WARNING: listening on ${host}, beyond this machine: the bearer token, the web cookie and every file the API serves cross the network in clear text (no TLS). Use 127.0.0.1 and an SSH tunnel instead where you can.`);
  }
  // A daemon before this one was killed (its claim is left): owner records of its answers may be
  // missing. This daemon's claim says so (readers catch up the index they read) until close.
  const { deadSince: ownersOwedSince } = await assertNoDaemon(store.daemonCtx);
  const token = await daemonToken(store.daemonCtx);
  const hookKeyText = await hookKey(store.daemonCtx);
  // A new daemon: the next time the hooks cannot reach one, their fallback says so again (hook-client.ts).
  await store.daemonCtx.backend.remove(FALLBACK_NOTE_KEY).catch(() => {});
  const state = createDaemonState(store, { fullScan: options.fullScan });
  const hub = await createEventHub(store, (err) => options.log?.(`event feed: ${escapeForLog((err as Error).message)}`));
  // The owner index (and the store copy of what it names) follows each answer at once: other
  // processes (a CLI restore, a scan in a child) read it. The store copy of a capture's inline
  // content waits until no hook has been answered for a while (quiet-gate.ts).
  const quiet = createQuietGate();
  const logAfter = (err: unknown): void => options.log?.(`after an answer: ${escapeForLog((err as Error).message)}`);
  const afterAnswer = createAfterCallQueue(logAfter);
  const whenIdle = createAfterCallQueue(logAfter, quiet.wait);
  store.ctx.options.defer = afterAnswer.add;
  store.ctx.options.deferIdle = whenIdle.add;
  /** What start-up set up besides the server: the feed, the session cache, the after-answer queue. */
  const closeParts = (): void => {
    hub.close();
    state.close();
    delete store.ctx.options.defer;
    delete store.ctx.options.deferIdle;
  };
  const streams = new Set<() => void>();
  const guard = createRequestGuard({ token, host: options.host, socket: options.socket !== undefined });
  // Escaped: a message may quote request values, and a newline in one must not forge a log line (issue 27 item 8).
  const onServerError = (err: CkptError): void => options.log?.(`error ${err.code}: ${escapeForLog(err.message)}`);
  const app = createApp({ state, hub, token, guard, version: options.version, streams, onServerError, ...(options.streamLimits ? { streamLimits: options.streamLimits } : {}), ...(options.streamBacklog ? { streamBacklog: options.streamBacklog } : {}) });
  let lastActive = Date.now();
  let tcpPort: number | undefined;
  // Once an agent's HTTP hooks post here, the port is theirs: an idle exit would free it for any local
  // process to take, and the agent would send it every tool call (found by a daemon probe).
  let httpHooksPostHere = false;
  const hooks = createHookLane({ state, guard, onServerError, hookKey: hookKeyText, port: () => tcpPort, onHttpHook: () => void (httpHooksPostHere = true) });
  const toApp = getRequestListener(app.fetch);
  const server = createServer((req, res) => {
    if (!hooks(req, res)) return void toApp(req, res);
    quiet.busy();
    res.once('close', quiet.done);
  });
  // A request is in flight from its arrival until its response is written (or its socket closes).
  let inFlight = 0;
  let idle: (() => void) | undefined;
  server.on('request', (_req: unknown, res: NodeJS.EventEmitter) => {
    inFlight++;
    res.once('close', () => {
      lastActive = Date.now();
      if (--inFlight === 0) idle?.();
    });
  });

  const listen = (target: { socket: string } | { port: number }): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      const done = (): void => {
        server.off('error', reject);
        resolve();
      };
      if ('socket' in target) {
        // The socket is bound within listen(): made 0600 from the start (a chmod after it left a
        // permissive umask's 0777 for a moment: a probe), whatever the umask.
        const umask = process.umask(0o177);
        try {
          server.listen(target.socket, done);
        } finally {
          process.umask(umask);
        }
      } else server.listen(target.port, host, done);
    });
  try {
    if (options.socket) {
      await removeStaleSocket(options.socket);
      await listen({ socket: options.socket });
    } else if (options.port !== undefined) {
      await listen({ port: options.port });
    } else {
      // Without --port, the port of the last start when it is free (installed HTTP hooks name it), else any.
      const last = await lastDaemonPort(store.daemonCtx);
      await (last === undefined ? listen({ port: 0 }) : listen({ port: last }).catch(() => listen({ port: 0 })));
    }
  } catch (err) {
    closeParts();
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') throw new CkptError('LOCKED', `${options.socket ?? `${host}:${options.port}`} is already in use: pick another --port, or leave it out (any free port)`, { errno: e.code }, { cause: err });
    throw err;
  }
  if (options.socket) await chmod(options.socket, 0o600);
  const addr = server.address() as AddressInfo | string;
  // What `localhost` resolved to is checked where it is bound (a hosts file may name another address).
  if (typeof addr !== 'string' && !options.allowRemote && !isLoopbackAddress(addr.address)) {
    await new Promise((resolve) => server.close(resolve));
    closeParts();
    throw invalidValue('--host', host, `--host ${host} was bound to ${addr.address}, not a loopback address: the daemon would serve your files beyond this machine; use 127.0.0.1, or add --allow-remote if you really mean it`, { host, address: addr.address });
  }
  const url = typeof addr === 'string' ? `unix:${addr}` : `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
  if (typeof addr !== 'string') tcpPort = addr.port;

  let claim;
  try {
    const owed = ownersOwedSince !== undefined ? { ownersOwedSince } : {};
    // Its size cap: a client with another one records in its own process (daemon-scan.ts, hook-client.ts).
    const cap = { maxBlobBytes: store.daemonCtx.options.maxBlobBytes };
    claim = await claimDaemon(store.daemonCtx, typeof addr === 'string' ? { url, socket: addr, ...owed, ...cap } : { url, host: addr.address, port: addr.port, ...owed, ...cap });
  } catch (err) {
    await new Promise((resolve) => server.close(resolve));
    closeParts();
    throw err;
  }

  const idleTimer = options.idle
    ? setInterval(() => {
        if (inFlight === 0 && !httpHooksPostHere && Date.now() - lastActive >= options.idle!.ms) {
          clearInterval(idleTimer);
          options.idle!.onIdle();
        }
      }, Math.max(50, Math.min(60_000, options.idle.ms / 4)))
    : undefined;
  idleTimer?.unref();
  // Every workspace of this machine caught up in the background, so that none still owes once the claim is gone.
  // Marked as this running daemon's (the mark readers compute while it runs): once it dies, what it owes itself is caught up anew.
  const caughtUp = ownersOwedSince === undefined ? Promise.resolve() : catchUpWorkspaces(store, ownersOwedSince, owerId(process.pid, claim.info.startedAt, 'running')).catch(logAfter);
  let closing: Promise<void> | undefined;
  return {
    info: claim.info,
    url,
    token,
    close(graceMs = 30_000) {
      closing ??= (async () => {
        clearInterval(idleTimer);
        const closed = new Promise((resolve) => server.close(resolve));
        for (const end of streams) end();
        if (inFlight > 0) {
          await new Promise<void>((resolve) => {
            idle = resolve;
            setTimeout(resolve, graceMs).unref();
          });
        }
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        await closed;
        delete store.ctx.options.defer;
        delete store.ctx.options.deferIdle;
        const drained = Promise.all([afterAnswer.drain(), whenIdle.drain()]);
        quiet.wake(); // the idle queue's item need not wait out the quiet period
        await drained;
        closeParts();
        await caughtUp;
        await claim.release();
        if (options.socket) await unlink(options.socket).catch(() => {});
      })();
      return closing;
    },
  };
}

/** Catches up the owner index of every workspace of this machine with the logs since `sinceMs` (owner-index.ts). */
async function catchUpWorkspaces(store: Store, sinceMs: number, by: string): Promise<void> {
  for (const { id } of await store.listWorkspaces()) {
    const ws = await store.openWorkspaceById(id).catch(() => undefined);
    if (ws && !ws.ctx.workspace.foreign) await catchUpOwnersOnce(ws.ctx, sinceMs, by).catch(() => {});
  }
}

/** Written by a hook client that found no daemon and recorded in-process (it said so once); removed by a daemon's start. */
export const FALLBACK_NOTE_KEY = 'daemon/fallback-noted';

/** One log line whatever the text: control characters (newlines, ESC, NUL) become \\uXXXX escapes. */
export function escapeForLog(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A socket file left by a daemon that died (the claim was checked first) is removed; anything else at the path is not. */
async function removeStaleSocket(path: string): Promise<void> {
  const st = await lstat(path).catch(() => undefined);
  if (!st) return;
  if (!st.isSocket()) throw new CkptError('INVALID_ARGUMENT', `${path} exists and is not a socket`, { socket: path });
  await unlink(path);
}
