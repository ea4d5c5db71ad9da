// Opening a store (DESIGN §2, §3): where it lives, its store.json, the backend and blob store, and
// the workspaces inside it. The entry point of the library.
import { EventEmitter } from 'node:events';
import { mkdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { CkptError, isCkptError } from './errors.js';
import { parseSize } from './format/size.js';
import type { CkptOptions, StoreContext, WorkspaceContext } from './context.js';
import { createFsBackend } from './storage/fs-backend.js';
import { createBlobStore } from './storage/blob-store.js';
import { createSessionStore, type SessionStore } from './session/session-store.js';
import { Session } from './api/session.js';
import { recoverSession } from './restore/recover.js';
import { ensureBaseline } from './scan/baseline.js';
import { agentSessionId, type AgentLink } from './session/agent-link.js';
import type { CreateSessionOptions } from './session/session-store.js';
import { resolveWorkspace } from './workspace/workspace-id.js';

export const STORE_FORMAT = 1;
export const DEFAULT_MAX_BLOB_BYTES = 16 * 1024 * 1024;

export interface OpenStoreOptions extends Partial<CkptOptions> {
  /** Store folder; default `$CKPT_HOME`, else `$XDG_DATA_HOME/ckpt`, else `~/.local/share/ckpt`. */
  dir?: string;
}

export interface AgentSessionResult {
  session: Session;
  /** True when this call created it. */
  created: boolean;
}

export interface Workspace extends SessionStore<Session> {
  /**
   * The session recording an agent's conversation, created (with the workspace's baseline) on first
   * use. Its id is derived from the agent's session id (agentSessionId), so finding it is one read of
   * its log's tail; the link is stored as session info.
   */
  openAgentSession(link: AgentLink, options?: Omit<CreateSessionOptions, 'id' | 'info'>): Promise<AgentSessionResult>;
  /** 20-hex store id of the workspace. */
  readonly id: string;
  /** Real path of the workspace root. */
  readonly root: string;
  readonly ctx: WorkspaceContext;
}

export interface Store {
  readonly dir: string;
  readonly ctx: StoreContext;
  /** Opens (registering on first use) the workspace whose root is `dir`. */
  openWorkspace(dir: string): Promise<Workspace>;
  /** Roots of every workspace the store knows. */
  listWorkspaces(): Promise<{ id: string; root: string; createdAt: string }[]>;
  /**
   * Drops a workspace (by root folder — which may no longer exist — or by id): its sessions, scan
   * baseline and owner index. Its blobs are freed by the next GC unless something else references them.
   */
  removeWorkspace(target: string): Promise<{ id: string; root: string; sessions: number }>;
}

/** The default store folder from the environment (DESIGN §2). */
export function defaultStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CKPT_HOME) return resolve(env.CKPT_HOME);
  if (env.XDG_DATA_HOME) return join(resolve(env.XDG_DATA_HOME), 'ckpt');
  return join(homedir(), '.local', 'share', 'ckpt');
}

export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  const dir = resolve(options.dir ?? defaultStoreDir());
  const resolved: CkptOptions = {
    maxBlobBytes: options.maxBlobBytes ?? (process.env.CKPT_MAX_FILE_SIZE ? parseSize(process.env.CKPT_MAX_FILE_SIZE, 'CKPT_MAX_FILE_SIZE') : DEFAULT_MAX_BLOB_BYTES),
    refuseOversize: options.refuseOversize ?? isTruthy(process.env.CKPT_REFUSE_OVERSIZE),
    lockTimeoutMs: options.lockTimeoutMs ?? 10_000,
    captureEnabled: options.captureEnabled ?? !isTruthy(process.env.CKPT_DISABLE),
    retention: options.retention,
  };
  await makeStoreDir(dir);
  const backend = createFsBackend({ dir, lockTimeoutMs: resolved.lockTimeoutMs });
  await ensureStoreJson(backend);
  const ctx: StoreContext = {
    dir,
    backend,
    blobs: createBlobStore({ backend, maxBlobBytes: resolved.maxBlobBytes }),
    options: resolved,
    events: new EventEmitter(),
  };

  const listWorkspaces = async () => {
    const out: { id: string; root: string; createdAt: string }[] = [];
    for (const id of await backend.children('workspaces')) {
      const raw = await backend.read(`workspaces/${id}/workspace.json`);
      if (!raw) continue;
      let info: { root?: unknown; createdAt?: unknown };
      try {
        info = JSON.parse(raw.toString('utf8')) as typeof info;
      } catch {
        throw new CkptError('LOG_CORRUPT', `workspaces/${id}/workspace.json is not valid JSON`, { file: `workspaces/${id}/workspace.json` });
      }
      out.push({ id, root: String(info.root), createdAt: String(info.createdAt) });
    }
    return out;
  };

  return {
    dir,
    ctx,
    listWorkspaces,
    removeWorkspace: async (target) => {
      const known = await listWorkspaces();
      let found = known.find((w) => w.id === target || w.root === resolve(target));
      if (!found) {
        const identity = await resolveWorkspace(target).catch(() => undefined);
        found = identity && known.find((w) => w.id === identity.id);
      }
      if (!found) throw new CkptError('NOT_FOUND', `no workspace ${JSON.stringify(target)} in the store ${dir}`, { workspace: target });
      const key = `workspaces/${found.id}`;
      const sessions = (await backend.children(`${key}/sessions`)).length;
      await backend.removeTree(key);
      return { id: found.id, root: found.root, sessions };
    },
    openWorkspace: async (workspaceDir) => {
      const identity = await resolveWorkspace(workspaceDir);
      const key = `workspaces/${identity.id}`;
      const info = Buffer.from(`${JSON.stringify({ root: identity.root, createdAt: new Date().toISOString() })}\n`);
      await backend.create(`${key}/workspace.json`, info);
      const wctx: WorkspaceContext = { ...ctx, workspace: { ...identity, key } };
      const sessions = createSessionStore(wctx, (c, id) => new Session(c, id));
      // A new session takes the workspace's scan baseline unless it has one (the baseline trap).
      const create = async (options: CreateSessionOptions = {}): Promise<Session> => {
        const session = await sessions.create(options);
        if (options.baseline !== false) await ensureBaseline(session);
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
        // Opening a session finishes (or abandons) an interrupted restore before anything else (DESIGN §4).
        get: async (id) => recoverSession(await sessions.get(id)),
        latest: async (filter) => recoverSession(await sessions.latest(filter)),
        id: identity.id,
        root: identity.root,
        ctx: wctx,
      };
    },
  };
}

/**
 * Creates the store folder and its missing parents one level at a time. Not `mkdir -p`: Node's
 * recursive mkdir retries forever where mkdir fails ENOENT under an existing parent (`/proc/x`).
 * A path that is not a folder, or cannot be made one, fails fast with IO naming it.
 */
async function makeStoreDir(dir: string): Promise<void> {
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
  for (const d of missing.reverse()) {
    try {
      await mkdir(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && (await stat(d).catch(() => undefined))?.isDirectory()) continue;
      throw fail(err, `cannot create ${d}`);
    }
  }
}

async function ensureStoreJson(backend: StoreContext['backend']): Promise<void> {
  const raw = await backend.read('store.json');
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
    throw new CkptError('INVALID_ARGUMENT', `store format ${String(format)} is not supported by this ckpt (format ${STORE_FORMAT})`, { format });
  }
}

function isTruthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value);
}
