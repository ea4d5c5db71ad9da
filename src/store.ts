// Opening a store (DESIGN §2, §3): where it lives, its store.json, the backend and blob store, and
// the workspaces inside it. The entry point of the library.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { CkptError, isCkptError } from './errors.js';
import { parseSize } from './format/size.js';
import { DEFAULT_MAX_BLOB_BYTES, type CkptOptions, type StoreContext, type WorkspaceContext } from './context.js';
import type { StoreBackend } from './storage/backend.js';
import { createFsBackend } from './storage/fs/fs-backend.js';
import { STORE_DIR_MODE, tightenStore } from './storage/fs/fs-private.js';
import type { SharedBackend } from './storage/shared/shared-backend.js';
import type { AppendListener } from './storage/shared/shared-notify.js';
import { isSharedStoreUrl } from './storage/shared/store-url.js';
import { LOCK_SUFFIX, TEMP_MARK } from './storage/store-key.js';
import { machineId } from './workspace/machine-id.js';
import { createBlobStore } from './storage/blob-store.js';
import { createSessionStore, type ForkOptions, type SessionStore } from './session/session-store.js';
import { resolveTagSeq } from './session/positions.js';
import { timelinePosition } from './session/workspace-timeline.js';
import { findSession } from './session/find-session.js';
import { Session } from './api/session.js';
import { recoverSession } from './restore/recover.js';
import { forkPointRecord, otherHistories } from './restore/fork-record.js';
import { ensureBaseline, hasBaseline } from './scan/baseline.js';
import { scan } from './scan/scan.js';
import { OUTSIDE_TOOL } from './format/event.js';
import { forgetScanIndexes } from './scan/scan-persist.js';
import { agentSessionId, type AgentLink } from './session/agent-link.js';
import { createAfterCallQueue } from './session/after-call.js';
import type { CreateSessionOptions, SessionFilter } from './session/session-store.js';
import { resolveWorkspace } from './workspace/workspace-id.js';
import { ownersOwed } from './daemon/daemon-files.js';

export const STORE_FORMAT = 1;

export interface OpenStoreOptions extends Partial<CkptOptions> {
  /**
   * Store folder, or a shared store URL (`postgres://user@host:port/db?blobs=s3://bucket&endpoint=…`);
   * default `$CKPT_STORE`, else `$CKPT_HOME`, else `$XDG_DATA_HOME/ckpt`, else `~/.local/share/ckpt`.
   */
  dir?: string;
  /** Only an existing folder store (its `store.json`): NOT_FOUND instead of making one (a copy's source, read commands). */
  existing?: boolean;
  /**
   * With `existing`: a folder that holds no store yet opens as an empty store instead of NOT_FOUND,
   * and nothing is made (no folder, no store.json): the default store on a fresh machine, read by a
   * command that only reads. A write through it would create files; callers only read.
   */
  missingAsEmpty?: boolean;
}

export interface AgentSessionResult {
  session: Session;
  /** True when this call created it. */
  created: boolean;
}

/** Fork options of a workspace: also from a session of another workspace of the store (`fromWorkspace`: its id). */
export type WorkspaceForkOptions = Omit<ForkOptions, 'from'> & {
  fromWorkspace?: string;
  /** Fork at this tag of the source session (N, N.K or @S) instead of `atSeq`. */
  atTag?: string;
};

export interface Workspace extends Omit<SessionStore<Session>, 'fork'> {
  /**
   * The session recording an agent's conversation, created (with the workspace's baseline) on first
   * use. Its id is derived from the agent's session id (agentSessionId), so finding it is one read of
   * its log's tail; the link is stored as session info.
   */
  openAgentSession(link: AgentLink, options?: Omit<CreateSessionOptions, 'id' | 'info'>): Promise<AgentSessionResult>;

  /**
   * Forks session `id` at a position into a new session here. With `fromWorkspace`, the session is one
   * of another workspace of this store — on a shared store, typically another machine's — and the fork
   * lets this workspace restore that history into its own folder.
   */
  fork(id: string, options?: WorkspaceForkOptions): Promise<Session>;
  /**
   * As the session store's: opening a session finishes (or abandons) an interrupted restore first
   * (DESIGN §4). `recover: false` opens it as it is, for reads that must change nothing (the daemon's
   * GETs); the next operation that writes finishes it.
   */
  get(id: string, options?: OpenSessionOptions): Promise<Session>;
  latest(filter?: SessionFilter, options?: OpenSessionOptions): Promise<Session>;
  /** 20-hex store id of the workspace. */
  readonly id: string;
  /** Real path of the workspace root. */
  readonly root: string;
  readonly ctx: WorkspaceContext;
}

export interface OpenSessionOptions {
  /** Finish an interrupted restore before answering (default true). */
  recover?: boolean;
}

export interface WorkspaceInfo {
  id: string;
  root: string;
  createdAt: string;
  /** Shared stores: the machine the root is on (see workspace/machine-id.ts). */
  machine?: string;
}

export interface Store {
  /** The store folder; for a shared store its URL with credentials removed (safe to print). */
  readonly dir: string;
  /** True for a shared (PostgreSQL + S3) store. */
  readonly shared: boolean;
  /**
   * Folder stores: how many files and folders this open made private (an older ckpt left them
   * readable by other users; issue 27). Zero when the store was private already.
   */
  readonly tightened: number;
  /**
   * A folder store that is not there, opened to read as empty (`missingAsEmpty`): it holds nothing, and
   * a write through it would make the folder (a command that would write something checks this first).
   */
  readonly absent?: boolean;
  readonly ctx: StoreContext;
  /**
   * Where this machine's daemon of the store keeps its files (token, claim, port, keys): the store
   * itself for a folder store; for a shared store a private folder on this machine
   * (`sharedDaemonDir`), so no token or claim is shared between machines.
   */
  readonly daemonCtx: StoreContext & { dir: string };
  /**
   * Shared stores only: calls `listener` for every append to a session log by any process on any
   * machine (`{key, size}`: read the log from its previous size); resolves to a function that stops.
   */
  subscribeAppends?: (listener: AppendListener, onError?: (err: Error) => void) => Promise<() => Promise<void>>;
  /** Releases connections (shared stores); a local store has nothing to release. */
  close(): Promise<void>;
  /**
   * Opens a workspace the store knows by its id: this machine's as `openWorkspace` does; another
   * machine's (shared store) read-only — its sessions are read, and what would touch its folder is
   * WRONG_MACHINE (`ctx.workspace.foreign`). NOT_FOUND for an unknown id.
   */
  openWorkspaceById(id: string): Promise<Workspace>;
  /**
   * Opens (registering on first use) the workspace whose root is `dir`. With `register: false` a
   * workspace the store does not know is NOT_FOUND and nothing is written (read-only callers).
   */
  openWorkspace(dir: string, options?: { register?: boolean }): Promise<Workspace>;
  /** Roots of every workspace the store knows (with the machine id, in a shared store). */
  listWorkspaces(): Promise<WorkspaceInfo[]>;
  /**
   * The root of this machine's workspace that holds the session tied to `link` (agent + its session
   * id), if one does — `prefer` first when it holds it (a session resumed in another folder is in
   * both): one stat per workspace, nothing written.
   */
  agentSessionRoot(link: Pick<AgentLink, 'agent' | 'externalId'>, prefer?: string): Promise<string | undefined>;
  /**
   * Drops a workspace (by root folder — which may no longer exist — or by id): its sessions, scan
   * baseline and owner index. Its blobs are freed by the next GC unless something else references them.
   * Another machine's workspace of a shared store is WRONG_MACHINE unless `otherMachine` (a machine
   * that is gone: its whole history would go from here otherwise by a mistyped id).
   */
  removeWorkspace(target: string, options?: { otherMachine?: boolean }): Promise<{ id: string; root: string; sessions: number }>;
}

/**
 * Where a `--store` argument points: a shared store URL as it is, a folder resolved from `cwd` (a
 * resolved URL would be a local folder named `postgres:`).
 */
export function storeLocation(arg: string, cwd: string): string {
  return isSharedStoreUrl(arg) ? arg : resolve(cwd, arg);
}

/**
 * The folder on this machine for the daemon files of the shared store at `redactedUrl`, as machine
 * `machine` (its CKPT_MACHINE_ID): processes that share a state folder but not a machine id must not
 * find each other's daemon, whose workspace ids are its machine's (a command of machine A sent its
 * scan to machine B's daemon, which found no workspace at A's path).
 */
export function sharedDaemonDir(redactedUrl: string, machine: string, env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME ? resolve(env.XDG_STATE_HOME) : join(homedir(), '.local', 'state');
  return join(base, 'ckpt', 'shared', createHash('sha256').update(machine).update('\0').update(redactedUrl).digest('hex').slice(0, 20));
}

/** The default store folder from the environment (DESIGN §2). */
export function defaultStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CKPT_STORE) return storeLocation(env.CKPT_STORE, process.cwd());
  if (env.CKPT_HOME) return resolve(env.CKPT_HOME);
  if (env.XDG_DATA_HOME) return join(resolve(env.XDG_DATA_HOME), 'ckpt');
  return join(homedir(), '.local', 'share', 'ckpt');
}

export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  const location = options.dir ?? defaultStoreDir();
  const shared = isSharedStoreUrl(location);
  const resolved: CkptOptions = {
    maxBlobBytes: options.maxBlobBytes ?? (process.env.CKPT_MAX_FILE_SIZE ? parseSize(process.env.CKPT_MAX_FILE_SIZE, 'CKPT_MAX_FILE_SIZE') : DEFAULT_MAX_BLOB_BYTES),
    refuseOversize: options.refuseOversize ?? isTruthy(process.env.CKPT_REFUSE_OVERSIZE),
    lockTimeoutMs: options.lockTimeoutMs ?? 10_000,
    captureEnabled: options.captureEnabled ?? !isTruthy(process.env.CKPT_DISABLE),
    retention: options.retention,
    ...(options.defer ? { defer: options.defer } : {}),
    ...(options.deferIdle ? { deferIdle: options.deferIdle } : {}),
    ...(options.onRecovered ? { onRecovered: options.onRecovered } : {}),
  };
  let dir: string;
  let backend: StoreBackend;
  let sharedBackend: SharedBackend | undefined;
  let tightened = 0;
  /** store.json as a folder store read it (null: not read yet). */
  let storeJson: Buffer | undefined | null = null;
  /** A folder store that does not exist yet, opened to read as empty (`missingAsEmpty`): nothing is made. */
  let absent = false;
  if (shared) {
    // Loaded on demand: the PostgreSQL and S3 clients are most of the bundle, and a folder store (every
    // hook process, the daemon) must not pay for parsing and holding them (DESIGN §10 "Daemon").
    const { createSharedBackend } = await import('./storage/shared/shared-backend.js');
    backend = sharedBackend = await createSharedBackend({ url: location, lockTimeoutMs: resolved.lockTimeoutMs });
    dir = sharedBackend.location.redacted;
  } else {
    dir = resolve(location);
    if (options.existing && !(await hasStoreJson(dir))) {
      // A path that cannot be a folder (a file, under a file) is IO, as for a store opened to write.
      await makeStoreDir(dir, false);
      // A folder of the user's there is refused as a store opened to write would be: it says why.
      if (existsSync(dir)) refuseForeignFolder(dir);
      if (!options.missingAsEmpty) throw new CkptError('NOT_FOUND', `no ckpt store at ${dir} (no store.json there)`, { path: dir });
      // Read as empty: the backend finds nothing in a folder that is not there (or holds no store yet).
      absent = true;
    } else await makeStoreDir(dir);
    backend = createFsBackend({ dir, lockTimeoutMs: resolved.lockTimeoutMs });
    if (!absent) {
      // Read once (it is checked below): before anything is tightened or created, a folder without it
      // that is not a store stays as the user left it.
      storeJson = await backend.read('store.json');
      if (!storeJson) refuseForeignFolder(dir);
      tightened = tightenExisting(dir);
    }
  }
  try {
    if (!absent) await ensureStoreJson(backend, storeJson === null ? await backend.read('store.json') : storeJson);
  } catch (err) {
    await backend.close?.();
    throw err;
  }
  const machine = shared ? await machineId() : undefined;
  const ctx: StoreContext = {
    ...(shared ? {} : { dir }),
    backend,
    blobs: createBlobStore({ backend, maxBlobBytes: resolved.maxBlobBytes }),
    options: resolved,
    events: new EventEmitter(),
    // A failed copy loses nothing: the capture's event holds the content, and a restore copies what
    // its plan names (spillInline) before it writes anything.
    afterCall: createAfterCallQueue(() => {}),
  };

  let daemonCtx: StoreContext & { dir: string };
  if (shared) {
    const local = sharedDaemonDir(dir, machine!);
    await makeStoreDir(local);
    daemonCtx = { ...ctx, dir: local, backend: createFsBackend({ dir: local, lockTimeoutMs: resolved.lockTimeoutMs }) };
  } else daemonCtx = { ...ctx, dir };
  // Set before any workspace's context copies ctx; a foreign workspace is read by no daemon of this machine.
  ctx.ownersOwed = () => ownersOwed(daemonCtx);

  /** One workspace's record, undefined when its workspace.json is gone; malformed is LOG_CORRUPT. */
  const readWorkspaceInfo = async (id: string): Promise<WorkspaceInfo | undefined> => {
    const file = `workspaces/${id}/workspace.json`;
    const raw = await backend.read(file);
    if (!raw) return undefined;
    let info: { root?: unknown; createdAt?: unknown; machine?: unknown } | null;
    try {
      info = JSON.parse(raw.toString('utf8')) as typeof info;
    } catch {
      info = null;
    }
    if (typeof info !== 'object' || info === null || Array.isArray(info)) {
      throw new CkptError('LOG_CORRUPT', `${file} is not a JSON object`, { file });
    }
    return { id, root: String(info.root), createdAt: String(info.createdAt), ...(typeof info.machine === 'string' ? { machine: info.machine } : {}) };
  };

  const listWorkspaces = async () => {
    const out: WorkspaceInfo[] = [];
    for (const id of await backend.children('workspaces')) {
      const info = await readWorkspaceInfo(id);
      if (info) out.push(info);
    }
    return out;
  };

  const self: Store = {
    dir,
    shared,
    tightened,
    ...(absent ? { absent } : {}),
    ctx,
    daemonCtx,
    ...(sharedBackend ? { subscribeAppends: (listener: AppendListener, onError?: (err: Error) => void) => sharedBackend.subscribe(listener, onError) } : {}),
    close: async () => {
      await ctx.afterCall.drain();
      // Both: a shared store's local daemon folder has a backend of its own (the same object otherwise).
      forgetScanIndexes(backend);
      forgetScanIndexes(daemonCtx.backend);
      await backend.close?.();
    },
    listWorkspaces,
    agentSessionRoot: async (link, prefer) => {
      const sid = agentSessionId(link.agent, link.externalId);
      const holds = async (id: string) => (await backend.stat(`workspaces/${id}/sessions/${sid}/events.jsonl`)) !== undefined;
      const preferred = prefer === undefined ? undefined : await resolveWorkspace(prefer, machine).catch(() => undefined);
      if (preferred && (await holds(preferred.id))) return preferred.root;
      for (const id of await backend.children('workspaces')) {
        if (!(await holds(id))) continue;
        const info = await readWorkspaceInfo(id);
        if (info && (!shared || info.machine === machine)) return info.root;
      }
      return undefined;
    },
    removeWorkspace: async (target, options = {}) => {
      const known = await listWorkspaces();
      // By root only a workspace of this machine: another machine's clone may sit at the same path.
      let found = known.find((w) => w.id === target || (w.root === resolve(target) && w.machine === machine));
      if (!found) {
        const identity = await resolveWorkspace(target, machine).catch(() => undefined);
        found = identity && known.find((w) => w.id === identity.id);
      }
      if (!found) throw new CkptError('NOT_FOUND', `no workspace ${JSON.stringify(target)} in the store ${dir}`, { workspace: target });
      if (shared && found.machine !== machine && !options.otherMachine) {
        throw new CkptError(
          'WRONG_MACHINE',
          `workspace ${found.id} (${found.root}) belongs to machine ${found.machine ?? '(unknown)'}: removing it here deletes that machine's whole history; remove it there, or pass --other-machine when that machine is gone`,
          { workspace: found.id, machine: found.machine ?? null, root: found.root },
        );
      }
      const key = `workspaces/${found.id}`;
      const ids = await backend.children(`${key}/sessions`);
      // Each log goes first, under its own lock, as a session removal does: a transaction in flight
      // finishes before, and none after it can append (an append after the folder's removal re-created
      // the log as a headless fragment under a workspace without workspace.json).
      for (const id of ids) {
        const log = `${key}/sessions/${id}/events.jsonl`;
        await backend.withLock(log, () => backend.remove(log));
      }
      // workspace.json goes last: it is what makes the workspace known, so a removal cut short (a
      // crash, an I/O error) is finished by running it again (issue 27 item 13: removing the folder
      // in one go could take it first and strand the rest, which verify then reported).
      const info = `${key}/workspace.json`;
      for (const k of await backend.list(key)) if (k !== info) await backend.remove(k);
      await backend.remove(info);
      await backend.removeTree(key);
      return { id: found.id, root: found.root, sessions: ids.length };
    },
    openWorkspaceById: async (id) => {
      const info = (await listWorkspaces()).find((w) => w.id === id);
      if (!info) throw new CkptError('NOT_FOUND', `no workspace ${JSON.stringify(id)} in the store ${dir}`, { workspace: id });
      if (!shared || info.machine === machine) {
        const ws = await self.openWorkspace(info.root).catch(() => undefined);
        if (ws?.id === id) return ws;
        if (!shared) throw new CkptError('NOT_FOUND', `the folder of workspace ${id} (${info.root}) is gone`, { workspace: id, root: info.root });
      }
      const wctx: WorkspaceContext = { ...ctx, workspace: { id, root: info.root, key: `workspaces/${id}`, ...(info.machine ? { machine: info.machine } : {}), foreign: true } };
      const sessions = createSessionStore(wctx, (c, sid) => new Session(c, sid));
      const refuse = (what: string) => () =>
        Promise.reject(new CkptError('WRONG_MACHINE', `${what} in workspace ${id} belongs on machine ${info.machine ?? '(unknown)'}`, { workspace: id, machine: info.machine ?? null, root: info.root }));
      return { ...sessions, create: refuse('a new session'), fork: refuse('a fork'), openAgentSession: refuse('an agent session'), remove: refuse('removing a session'), id, root: info.root, ctx: wctx };
    },
    openWorkspace: async (workspaceDir, openOptions = {}) => {
      const identity = await resolveWorkspace(workspaceDir, machine);
      const key = `workspaces/${identity.id}`;
      if (openOptions.register === false) {
        if (!(await backend.stat(`${key}/workspace.json`))) {
          throw new CkptError('NOT_FOUND', `no workspace at ${identity.root} in this store`, { workspace: identity.root });
        }
      } else if (!(await backend.stat(`${key}/workspace.json`))) {
        // Registered once; a workspace the store knows is opened without a write. create() would
        // freshen the file's mtime (the GC age gate of content-addressed objects, §3), which nothing
        // reads for workspace.json — GC, retention and leftovers never look at its age — and on a
        // store this process cannot write (a read-only mount) that write failed every command.
        const info = Buffer.from(`${JSON.stringify({ root: identity.root, ...(machine ? { machine } : {}), createdAt: new Date().toISOString() })}\n`);
        await backend.create(`${key}/workspace.json`, info);
      }
      const wctx: WorkspaceContext = { ...ctx, workspace: { ...identity, key } };
      const sessions = createSessionStore(wctx, (c, id) => new Session(c, id));
      // A new session takes the workspace's scan baseline unless it has one (the baseline trap).
      const create = async (options: CreateSessionOptions = {}): Promise<Session> => {
        const session = await sessions.create(options);
        if (options.baseline !== false) {
          const taken = await ensureBaseline(session, options.onProgress ? { onProgress: options.onProgress } : {});
          if (taken) options.onBaseline?.({ scanned: taken.scanned, stored: taken.stored, ms: taken.ms });
        }
        return session;
      };
      const openAgentSession = async (link: AgentLink, options: Omit<CreateSessionOptions, 'id' | 'info'> = {}): Promise<AgentSessionResult> => {
        const id = agentSessionId(link.agent, link.externalId);
        const existing = new Session(wctx, id);
        if ((await existing.log.lastSeq()) > 0) return { session: await recoverSession(existing), created: false };
        const info = { agent: link.agent, externalId: link.externalId, ...(link.cwd ? { cwd: link.cwd } : {}), ...(link.transcriptPath ? { transcriptPath: link.transcriptPath } : {}) };
        try {
          return { session: await create({ ...options, id, info }), created: true };
        } catch (err) {
          // Another hook process created it first: use theirs.
          if (!isCkptError(err, 'INVALID_ARGUMENT') || (await existing.log.lastSeq()) === 0) throw err;
          if (options.baseline !== false) await ensureBaseline(existing);
          return { session: await recoverSession(existing), created: false };
        }
      };
      return {
        ...sessions,
        create,
        openAgentSession,
        fork: async (id, forkOptions = {}) => {
          const { fromWorkspace, atTag, ...rest } = forkOptions;
          const atSeqOf = async (from: Pick<SessionStore, 'get'>, full: string): Promise<number | undefined> =>
            atTag === undefined ? rest.atSeq : Math.max(1, resolveTagSeq(await (await from.get(full)).events(), atTag));
          if (fromWorkspace === undefined || fromWorkspace === identity.id) {
            const parent = await sessions.get(id);
            // What changed unrecorded (a hand edit) is recorded first, in the parent: the fork's record
            // names the present as known, and a change no session recorded then vanished from every
            // other session's history (`restore N --force` in the parent left the hand edit; probe D1).
            if (wctx.options.captureEnabled && (await hasBaseline(parent))) await scan(parent, { tool: OUTSIDE_TOOL });
            const parentEvents = await parent.events();
            const atSeq = (await atSeqOf(sessions, id)) ?? parentEvents.at(-1)?.seq ?? 0;
            // `N.K` (a position between seqs): just before capture N.K, whose time orders other sessions' captures around the point.
            const pointAt = atTag !== undefined && !Number.isInteger(timelinePosition(parentEvents, atTag)) ? parentEvents.find((e) => e.seq > atSeq)?.at : undefined;
            // The files are left as they are; what differs from the fork point is recorded with the fork (DESIGN §10 "Forks").
            const record = async () => forkPointRecord({ parent, parentEvents, atSeq, others: await otherHistories(parent), ...(pointAt !== undefined ? { pointAt } : {}) });
            return sessions.fork(id, { ...rest, atSeq, record });
          }
          const source = (await listWorkspaces()).find((w) => w.id === fromWorkspace);
          if (!source) throw new CkptError('NOT_FOUND', `no workspace ${JSON.stringify(fromWorkspace)} in the store ${dir}`, { workspace: fromWorkspace });
          // Read-only use of the other workspace: its sessions are only read, its folder never touched.
          const sctx: WorkspaceContext = { ...ctx, workspace: { id: source.id, root: source.root, key: `workspaces/${source.id}` } };
          const from = createSessionStore(sctx);
          // A unique prefix names the other workspace's session too, as `--session` does here.
          const full = (await findSession(from, id)).id;
          return sessions.fork(full, { ...rest, atSeq: await atSeqOf(from, full), from: { sessions: from, workspace: source.id } });
        },
        // Opening a session finishes (or abandons) an interrupted restore before anything else (DESIGN §4).
        get: async (id, opts) => (opts?.recover === false ? sessions.get(id) : recoverSession(await sessions.get(id))),
        latest: async (filter, opts) => (opts?.recover === false ? sessions.latest(filter) : recoverSession(await sessions.latest(filter))),
        id: identity.id,
        root: identity.root,
        ctx: wctx,
      };
    },
  };
  return self;
}

/**
 * Creates the store folder and its missing parents one level at a time. Not `mkdir -p`: Node's
 * recursive mkdir retries forever where mkdir fails ENOENT under an existing parent (`/proc/x`).
 * A path that is not a folder, or cannot be made one, fails fast with IO naming it. With `create`
 * false only the checks: a missing folder whose nearest existing ancestor is a folder passes.
 */
async function makeStoreDir(dir: string, create = true): Promise<void> {
  const fail = (err: unknown, what: string) => {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    return new CkptError('IO', `store folder ${dir}: ${what} (${code})`, { errno: code, path: dir, retryable: false }, { cause: err });
  };
  const missing: string[] = [];
  for (let at = dir; ; at = dirname(at)) {
    let info;
    try {
      info = await stat(at);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && dirname(at) !== at) {
        missing.push(at);
        continue;
      }
      throw fail(err, `cannot reach ${at}`);
    }
    if (!info.isDirectory()) throw fail(Object.assign(new Error('not a folder'), { code: 'ENOTDIR' }), `${at} is not a folder`);
    break;
  }
  if (!create) return;
  for (const d of missing.reverse()) {
    try {
      await mkdir(d, { mode: STORE_DIR_MODE });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && (await stat(d).catch(() => undefined))?.isDirectory()) continue;
      throw fail(err, `cannot create ${d}`);
    }
  }
}

/** Whether the folder holds a store.json; a folder that cannot be searched (EACCES) is IO naming it, not "no store". */
async function hasStoreJson(dir: string): Promise<boolean> {
  try {
    await stat(join(dir, 'store.json'));
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw new CkptError('IO', `store folder ${dir} cannot be read (${code})`, { errno: code, path: dir, retryable: false }, { cause: err });
  }
}

/** What ckpt itself makes at the top of a store folder (§3), some before `store.json` exists (a hook starting the daemon). */
const STORE_NAMES = new Set(['store.json', 'blobs', 'packs', 'workspaces', 'tmp', 'daemon', 'mcp', 'hooks.log']);

/**
 * A store folder holds `store.json` (every ckpt writes it when it opens a new store, since format 1),
 * or only what ckpt makes there (a hook client makes `daemon/` before the daemon it starts opens the
 * store; temp and lock files of a store being created). Anything else is a folder of the user's
 * (`--store .` or `~` by mistake): opening it as a store would create files there and take group and
 * other permissions off everything in it, so it is refused.
 */
function refuseForeignFolder(dir: string): void {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    throw new CkptError('IO', `store folder ${dir} cannot be listed (${code})`, { errno: code, path: dir, retryable: false }, { cause: err });
  }
  const foreign = entries.filter((n) => !STORE_NAMES.has(n) && !n.includes(TEMP_MARK) && !n.endsWith(LOCK_SUFFIX));
  if (foreign.length === 0) return;
  throw new CkptError(
    'INVALID_ARGUMENT',
    `${dir} is not a ckpt store (no store.json) and is not empty (${foreign.length} entries, e.g. ${JSON.stringify(foreign.sort()[0])}): refusing to make it one; pass a new or empty folder, or the store's own folder`,
    { path: dir, entries: foreign.length },
  );
}

/** Makes a store an older ckpt left readable by others private; a failure (a file of another owner) is IO naming it. */
function tightenExisting(dir: string): number {
  try {
    return tightenStore(dir).tightened;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    throw new CkptError('IO', `store folder ${dir} is readable by other users and could not be made private (${code}); run chmod -R go-rwx on it`, { errno: code, path: dir, retryable: false }, { cause: err });
  }
}

async function ensureStoreJson(backend: StoreContext['backend'], raw: Buffer | undefined): Promise<void> {
  if (!raw) {
    await backend.create('store.json', Buffer.from(`${JSON.stringify({ format: STORE_FORMAT, createdAt: new Date().toISOString() })}\n`));
    return;
  }
  let format: unknown;
  try {
    format = (JSON.parse(raw.toString('utf8')) as { format?: unknown }).format;
  } catch {
    throw new CkptError('LOG_CORRUPT', 'store.json is not valid JSON', { file: 'store.json' });
  }
  if (format !== STORE_FORMAT) {
    // Any JSON value may stand there (String() of `{"toString": false}` threw: INTERNAL, found by the fuzz suite).
    const shown = typeof format === 'number' || typeof format === 'string' ? format : undefined;
    const text = (JSON.stringify(format) ?? String(format)).slice(0, 80);
    throw new CkptError('INVALID_ARGUMENT', `store format ${text} is not supported by this ckpt (format ${STORE_FORMAT})`, { format: shown ?? typeof format });
  }
}

function isTruthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value);
}
