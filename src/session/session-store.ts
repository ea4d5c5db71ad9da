// The sessions of one workspace (DESIGN §2, §3): create (generated or given id), get, list newest
// first, fork at a position (events copied, blobs shared), child sessions, lineage and tree, remove.
// Generic over the handle it hands out: operations use plain SessionHandles, the public API its
// Session facade (src/api/), without this layer knowing about either's operations.
import { CkptError } from '../errors.js';
import { afterCommit } from './warnings.js';
import { encodeEvent, type EventBase, type NewEvent, type SessionKind } from '../format/event.js';
import { isBlobId } from '../format/stored-path.js';
import { inlineRecords } from '../format/inline-blobs.js';
import { spillInline } from '../storage/inline-store.js';
import type { WorkspaceContext } from '../context.js';
import type { SessionMetadata } from './metadata.js';
import { SessionHandle, sessionKey } from './session-handle.js';
import { assertSessionId, generateSessionId } from './session-id.js';
import { checkInfoPatch, type SessionInfo, type SessionInfoField } from './session-info.js';
import { prunedThrough } from './positions.js';
import { loadPlans, planOf } from './restore-plans.js';
import { dropUnreached, keepRemoved } from './removed-sessions.js';

export interface CreateSessionOptions {
  id?: string;
  title?: string;
  kind?: SessionKind;
  /** Parent session of a child (kind `child`). */
  parent?: string;
  /** What the agent says about this run (its own id, name, model, …). */
  info?: SessionInfo;
  /**
   * Take the workspace's scan baseline now if it has none (default true; done by the Workspace of
   * store.ts), so the first scan after an agent's shell command records what it changed (DESIGN §10).
   */
  baseline?: boolean;
  /** The baseline's progress (reading and storing files), for a progress bar: a first session in a big folder takes a while. */
  onProgress?: (progress: { phase: string; done: number; total: number }) => void;
  /** Called when this creation took the workspace's baseline: how many files it looked at and stored. */
  onBaseline?: (baseline: { scanned: number; stored: number; ms: number }) => void;
}

/**
 * Which sessions `list` returns: every given field must match exactly. `resumable` keeps only the
 * sessions a user can resume as a conversation of their own: not a child (sub-agent) run, not ended.
 */
export type SessionFilter = SessionInfo & { kind?: SessionKind; parent?: string; resumable?: boolean };

export interface ForkOptions {
  /** Last event seq copied into the fork (default: the whole log). */
  atSeq?: number;
  title?: string;
  id?: string;
  /**
   * Fork a session of another workspace of the same store (e.g. another machine's, in a shared store):
   * its events are copied here, blobs shared; the fork has no parent here and `forkedFrom.workspace`.
   */
  from?: { sessions: Pick<SessionStore<SessionHandle>, 'get'>; workspace: string };
  /**
   * Events recorded after the copied ones in the same create (the fork-point record, DESIGN §10
   * "Forks see the whole workspace"): a fork killed while being made leaves no fork, never one
   * without them. Called once the fork point is validated, so a refused fork stores nothing.
   */
  record?: () => Promise<readonly NewEvent[]>;
}

export interface SessionTreeNode {
  session: SessionMetadata;
  children: SessionTreeNode[];
}

export interface SessionStore<S extends SessionHandle = SessionHandle> {
  create(options?: CreateSessionOptions): Promise<S>;
  /** Opens an existing session; SESSION_NOT_FOUND when there is none with that id. */
  get(id: string): Promise<S>;
  /** Metadata of every session of the workspace, most recently updated first (filtered when asked). */
  list(filter?: SessionFilter): Promise<SessionMetadata[]>;
  /** The most recently updated session (matching `filter`), or SESSION_NOT_FOUND when there is none. */
  latest(filter?: SessionFilter): Promise<S>;
  fork(id: string, options?: ForkOptions): Promise<S>;
  /** Ancestors from the root down to `id` (parents of children and forks). */
  lineage(id: string): Promise<SessionMetadata[]>;
  /** Sessions grouped under their parents. */
  tree(): Promise<SessionTreeNode[]>;
  /** Deletes the session's folder (its captures stay on the others' timelines: removed-sessions.ts); its blobs are left to GC. */
  remove(id: string): Promise<void>;
  /** Drops what removed sessions left that no session's history reaches (after a removal or a prune). */
  tidyRemoved(): Promise<void>;
}

/** Makes the handle for session `id`; the default is a plain SessionHandle. */
export type SessionFactory<S extends SessionHandle> = (ctx: WorkspaceContext, id: string) => S;

export function createSessionStore(ctx: WorkspaceContext): SessionStore;
export function createSessionStore<S extends SessionHandle>(ctx: WorkspaceContext, make: SessionFactory<S>): SessionStore<S>;
export function createSessionStore<S extends SessionHandle>(
  ctx: WorkspaceContext,
  make: SessionFactory<S> = ((c, id) => new SessionHandle(c, id)) as SessionFactory<S>,
): SessionStore<S> {
  const { backend } = ctx;
  const sessionsKey = `${ctx.workspace.key}/sessions`;

  /** Creates the log with its first event via create-if-absent, which makes ids exclusive across processes. */
  async function createWithEvents(id: string, first: Omit<EventBase, 'v' | 'seq' | 'at'>, copied: EventBase[] = [], record: readonly NewEvent[] = []): Promise<S> {
    assertSessionId(id);
    const at = new Date().toISOString();
    const last = copied.at(-1)?.seq ?? 1;
    const added = record.map((e, i) => ({ ...e, v: 1, seq: last + 1 + i, at }) as EventBase);
    const lines = [encodeEvent({ ...first, v: 1, seq: 1, at } as EventBase), ...[...copied, ...added].map((e) => encodeEvent(e))];
    const created = await backend.create(`${sessionKey(ctx, id)}/events.jsonl`, Buffer.from(lines.join('')));
    if (!created) throw new CkptError('INVALID_ARGUMENT', `session ${id} already exists`, { id });
    const session = make(ctx, id);
    // The log holds the session now: metadata.json is a cache rebuilt from it when missing, so a
    // failure to write it (disk full) does not make the create fail.
    await afterCommit(undefined, 'session metadata not written', () => session.saveMetadata());
    return session;
  }

  const notFound = (id: string): CkptError => new CkptError('SESSION_NOT_FOUND', `session ${JSON.stringify(id)} not found in workspace ${ctx.workspace.root}`, { session: id });

  async function get(id: string): Promise<S> {
    assertSessionId(id);
    const session = make(ctx, id);
    if ((await session.log.lastSeq()) === 0) {
      throw notFound(id);
    }
    return session;
  }

  async function list(filter: SessionFilter = {}): Promise<SessionMetadata[]> {
    const { resumable, ...fields } = filter;
    const wanted = Object.entries(fields).filter(([, v]) => v !== undefined) as [keyof SessionMetadata, string][];
    const ids = await backend.children(sessionsKey);
    const metas: SessionMetadata[] = [];
    for (const id of ids) {
      try {
        const meta = await (await get(id)).metadata();
        if (wanted.every(([k, v]) => meta[k] === v) && (resumable === undefined || isResumable(meta) === resumable)) metas.push(meta);
      } catch (err) {
        if ((err as CkptError).code === 'SESSION_NOT_FOUND' || (err as CkptError).code === 'INVALID_ARGUMENT') continue;
        throw err;
      }
    }
    return metas.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
  }

  async function lineage(id: string): Promise<SessionMetadata[]> {
    const chain: SessionMetadata[] = [];
    const seen = new Set<string>();
    let current: string | undefined = id;
    while (current && !seen.has(current)) {
      seen.add(current);
      const meta: SessionMetadata = await (await get(current)).metadata();
      chain.unshift(meta);
      current = meta.parent;
      if (current && !(await exists(current))) break; // a removed ancestor ends the chain
    }
    return chain;
  }

  /** Drops the removed sessions' captures no session reaches any more; a failure leaves them for the next call. */
  async function tidyRemoved(): Promise<void> {
    await afterCommit(undefined, 'removed sessions not tidied', async () => {
      const remaining: EventBase[][] = [];
      for (const meta of await list()) remaining.push(await (await get(meta.id)).events());
      await dropUnreached(ctx, remaining);
    });
  }

  async function exists(id: string): Promise<boolean> {
    return (await new SessionHandle(ctx, id).log.lastSeq()) > 0;
  }

  return {
    create: async (options = {}) => {
      const kind = options.kind ?? (options.parent ? 'child' : 'root');
      if (kind === 'child' && !options.parent) throw new CkptError('INVALID_ARGUMENT', 'a child session needs a parent');
      const info = checkInfoPatch(options.info ?? {}, { allowNull: false }) as SessionInfo;
      const parentMeta = options.parent ? await (await get(options.parent)).metadata() : undefined;
      const first: Omit<EventBase, 'v' | 'seq' | 'at'> = { type: 'session', kind, title: options.title ?? '' };
      if (options.parent) first.parent = options.parent;
      if (parentMeta) first.depth = parentMeta.depth + 1;
      if (Object.keys(info).length > 0) first.info = info;
      return createWithEvents(options.id ?? generateSessionId(), first);
    },
    get,
    list,
    latest: async (filter) => {
      const [newest] = await list(filter);
      if (!newest) {
        const which = filter && Object.keys(filter).length > 0 ? ` matching ${JSON.stringify(filter)}` : '';
        throw new CkptError('SESSION_NOT_FOUND', `no session${which} in workspace ${ctx.workspace.root}; create one with 'ckpt session new'`, { workspace: ctx.workspace.root });
      }
      return get(newest.id);
    },
    fork: async (id, options = {}) => {
      const parent = options.from ? await options.from.sessions.get(id) : await get(id);
      const events = await parent.events();
      const last = events.at(-1)?.seq ?? 0;
      const atSeq = options.atSeq ?? last;
      if (!Number.isSafeInteger(atSeq) || atSeq < 1 || atSeq > last) {
        throw new CkptError('INVALID_ARGUMENT', `cannot fork session ${id} at @${atSeq}: it has events 1..${last}`, { atSeq });
      }
      const prunedBefore = prunedThrough(events);
      if (atSeq < prunedBefore) {
        throw new CkptError('TAG_PRUNED', `cannot fork session ${id} at @${atSeq}: history before @${prunedBefore} was pruned`, { atSeq, prunedBefore });
      }
      const copied = events.filter((e) => e.seq > 1 && e.seq <= atSeq);
      assertNoOpenRestore(copied, id, atSeq);
      // The parent's prune point holds for the copy too: GC may already have collected what it retired
      // (the `prune` event itself can lie after the fork point, so it is not among the copies).
      if (prunedBefore > prunedThrough(copied)) {
        copied.push({ v: 1, seq: atSeq + 1, type: 'prune', at: new Date().toISOString(), before: prunedBefore, inherited: id });
      }
      await freshenReferenced(ctx, parent, copied, prunedBefore);
      const parentMeta = await parent.metadata();
      const first: Omit<EventBase, 'v' | 'seq' | 'at'> = {
        type: 'session',
        kind: 'fork',
        title: options.title ?? (parentMeta.title ? `${parentMeta.title} (fork)` : ''),
        ...(options.from ? {} : { parent: id }),
        forkedFrom: { session: id, seq: atSeq, ...(options.from ? { workspace: options.from.workspace } : {}) },
        // Forked in from another workspace it is a root here.
        depth: options.from ? 0 : parentMeta.depth + 1,
      };
      // A fork runs the same agent in the same place; it is not the agent's session the parent was tied to.
      const info = pick(parentMeta, INHERITED_INFO);
      if (Object.keys(info).length > 0) first.info = info;
      return createWithEvents(options.id ?? generateSessionId(), first, copied, await options.record?.());
    },
    lineage,
    tidyRemoved,
    tree: async () => {
      const metas = await list();
      const nodes = new Map(metas.map((m) => [m.id, { session: m, children: [] as SessionTreeNode[] }]));
      const roots: SessionTreeNode[] = [];
      for (const node of nodes.values()) {
        const parent = node.session.parent ? nodes.get(node.session.parent) : undefined;
        // An id is reused after a removal: a session created after this one is not its parent (the
        // parent it names is gone). Without this, a fork of the fork made under the parent's old id
        // made a cycle, and both sessions fell out of the tree (found by the lifecycle property test).
        const real = parent && parent.session.createdAt <= node.session.createdAt ? parent : undefined;
        (real ? real.children : roots).push(node);
      }
      // Created in the same millisecond, a cycle can remain: what the roots do not reach is a root too.
      const reached = new Set<SessionTreeNode>();
      const reach = (n: SessionTreeNode): void => {
        reached.add(n);
        n.children.forEach(reach);
      };
      roots.forEach(reach);
      for (const node of nodes.values()) {
        if (reached.has(node)) continue;
        for (const p of nodes.values()) p.children = p.children.filter((c) => c !== node);
        roots.push(node);
        reach(node);
      }
      return roots;
    },
    remove: async (id) => {
      assertSessionId(id);
      const session = make(ctx, id);
      if ((await session.log.lastSeq()) === 0) {
        // No log: no session — but a removal interrupted after its commit point (the log's unlink)
        // may have left the folder (its lock, metadata.json): finish that removal, then say so.
        await backend.removeTree(session.key);
        throw notFound(id);
      }
      // The log goes first, under its lock: no transaction of another process is between its reads
      // and its appends (an append after removal re-created the log as a headless fragment), and a
      // writer queued behind this one finds no log (SESSION_NOT_FOUND) instead of starting one. Its
      // captures are kept for the others' timelines first (removed-sessions.ts): a crash between the
      // two leaves them twice, which places the same images twice.
      await session.log.transaction(async (tx) => {
        await keepRemoved(ctx, id, await tx.read());
        await backend.remove(session.log.key);
      });
      await backend.removeTree(session.key);
      await tidyRemoved();
    },
  };
}

function isResumable(meta: SessionMetadata): boolean {
  return meta.kind !== 'child' && meta.endedAt === undefined;
}

const INHERITED_INFO: readonly SessionInfoField[] = ['agent', 'model', 'provider', 'cwd', 'taskId'];

function pick(meta: SessionMetadata, fields: readonly SessionInfoField[]): SessionInfo {
  const out: SessionInfo = {};
  for (const f of fields) if (meta[f] !== undefined) out[f] = meta[f];
  return out;
}

/** A fork must not copy half of a journaled restore: the copy would replay it onto the workspace. */
function assertNoOpenRestore(events: EventBase[], id: string, atSeq: number): void {
  const open = new Set<unknown>();
  for (const e of events) {
    if (e.type === 'restore_started') open.add(e.id);
    if (e.type === 'restore_committed') open.delete(e.id);
  }
  if (open.size > 0) {
    throw new CkptError('INVALID_ARGUMENT', `cannot fork session ${id} at @${atSeq}: that point lies inside a restore; fork before or after it`, { atSeq });
  }
}

/**
 * Freshens every blob the fork's live copied events reference (captures, settles, restore plans and
 * their plan and result blobs), before the fork's log exists. Until then only the parent references
 * them; were the parent removed or pruned meanwhile, a concurrent GC could collect them (found by the
 * soak). A freshened blob is protected by GC's age gate, as a capture's put protects its blobs; one
 * already gone fails the fork (nothing is written).
 */
async function freshenReferenced(ctx: WorkspaceContext, parent: SessionHandle, copied: readonly EventBase[], prunedBefore: number): Promise<void> {
  const live = copied.filter((e) => e.seq >= prunedBefore);
  await loadPlans(ctx.blobs, live, (e) => e.type === 'restore_started');
  const ids = new Set<string>();
  const add = (v: unknown): void => {
    if (isBlobId(v)) ids.add(v);
  };
  for (const e of live) {
    if (e.type === 'capture' || e.type === 'settle') for (const f of (e.files as { blob?: unknown }[]) ?? []) add(f.blob);
    if (e.type === 'restore_started') {
      add(e.planBlob);
      for (const entry of planOf(e)) add(entry.blob);
    }
    if (e.type === 'restore_committed') add((e.result as { resultBlob?: unknown } | undefined)?.resultBlob);
  }
  // Content the parent's events carry inline whose store copy has not run yet (it follows a daemon's
  // answers, or was lost with a killed daemon) is stored from the log's verified copy, as a restore does.
  await spillInline(ctx.blobs, inlineRecords(live), ids);
  for (const id of ids) {
    if (await ctx.blobs.freshen(id)) continue;
    if ((await parent.log.lastSeq()) === 0) throw new CkptError('SESSION_NOT_FOUND', `session ${parent.id} was removed while it was being forked`, { session: parent.id });
    throw new CkptError('BLOB_NOT_FOUND', `blob ${id} referenced by session ${parent.id} is missing; the fork was not created`, { blob: id, session: parent.id });
  }
}

