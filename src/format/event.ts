// The event-log record types (DESIGN §3) and their pure line encoding/decoding. No I/O here.
import { CkptError } from '../errors.js';
import { validateInline } from './inline-blobs.js';
import { validateFileImages, validateRestorePlan, validateStoredPath } from './stored-path.js';
import { isTag } from './tag.js';
import type { FileImage, RestorePlanEntry } from './file-image.js';

export type { FileImage, FileState, RestorePlanEntry } from './file-image.js';

export const EVENT_VERSION = 1;

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
  forkedFrom?: { session: string; seq: number; workspace?: string };
}

export type SessionKind = 'root' | 'fork' | 'child';

export interface TurnEvent extends EventBase {
  type: 'turn';
  turn: number;
  messageCount?: number;
  text?: string;
  /**
   * Set when a scan looked at the workspace just before this turn began (Session.turn with a baseline):
   * ckpt's knowledge was complete then, so a restore may look for later outside changes (DESIGN §10
   * "A restore looks first").
   */
  looked?: true;
}

export interface CaptureEvent extends EventBase {
  type: 'capture';
  tag: string;
  turn: number;
  k: number;
  tool: string;
  reason?: string;
  /** The agent's id of the tool call this capture was taken for (its settle finds it by this). */
  callId?: string;
  /**
   * A call captured before a prompt and written after it (settle.ts acrossPrompt): the tag of the
   * capture that first recorded it. `files` are what the paths held at the prompt.
   */
  movedFrom?: string;
  files: FileImage[];
  /** Content of small new blobs of `files`, carried in the event (format/inline-blobs.ts). */
  inline?: Record<string, string>;
}

export interface SettleEvent extends EventBase {
  type: 'settle';
  tag: string;
  files: FileImage[];
  /** Content of small new blobs of `files` (the tool's output), as in a capture. */
  inline?: Record<string, string>;
}

export interface RestoreStartedEvent extends EventBase {
  type: 'restore_started';
  id: string;
  to: string;
  recovery: string;
  /** The plan inline (small restores, and every log written before plan blobs)… */
  plan?: RestorePlanEntry[];
  /** …or the id of a blob holding it, with its entry count (session/restore-plans.ts). */
  planBlob?: string;
  planCount?: number;
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

/**
 * The tool name of a turn-start scan's capture: what changed outside the agent since ckpt last looked
 * (hand edits, a `git checkout` in the user's terminal, another program), recorded just before the
 * turn event so the turn's tag is an exact snapshot and the change is the user's, not the next tool's.
 */
export const OUTSIDE_TOOL = 'user';

/** The tool of a fork's first record (restore/fork-record.ts): its images are the fork point, not the workspace when it was made. */
export const FORK_TOOL = 'fork';

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
    const of = `at line ${where.line}${where.file ? ` of ${where.file}` : ''}`;
    const v = (value as { v?: unknown } | null)?.v;
    // A later format version is no damage: say which ckpt can read it.
    if (typeof v === 'number' && v > EVENT_VERSION) throw new CkptError('LOG_CORRUPT', `event ${of} is of format version ${v}, written by a newer ckpt: this one reads version ${EVENT_VERSION}`, { ...where, version: v });
    throw new CkptError('LOG_CORRUPT', `event ${of} lacks v (1), seq, type or at`, where);
  }
  validatePayload(value, where);
  return value;
}

/**
 * Checks an event about to be appended the way `decodeEvent` will check it when read back, so the
 * log never holds a line that would make the whole session unreadable. INVALID_ARGUMENT otherwise.
 */
export function checkNewEvent(event: EventBase): void {
  try {
    validatePayload(event, { line: event.seq });
  } catch (err) {
    if (err instanceof CkptError) throw new CkptError('INVALID_ARGUMENT', `refusing to append: ${err.message}`, err.data, { cause: err });
    throw err;
  }
}

/** A restore id names staging files (`.<name>.ckpt-stage-<id>-<i>`): never a separator or a dot. */
export function isRestoreId(id: unknown): id is string {
  return typeof id === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(id);
}

/** An ISO 8601 date and time, as `Date.prototype.toISOString` writes it (offsets too). */
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)$/;

/** The event types whose payload validatePayload checks (its cases). */
const CHECKED_PAYLOADS: ReadonlySet<string> = new Set(['capture', 'settle', 'restore_started', 'restore_committed', 'restore_aborted', 'conflict', 'turn', 'prune']);

/**
 * The fields ckpt acts on must be well-formed before anything reads them: every path a capture,
 * settle, restore plan or conflict names is a clean workspace-relative path (a forged `../x` in a
 * plan would otherwise be replayed outside the workspace by recovery), blob ids are hashes. Agent
 * events ckpt does not interpret are only checked for the common shape.
 */
function validatePayload(e: EventBase, where: { file?: string; line: number }): void {
  // Most events of a long log are the agent's (messages, tool calls): nothing below applies to them,
  // so they build no error context (two objects and a string per event were a tenth of a replay).
  if (!CHECKED_PAYLOADS.has(e.type)) return;
  const at = { what: `event ${e.type} at line ${where.line}${where.file ? ` of ${where.file}` : ''}`, ...where };
  const bad = (field: string) => new CkptError('LOG_CORRUPT', `${at.what}: invalid ${field}`, { ...where, field });
  // Timelines order these events by their time (as text: ISO 8601 sorts): one that is no time would
  // be placed anywhere. A pattern, not Date.parse (a fifth of a capture line's JSON.parse).
  if (!ISO_TIME.test(e.at)) throw bad('at');
  switch (e.type) {
    case 'capture':
      if (typeof e.tag !== 'string' || !isTag(e.tag)) throw bad('tag');
      if (!Number.isSafeInteger(e.turn) || !Number.isSafeInteger(e.k)) throw bad('turn/k');
      validateFileImages(e.files, at);
      if (e.inline !== undefined) validateInline(e.inline, e.files as FileImage[], at);
      if (e.restoreId !== undefined && !isRestoreId(e.restoreId)) throw bad('restoreId');
      if (e.movedFrom !== undefined && (typeof e.movedFrom !== 'string' || !isTag(e.movedFrom))) throw bad('movedFrom');
      if (e.stageDirs !== undefined) {
        if (!Array.isArray(e.stageDirs)) throw bad('stageDirs');
        for (const d of e.stageDirs) validateStoredPath(d, at);
      }
      return;
    case 'settle':
      validateFileImages(e.files, at);
      if (e.inline !== undefined) validateInline(e.inline, e.files as FileImage[], at);
      return;
    case 'restore_started':
      if (!isRestoreId(e.id)) throw bad('id');
      // A big plan lives in a blob (session/restore-plans.ts validates it the same way when loaded).
      if (e.planBlob !== undefined) {
        if (typeof e.planBlob !== 'string' || !/^[0-9a-f]{64}$/.test(e.planBlob)) throw bad('planBlob');
        if (!Number.isSafeInteger(e.planCount) || (e.planCount as number) < 0) throw bad('planCount');
      } else validateRestorePlan(e.plan, at);
      return;
    case 'restore_committed':
    case 'restore_aborted':
      if (!isRestoreId(e.id)) throw bad('id');
      return;
    case 'conflict':
      validateStoredPath(e.path, at);
      return;
    case 'turn':
      if (!Number.isSafeInteger(e.turn) || (e.turn as number) < 0) throw bad('turn');
      return;
    case 'prune':
      if (!Number.isSafeInteger(e.before)) throw bad('before');
      return;
    default:
  }
}

function isEventShape(value: unknown): value is EventBase {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  return (
    e.v === EVENT_VERSION &&
    Number.isSafeInteger(e.seq) &&
    (e.seq as number) >= 1 &&
    typeof e.type === 'string' &&
    e.type.length > 0 &&
    typeof e.at === 'string'
  );
}
