// The low-level handle on one session: its event log (append under the session lock, metadata
// rewritten in the same critical section) and its metadata. Operations (capture, scan, restore, …)
// take this handle; the public `Session` (src/api/session.ts) composes them on top of it, so the
// layers run one way and no operation imports the facade.
import { CkptError } from '../errors.js';
import type { EventBase, NewEvent } from '../format/event.js';
import type { WorkspaceContext } from '../context.js';
import { createEventLog, type EventLog, type EventLogTx, type LogPosition } from '../storage/event-log.js';
import { decodeStoredMetadata, foldMetadata, metadataDue, type SessionMetadata, type StoredMetadata, type StoredMetadataFile } from './metadata.js';
import { checkInfoPatch, type SessionInfoPatch } from './session-info.js';
import { afterCommit } from './warnings.js';
import { lockUnlessReadOnly } from '../storage/lock-unless-read-only.js';

/**
 * Under a server, a session's lock is kept for the next transaction of this process (an agent's
 * PreToolUse and PostToolUse come milliseconds apart): released once unused for LINGER.idleMs, or
 * after a use LINGER.maxMs after it was taken (a CLI waiting for it waits no longer than that).
 */
const LINGER = { idleMs: 200, maxMs: 1_000 };
/**
 * Elsewhere (a library caller, the CLI) the lock is kept briefly for this process's next transaction:
 * a capture's settle, or the next capture of an in-process agent loop, milliseconds later, takes no
 * lock file (an O_CREAT|O_EXCL create and an unlink per transaction: ~0.1 ms quiet, over 1 ms while
 * the file system's journal is busy). Short, so another process (a hook, the CLI) waits at most
 * idleMs for a lock this process is not using, and maxMs for one it keeps using.
 */
const LINGER_LIBRARY = { idleMs: 25, maxMs: 250 };

export function sessionKey(ctx: WorkspaceContext, id: string): string {
  return `${ctx.workspace.key}/sessions/${id}`;
}

export class SessionHandle {
  readonly id: string;
  readonly ctx: WorkspaceContext;
  readonly key: string;
  readonly log: EventLog;

  constructor(ctx: WorkspaceContext, id: string) {
    this.ctx = ctx;
    this.id = id;
    this.key = sessionKey(ctx, id);
    this.log = createEventLog({ backend: ctx.backend, key: `${this.key}/events.jsonl`, firstType: 'session', missingCode: 'SESSION_NOT_FOUND' });
  }

  get workspaceRoot(): string {
    return this.ctx.workspace.root;
  }

  /** Every event of the log, in order. */
  events(): Promise<EventBase[]> {
    return this.log.read();
  }

  /** Appends events (seq, v and at assigned by the log) and rewrites metadata under the same lock. */
  append(events: NewEvent[]): Promise<EventBase[]> {
    return this.transaction((tx) => tx.append(events));
  }

  /**
   * Runs `fn` holding the session lock: read the log, decide, append — atomically with respect to
   * every other process. Metadata is rewritten before the lock is released when anything was appended
   * (also when `fn` throws after appending); a failure to rewrite it goes to `options.warnings`.
   * The lock lingers for this process's next transaction — under a server (CkptOptions.defer is
   * set) for long (LINGER: neither taking nor releasing it is part of what a hook waits for, most of
   * the time), else briefly (LINGER_LIBRARY). `lockTimeoutMs`: how long to wait for the lock before
   * LOCKED (the backend's default otherwise).
   */
  async transaction<T>(fn: (tx: EventLogTx) => Promise<T>, options: { warnings?: string[]; lockTimeoutMs?: number; readOnly?: boolean } = {}): Promise<T> {
    if (options.readOnly) {
      // `fn` appends nothing (a dry run): where the lock cannot be made (the store is not writable
      // here) it reads the log as it is, and an append would fail with the lock's error.
      const { readOnly: _readOnly, ...locked } = options;
      return lockUnlessReadOnly(
        (enter) =>
          this.transaction((tx) => {
            enter();
            return fn(tx);
          }, locked),
        (lockError) => fn({ read: (o) => this.log.read(o), lastSeq: () => this.log.lastSeq(), append: () => Promise.reject(lockError), lockFree: true }),
      );
    }
    return this.log.transaction(async (tx) => {
      const appended: EventBase[] = [];
      let result: T;
      try {
        result = await fn({
          read: tx.read,
          lastSeq: tx.lastSeq,
          readSince: tx.readSince,
          end: tx.end,
          append: async (events: NewEvent[]) => {
            const stored = await tx.append(events);
            appended.push(...stored);
            return stored;
          },
        });
      } catch (err) {
        // Events appended before the failure are in the log for good (e.g. a restore's capture and
        // `restore_aborted`): metadata must follow them, or the store reads as inconsistent. The
        // caller's error wins over a failure to rewrite the cache.
        if (appended.length > 0) await this.writeMetadata(appended).catch(() => {});
        throw err;
      }
      // Past the commit point: metadata.json is a cache rebuilt from the log when behind it, so a
      // failure to rewrite it is a warning, not the operation's failure.
      if (appended.length > 0) await afterCommit(options.warnings, 'session metadata not updated', () => this.writeMetadata(appended));
      return result;
    }, { linger: this.ctx.options.defer ? LINGER : LINGER_LIBRARY, ...(options.lockTimeoutMs !== undefined ? { timeoutMs: options.lockTimeoutMs } : {}) });
  }

  /** The metadata: metadata.json folded forward over the log's tail, or the whole log folded when it cannot be used. */
  async metadata(): Promise<SessionMetadata> {
    return (await this.currentMetadata()).meta;
  }

  /** The metadata as of now and the log position it was folded to. */
  private async currentMetadata(): Promise<{ meta: SessionMetadata; pos?: LogPosition }> {
    const stored = await this.readStoredMetadata();
    if (stored?.pos) {
      const tail = await this.log.readSince(stored.pos);
      if (tail) return { meta: foldMetadata(stored.meta, tail.events, this.identity), pos: tail.pos };
    } else if (stored && stored.meta.eventCount === (await this.log.lastSeq())) {
      // A file of an older version (no position), up to date: as good as before, without a fold.
      return { meta: stored.meta };
    }
    const events = await this.log.read();
    if (events.length === 0) throw new CkptError('SESSION_NOT_FOUND', `session ${this.id} not found`, { session: this.id });
    return { meta: foldMetadata(undefined, events, this.identity), pos: this.log.position() };
  }

  /** Retitles the session (a blank title is refused); it does not move the session in the list. */
  async setTitle(title: string): Promise<SessionMetadata> {
    if (typeof title !== 'string' || title.trim() === '') throw new CkptError('INVALID_ARGUMENT', 'a title must not be blank');
    await this.append([{ type: 'title', title }]);
    return this.metadata();
  }

  /** Marks the session ended (the agent's session closed); a later turn resumes it. */
  async end(reason?: string): Promise<SessionMetadata> {
    await this.append([{ type: 'end', ...(reason ? { reason } : {}) }]);
    return this.metadata();
  }

  /** Sets (string) or clears (null) descriptive fields: agent, externalId, model, provider, cwd, taskId, spawnedFrom. */
  async setInfo(patch: SessionInfoPatch): Promise<SessionMetadata> {
    const set = checkInfoPatch(patch, { allowNull: true });
    if (Object.keys(set).length > 0) await this.append([{ type: 'info', set }]);
    return this.metadata();
  }

  private async readStoredMetadata(): Promise<StoredMetadata | undefined> {
    const raw = await this.ctx.backend.read(`${this.key}/metadata.json`);
    if (!raw) return undefined;
    try {
      // Rebuilt from the log (the source of truth) when it is not JSON or a field has the wrong type.
      return decodeStoredMetadata(JSON.parse(raw.toString('utf8')), this.id);
    } catch {
      return undefined;
    }
  }

  /** Writes metadata.json from the log as it is now (a new session, or a repair). */
  async saveMetadata(): Promise<SessionMetadata> {
    const meta = foldMetadata(undefined, await this.log.read(), this.identity);
    await this.writeMetadataFile(meta, this.log.position());
    return meta;
  }

  /**
   * Under the lock, after an append. Work events (captures, settles, …) leave the file behind the
   * log for up to METADATA_LAG events — readers fold the tail from its position, and a rewrite (a
   * rename over the old file) would cost a hook call more than its fsync.
   */
  private async writeMetadata(appended: EventBase[]): Promise<void> {
    if (!metadataDue(appended)) return;
    const { meta, pos } = await this.currentMetadata();
    await this.writeMetadataFile(meta, pos);
  }

  private get identity(): { id: string; workspace: string } {
    return { id: this.id, workspace: this.workspaceRoot };
  }

  private writeMetadataFile(meta: SessionMetadata, pos: LogPosition | undefined): Promise<void> {
    // A cache of the log (rebuilt when missing, unreadable or behind it): atomic, but not worth two
    // fsyncs — a crash can only leave it behind the (durable) log.
    const body: StoredMetadataFile = pos && pos.seq === meta.eventCount ? { ...meta, pos } : meta;
    return this.ctx.backend.write(`${this.key}/metadata.json`, Buffer.from(`${JSON.stringify(body, null, 2)}\n`), { durable: false });
  }
}
