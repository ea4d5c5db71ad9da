// The event-log record types (DESIGN §3) and their pure line encoding/decoding. No I/O here.
import { CkptError } from '../errors.js';

export const EVENT_VERSION = 1;

/** The state of one path in a capture (before-image) or a settle/scan (after-state). */
export type FileState = 'file' | 'symlink' | 'absent' | 'skipped';

/** One captured path. `blob` is the sha256 of the content (state `file`); `target` the link text (`symlink`). */
export interface FileImage {
  path: string;
  state: FileState;
  blob?: string;
  bytes?: number;
  mode?: number;
  target?: string;
  /** Why a path is `skipped` (e.g. `too-large`, `unreadable`, `not-regular`). */
  why?: string;
  /**
   * For `absent` images: how many of the path's ancestor folders did not exist either (0 or missing:
   * the parent existed). A restore that deletes the path removes that many folders once empty.
   */
  newDirs?: number;
}

export interface EventBase {
  v: number;
  seq: number;
  type: string;
  at: string;
  [key: string]: unknown;
}

export interface SessionEvent extends EventBase {
  type: 'session';
  kind: SessionKind;
  title?: string;
  parent?: string;
  forkedFrom?: { session: string; seq: number };
}

export type SessionKind = 'root' | 'fork' | 'child';

export interface TurnEvent extends EventBase {
  type: 'turn';
  turn: number;
  messageCount?: number;
  text?: string;
}

export interface CaptureEvent extends EventBase {
  type: 'capture';
  tag: string;
  turn: number;
  k: number;
  tool: string;
  reason?: string;
  files: FileImage[];
}

export interface SettleEvent extends EventBase {
  type: 'settle';
  tag: string;
  files: FileImage[];
}

export interface RestorePlanEntry {
  path: string;
  action: 'write' | 'symlink' | 'delete';
  blob?: string;
  mode?: number;
  target?: string;
}

export interface RestoreStartedEvent extends EventBase {
  type: 'restore_started';
  id: string;
  to: string;
  recovery: string;
  plan: RestorePlanEntry[];
}

export interface RestoreCommittedEvent extends EventBase {
  type: 'restore_committed';
  id: string;
  result: Record<string, unknown>;
}

export interface RewindEvent extends EventBase {
  type: 'rewind';
  to: string;
  toSeq: number;
  watermark: Record<string, unknown>;
}

export interface ConflictEvent extends EventBase {
  type: 'conflict';
  path: string;
  otherSession: string;
  expected: string | null;
  actual: string | null;
}

export interface PruneEvent extends EventBase {
  type: 'prune';
  /** History at or before this seq is retired. */
  before: number;
}

/**
 * Event types ckpt itself writes; every other type is a conversation event (message, tool call, …)
 * whose payload ckpt stores but does not interpret.
 */
export const CHECKPOINT_EVENT_TYPES: ReadonlySet<string> = new Set([
  'session', 'title', 'info', 'end', 'turn', 'capture', 'settle', 'scan', 'restore_started', 'restore_committed',
  'restore_aborted', 'rewind', 'conflict', 'prune', 'compaction',
]);

/** Fields a caller supplies when appending; the log assigns `v`, `seq` and `at`. */
export type NewEvent = { type: string; [key: string]: unknown };

/** Encodes one event as a JSON line (with the trailing newline). */
export function encodeEvent(event: EventBase): string {
  return `${JSON.stringify(event)}\n`;
}

/**
 * Decodes one complete line. Throws LOG_CORRUPT for anything that is not a well-formed event:
 * a malformed line is never silently skipped.
 */
export function decodeEvent(line: string, where: { file?: string; line: number }): EventBase {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new CkptError('LOG_CORRUPT', `malformed event at line ${where.line}${where.file ? ` of ${where.file}` : ''}`, where);
  }
  if (!isEventShape(value)) {
    throw new CkptError('LOG_CORRUPT', `event at line ${where.line} lacks v/seq/type/at`, where);
  }
  return value;
}

function isEventShape(value: unknown): value is EventBase {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  return (
    typeof e.v === 'number' &&
    Number.isSafeInteger(e.seq) &&
    (e.seq as number) >= 1 &&
    typeof e.type === 'string' &&
    e.type.length > 0 &&
    typeof e.at === 'string'
  );
}
