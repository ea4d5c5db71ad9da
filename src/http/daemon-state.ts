// What the daemon keeps between requests: the open store, workspaces and session handles (a cached
// handle reads only what was appended to its log since its last read), and one touch tracker per
// workspace that has been scanned through the daemon (watched scans).
import { resolve } from 'node:path';
import { agentSessionId, CkptError, createTouchTracker, isCkptError, recoverSession, type AgentLink, type AgentSessionResult, type ScanResult, type Session, type Store, type TouchTracker, type Workspace } from '../index.js';

const WORKSPACE_ID = /^[0-9a-f]{20}$/;

/** `~latest` names the workspace's most recently updated session (not a valid session id, so no clash). */
export const LATEST = '~latest';
/** Session handles kept open (each holds its decoded log, so later reads decode only appends). */
const SESSION_CACHE = 64;
/** A workspace not scanned through the daemon for this long is no longer watched. */
const IDLE_WATCH_MS = 30 * 60_000;

export interface DaemonState {
  store: Store;
  /**
   * The workspace at an absolute root. Only `register` (a new session, an agent's hook) may add a
   * workspace to the store: any other request naming a folder the store does not know is NOT_FOUND
   * and writes nothing (issue 27 item 12: a same-site `<img src=/sessions?workspace=…>` made records).
   */
  workspace(path: string, options?: { register?: boolean }): Promise<Workspace>;
  /**
   * The session `id` (a unique prefix, or `~latest`) of the workspace. Opening it finishes an
   * interrupted restore first, except with `recover: false` (GETs change nothing: the next write does it).
   */
  session(workspacePath: string, id: string, options?: { recover?: boolean }): Promise<Session>;
  forget(workspace: Workspace, id: string): void;
  /** The session tied to an agent's session (found in the cache, else opened or created as by the hook command). */
  agentSession(workspacePath: string, link: AgentLink): Promise<AgentSessionResult>;
  /** A scan through the workspace's touch tracker: only the touched paths when they can be trusted, else the full scan. */
  scan(session: Session, options: { tool: string; full?: boolean }): Promise<ScanResult>;
  /** Scans done, how many of them looked only at watched paths, and how many ran in a child process. */
  readonly scans: { total: number; watched: number; inChild: number };
  /** The workspace's touch tracker, started on first use. */
  tracker(workspace: Workspace): TouchTracker;
  trackers(): TouchTracker[];
  close(): void;
}

/**
 * Runs a full scan of the session somewhere else than this process (the CLI runs it in a child
 * process): its peak memory — every path of the tree, the walk, the new index — is then returned to
 * the system when it ends, instead of staying in the resident daemon's heap (DESIGN §10 "Daemon").
 */
export type FullScan = (session: Session, tool: string) => Promise<ScanResult>;

export interface DaemonStateOptions {
  fullScan?: FullScan;
}

export function createDaemonState(store: Store, options: DaemonStateOptions = {}): DaemonState {
  const { fullScan } = options;
  const workspaces = new Map<string, Promise<Workspace>>();
  const sessions = new Map<string, Session>();
  const trackers = new Map<string, { tracker: TouchTracker; usedAt: number }>();
  // A workspace not scanned through the daemon for a while stops being watched (inotify watches and
  // memory are per folder); its next scan is a full one and starts watching again.
  const sweep = setInterval(() => {
    const cutoff = Date.now() - IDLE_WATCH_MS;
    for (const [id, t] of trackers) {
      if (t.usedAt < cutoff) {
        t.tracker.close();
        trackers.delete(id);
      }
    }
  }, 60_000);
  sweep.unref();

  const workspace = (path: string, options: { register?: boolean } = {}): Promise<Workspace> => {
    // A workspace id names any workspace of the store, another machine's too (read-only there).
    const byId = WORKSPACE_ID.test(path);
    if (!byId && !path.startsWith('/')) return Promise.reject(new CkptError('INVALID_ARGUMENT', `workspace must be an absolute path or a workspace id, got ${JSON.stringify(path)}`, { workspace: path }));
    const key = byId ? path : resolve(path);
    let ws = workspaces.get(key);
    if (!ws) {
      ws = byId ? store.openWorkspaceById(key) : store.openWorkspace(key, { register: options.register === true });
      workspaces.set(key, ws);
      ws.catch(() => workspaces.delete(key));
    }
    return ws;
  };

  const scans = { total: 0, watched: 0, inChild: 0 };
  const state: DaemonState = {
    store,
    workspace,
    scans,
    async session(workspacePath, id, options = {}) {
      const recover = options.recover !== false;
      const ws = await workspace(workspacePath).catch((err: unknown) => {
        // A folder the store does not know has no sessions (answered as before: no such session).
        if (isCkptError(err, 'NOT_FOUND')) throw new CkptError('SESSION_NOT_FOUND', `no session ${JSON.stringify(id)} in ${workspacePath} (the store knows no workspace there)`, { session: id, workspace: workspacePath });
        throw err;
      });
      const fresh = id === LATEST ? await ws.latest(undefined, { recover }) : undefined;
      const sid = fresh?.id ?? id;
      const key = `${ws.id}/${sid}`;
      const cached = sessions.get(key);
      if (cached) {
        // One stat (not a tail read): a log removed by another process is gone or empty, and one
        // that has not grown since this process read it needs no recovery check.
        const size = (await cached.ctx.backend.stat(cached.log.key))?.size;
        if (!size) {
          sessions.delete(key); // removed by another process
        } else {
          sessions.delete(key); // most recently used last
          sessions.set(key, cached);
          return recover ? recoverSession(cached, { logBytes: size }) : cached;
        }
      }
      const opened = fresh ?? (await ws.get(sid, { recover }));
      sessions.set(key, opened);
      if (sessions.size > SESSION_CACHE) sessions.delete(sessions.keys().next().value as string);
      return opened;
    },
    forget(ws, id) {
      sessions.delete(`${ws.id}/${id}`);
    },
    async agentSession(workspacePath, link) {
      const ws = await workspace(workspacePath, { register: true });
      // An agent works here: watch the workspace from now on, so its scans after shell tools can be watched ones.
      state.tracker(ws);
      const key = `${ws.id}/${agentSessionId(link.agent, link.externalId)}`;
      if (sessions.has(key)) {
        const s = await state.session(workspacePath, key.slice(ws.id.length + 1)).catch(() => undefined);
        if (s) return { session: s, created: false };
      }
      const opened = await ws.openAgentSession(link);
      sessions.set(key, opened.session);
      if (sessions.size > SESSION_CACHE) sessions.delete(sessions.keys().next().value as string);
      return opened;
    },
    async scan(s, options) {
      // Another machine's workspace (shared store): the session refuses (WRONG_MACHINE) before any
      // watcher is started on a folder of this machine that merely has the same path.
      if (s.ctx.workspace.foreign) return s.scan({ tool: options.tool });
      const tracker = state.tracker(await workspace(s.workspaceRoot));
      let res;
      try {
        if (fullScan) {
          // The set is taken under the scan lock (the scan asks for it there), so the scan that takes
          // it records it before another scan runs: taken before the lock, another session's scan
          // could take it, wait, and record the paths after this one found nothing and its prompt
          // began (a race probe: a prompt's tag missed hand edits made before it, under `ckpt serve`).
          let taken: Set<string> | undefined;
          const take = async () => (taken = await tracker.take());
          res = options.full ? undefined : await s.scan({ tool: options.tool, changedPaths: take, watchedOnly: true });
          if (!res) {
            // A watched scan that cannot answer exactly (a rule file, a folder removed…) gives way to
            // the full scan in a child, which records what the set held; until it has run, another
            // scan's set must hold those paths too; after it, those not touched since are dropped again.
            const covered = taken ? tracker.putBack(taken) : undefined;
            res = await fullScan(s, options.tool);
            covered?.();
            scans.inChild++;
          }
        } else {
          res = await s.scan({ tool: options.tool, changedPaths: options.full ? undefined : () => tracker.take() });
        }
      } catch (err) {
        tracker.invalidate();
        throw err;
      }
      scans.total++;
      if (res.watched !== undefined) scans.watched++;
      return res;
    },
    tracker(ws) {
      let t = trackers.get(ws.id);
      if (!t) {
        t = { tracker: createTouchTracker({ root: ws.root, storeDir: store.dir }), usedAt: 0 };
        trackers.set(ws.id, t);
      }
      t.usedAt = Date.now();
      return t.tracker;
    },
    trackers: () => [...trackers.values()].map((t) => t.tracker),
    close() {
      clearInterval(sweep);
      for (const t of trackers.values()) t.tracker.close();
      trackers.clear();
    },
  };
  return state;
}
