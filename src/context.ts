// The shared context a store hands to its workspaces and sessions: the backend, the blob store and
// the options in force. Core modules take this instead of reaching for globals.
import type { EventEmitter } from 'node:events';
import type { StoreBackend } from './storage/backend.js';
import type { BlobStore } from './storage/blob-store.js';

export { DEFAULT_MAX_BLOB_BYTES } from './size-cap.js';

/** A retention policy: undefined fields mean "no limit of that kind". */
export interface RetentionPolicy {
  keepTurns?: number;
  olderThanMs?: number;
  /** Keep (at least) the last N checkpoints: whole turns before the turn holding the N-th latest capture retire. */
  keepCheckpoints?: number;
}

export interface CkptOptions {
  /**
   * Largest file content captured (bytes; default 16 MiB, or CKPT_MAX_FILE_SIZE); larger files are
   * recorded as `skipped` — or, with `refuseOversize`, a tool capture naming one fails BLOB_TOO_LARGE
   * and records nothing. (Scans always record them as skipped: a shell command has already run.)
   */
  maxBlobBytes: number;
  refuseOversize: boolean;
  /** How long to wait for a session or workspace lock (default 10 s). */
  lockTimeoutMs: number;
  /** When false, capture/settle/scan record nothing and say so (env CKPT_DISABLE=1). */
  captureEnabled: boolean;
  /**
   * History kept per session, applied when a turn starts (default: the last 100 turns and 30 days,
   * or CKPT_KEEP_TURNS / CKPT_KEEP_AGE / CKPT_RETENTION=off); `false` switches it off.
   */
  retention?: RetentionPolicy | false;
  /**
   * Runs work that may follow the answer of an operation (the blob-store copy of an inline capture).
   * Default: the store's own queue (`StoreContext.afterCall`). A daemon queues it behind its answer
   * and drains the queue before stopping; setting this also makes its session locks linger.
   */
  defer?: (work: () => Promise<void>) => void;
  /**
   * Like `defer`, for work nothing another process reads depends on (the blob-store copy of a tool
   * capture's inline before-images): a daemon runs it once no hook has been answered for a while
   * (http/quiet-gate.ts), outside the agent's tool calls. Default: `defer`.
   */
  deferIdle?: (work: () => Promise<void>) => void;
  /**
   * Told when opening a session finished or abandoned restores an earlier process left interrupted
   * (the CLI says so on stderr: a newcomer probe found the next command, even `status`, did it silently).
   */
  onRecovered?: (session: string, restores: readonly RecoveredRestore[]) => void;
}

/** Work run after an operation has answered, one item at a time (session/after-call.ts). */
export interface AfterCallQueue {
  add(work: () => Promise<void>): void;
  /** Resolves once everything added so far has run. */
  drain(): Promise<void>;
}

export interface StoreContext {
  /** The store folder of a local store (undefined for a shared store: nothing of it is on this machine). */
  dir?: string;
  backend: StoreBackend;
  blobs: BlobStore;
  options: CkptOptions;
  /** In-process notifications: `conflict` (ConflictEvent & {session}). */
  events: EventEmitter;
  /**
   * Where work that need not delay an answer runs when `options.defer` is unset (the blob-store copy
   * of an inline capture): after the call, drained by `store.close()`.
   */
  afterCall: AfterCallQueue;
  /**
   * When the store's daemon may owe this process owner-index records it will not write now (it died,
   * or is stopped, or took over from one that died): the start (ms) of the daemon that owed them and who owes them (daemon-files.ts OwedRecords), for
   * the owner index to catch up with the logs before it is read (owner-index.ts). Undefined: nothing owed.
   */
  ownersOwed?: () => Promise<{ since: number; by: string } | undefined>;
}

export interface WorkspaceContext extends StoreContext {
  /**
   * `foreign`: the workspace is another machine's (a shared store, issue 33): its records are read
   * here, but nothing may touch or read its folder from this machine (WRONG_MACHINE).
   */
  workspace: { id: string; root: string; key: string; machine?: string; foreign?: true };
}

/** An interrupted restore that opening its session finished (or abandoned: it had changed nothing). */
export interface RecoveredRestore {
  id: string;
  /** The tag it restored to. */
  to: string;
  outcome: 'finished' | 'aborted';
  /** The tag that undoes it (finished only). */
  undo?: string;
  /** Paths written since it was interrupted, left as they are (finished only). */
  left?: string[];
}
