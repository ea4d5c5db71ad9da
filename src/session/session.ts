// A handle on one session: its event log (append under the session lock, metadata rewritten in the
// same critical section) and its metadata. Checkpoint operations (capture, restore, …) are built on
// this in their own modules and exposed through the public API.
import { CkptError } from '../errors.js';
import type { EventBase, NewEvent } from '../format/event.js';
import type { WorkspaceContext } from '../context.js';
import { createEventLog, type EventLog, type EventLogTx } from '../storage/event-log.js';
import { foldMetadata, type SessionMetadata } from './metadata.js';
import { capture, type CaptureOptions, type CaptureResult } from '../capture/capture.js';
import { settle, type SettleResult } from '../capture/settle.js';
import { startTurn, type TurnOptions } from '../capture/turn.js';
import { listCheckpoints, type CheckpointEntry } from '../history/log.js';
import { diffSession, type DiffResult } from '../history/diff.js';
import { scan, type ScanOptions, type ScanResult } from '../scan/index.js';
import { restore, rewind, undoPath, type RestoreOptions, type RestoreResult, type RewindOptions, type RewindResult } from '../restore/index.js';

export function sessionKey(ctx: WorkspaceContext, id: string): string {
  return `${ctx.workspace.key}/sessions/${id}`;
}

export class Session {
  readonly id: string;
  readonly ctx: WorkspaceContext;
  readonly key: string;
  readonly log: EventLog;

  constructor(ctx: WorkspaceContext, id: string) {
    this.ctx = ctx;
    this.id = id;
    this.key = sessionKey(ctx, id);
    this.log = createEventLog({ backend: ctx.backend, key: `${this.key}/events.jsonl` });
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
   * every other process. Metadata is rewritten before the lock is released when anything was appended.
   */
  async transaction<T>(fn: (tx: EventLogTx) => Promise<T>): Promise<T> {
    return this.log.transaction(async (tx) => {
      const appended: EventBase[] = [];
      const result = await fn({
        read: tx.read,
        lastSeq: tx.lastSeq,
        append: async (events: NewEvent[]) => {
          const stored = await tx.append(events);
          appended.push(...stored);
          return stored;
        },
      });
      if (appended.length > 0) await this.writeMetadata(appended);
      return result;
    });
  }

  /** The metadata; rebuilt from the log when metadata.json is missing or behind the log. */
  async metadata(): Promise<SessionMetadata> {
    const stored = await this.readStoredMetadata();
    const last = await this.log.lastSeq();
    if (last === 0) throw new CkptError('SESSION_NOT_FOUND', `session ${this.id} not found`, { session: this.id });
    if (stored && stored.eventCount === last) return stored;
    return foldMetadata(undefined, await this.log.read(), this.identity);
  }

  /** Starts the next turn (the user sent a message); returns its number and tag. */
  turn(options?: TurnOptions): Promise<{ turn: number; tag: string; seq: number }> {
    return startTurn(this, options);
  }

  /** Records the before-images of paths a tool is about to change; durable when it returns. */
  capture(paths: readonly string[], options?: CaptureOptions): Promise<CaptureResult> {
    return capture(this, paths, options);
  }

  /** Records the after-state of paths a tool has written (default tag: the last capture). */
  settle(paths: readonly string[], options?: { tag?: string; cwd?: string }): Promise<SettleResult> {
    return settle(this, paths, options);
  }

  /** Records what changed in the workspace since ckpt last looked (shell side effects) as one capture. */
  scan(options?: ScanOptions): Promise<ScanResult> {
    return scan(this, options);
  }

  /** Restores the workspace (or `options.paths`) to `tag`; the result's `undo` tag undoes it. */
  restore(tag: string, options?: RestoreOptions): Promise<RestoreResult> {
    return restore(this, tag, options);
  }

  /** Restores one path to `tag`. */
  undo(tag: string, path: string, options?: Omit<RestoreOptions, 'paths'>): Promise<RestoreResult> {
    return undoPath(this, tag, path, options);
  }

  /** Restores to `tag` and moves the conversation back (or forks there with `fork`). */
  rewind(tag: string, options?: RewindOptions): Promise<RewindResult> {
    return rewind(this, tag, options);
  }

  /** Every checkpoint (capture) of the session, in order. */
  async checkpoints(): Promise<CheckpointEntry[]> {
    return listCheckpoints(await this.events());
  }

  /** Changes between two tags, or from a tag to the present workspace. */
  async diff(from: string, to?: string, options: { patch?: boolean } = {}): Promise<DiffResult> {
    return diffSession({
      events: await this.events(),
      from,
      to,
      blobs: this.ctx.blobs,
      root: this.workspaceRoot,
      maxBytes: this.ctx.options.maxBlobBytes,
      patch: options.patch,
    });
  }

  async setTitle(title: string): Promise<SessionMetadata> {
    await this.append([{ type: 'title', title }]);
    return this.metadata();
  }

  private async readStoredMetadata(): Promise<SessionMetadata | undefined> {
    const raw = await this.ctx.backend.read(`${this.key}/metadata.json`);
    if (!raw) return undefined;
    try {
      return JSON.parse(raw.toString('utf8')) as SessionMetadata;
    } catch {
      return undefined; // rebuilt from the log, which is the source of truth
    }
  }

  /** Writes metadata.json from the log as it is now (a new session, or a repair). */
  async saveMetadata(): Promise<SessionMetadata> {
    const meta = foldMetadata(undefined, await this.log.read(), this.identity);
    await this.writeMetadataFile(meta);
    return meta;
  }

  /** Under the lock, after an append: fold the new events onto the stored metadata (or the whole log when it lags). */
  private async writeMetadata(appended: EventBase[]): Promise<void> {
    const stored = await this.readStoredMetadata();
    if (!stored || stored.eventCount !== appended[0]!.seq - 1) {
      await this.saveMetadata();
      return;
    }
    await this.writeMetadataFile(foldMetadata(stored, appended, this.identity));
  }

  private get identity(): { id: string; workspace: string } {
    return { id: this.id, workspace: this.workspaceRoot };
  }

  private writeMetadataFile(meta: SessionMetadata): Promise<void> {
    return this.ctx.backend.write(`${this.key}/metadata.json`, Buffer.from(`${JSON.stringify(meta, null, 2)}\n`));
  }
}
