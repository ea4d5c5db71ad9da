// Session metadata (DESIGN §3 metadata.json): a summary derived from the event log. The log is the
// source of truth; metadata.json is a cache rewritten under the session lock after appends that
// change more than the counters (and every METADATA_LAG events), holding the log position it was
// folded to, so readers fold only the tail after it. Rebuilt from the log when missing or unusable.
import type { EventBase, SessionKind } from '../format/event.js';
import type { LogPosition } from '../storage/event-log.js';
import { applyInfo, SESSION_INFO_FIELDS, type SessionInfo } from './session-info.js';

/** Events that describe the session rather than its work: they do not make it "recently updated". */
const DESCRIPTIVE_EVENTS: ReadonlySet<string> = new Set(['title', 'info']);

export interface SessionMetadata extends SessionInfo {
  id: string;
  title: string;
  workspace: string;
  kind: SessionKind;
  parent?: string;
  forkedFrom?: { session: string; seq: number; workspace?: string };
  /** 0 for a root session, the parent's depth + 1 for a child or fork. */
  depth: number;
  createdAt: string;
  updatedAt: string;
  /** Set by an `end` event (the agent's session ended); a later turn resumes the session and clears it. */
  endedAt?: string;
  eventCount: number;
  lastEventType: string;
}

/** Folds events into metadata; `base` is the metadata before these events (undefined: from scratch). */
export function foldMetadata(
  base: SessionMetadata | undefined,
  events: readonly EventBase[],
  identity: { id: string; workspace: string },
): SessionMetadata {
  let meta: SessionMetadata | undefined = base;
  for (const event of events) {
    if (!meta) {
      meta = {
        id: identity.id,
        workspace: identity.workspace,
        title: '',
        kind: 'root',
        depth: 0,
        createdAt: event.at,
        updatedAt: event.at,
        eventCount: 0,
        lastEventType: event.type,
      };
    }
    if (event.type === 'session') {
      // The log is untrusted input: a field of the wrong type is left out, never passed on.
      meta.kind = KINDS.has(event.kind as string) ? (event.kind as SessionKind) : 'root';
      if (typeof event.title === 'string') meta.title = event.title;
      if (typeof event.parent === 'string') meta.parent = event.parent;
      if (isForkedFrom(event.forkedFrom)) meta.forkedFrom = event.forkedFrom;
      if (Number.isSafeInteger(event.depth) && (event.depth as number) >= 0) meta.depth = event.depth as number;
      applyInfo(meta, event.info);
    } else if (event.type === 'title' && typeof event.title === 'string') {
      meta.title = event.title;
    } else if (event.type === 'info') {
      applyInfo(meta, event.set);
    } else if (event.type === 'end') {
      meta.endedAt = event.at;
    } else if (event.type === 'turn') {
      delete meta.endedAt;
    }
    // Never before createdAt: a fork's copied events keep their (older) times.
    if ((!DESCRIPTIVE_EVENTS.has(event.type) || event.seq === 1) && event.at > meta.updatedAt) meta.updatedAt = event.at;
    meta.eventCount = event.seq;
    meta.lastEventType = event.type;
  }
  if (!meta) throw new Error('foldMetadata needs at least the session event');
  return meta;
}

/** Events that change only the counters and times of the metadata (the bulk of a busy session). */
const WORK_EVENTS: ReadonlySet<string> = new Set(['capture', 'settle', 'conflict', 'scan']);

/** metadata.json may lag the log by at most this many work events. */
export const METADATA_LAG = 64;

/** Whether an append of `appended` (dense seqs) must rewrite metadata.json. */
export function metadataDue(appended: readonly EventBase[]): boolean {
  if (appended.length === 0) return false;
  const first = appended[0]!.seq;
  const last = appended.at(-1)!.seq;
  return appended.some((e) => !WORK_EVENTS.has(e.type)) || Math.floor((first - 1) / METADATA_LAG) !== Math.floor(last / METADATA_LAG);
}

/** metadata.json on disk: the metadata and, when written by this version, the log position it was folded to. */
export type StoredMetadataFile = SessionMetadata & { pos?: LogPosition };

export interface StoredMetadata {
  meta: SessionMetadata;
  /** Where the fold stopped (its seq is `meta.eventCount`); absent in files of older versions. */
  pos?: LogPosition;
}

const KINDS: ReadonlySet<string> = new Set<SessionKind>(['root', 'fork', 'child']);

function isForkedFrom(v: unknown): v is SessionMetadata['forkedFrom'] & object {
  const f = v as { session?: unknown; seq?: unknown; workspace?: unknown } | null;
  return typeof f === 'object' && f !== null && typeof f.session === 'string' && Number.isSafeInteger(f.seq) && (f.workspace === undefined || typeof f.workspace === 'string');
}

/**
 * metadata.json as read back (a cache, untrusted): the metadata when every field has its type and
 * the id is this session's, undefined otherwise (the caller folds the log instead) — also when its
 * position is malformed or names another seq (readSince checks the rest against the log).
 */
export function decodeStoredMetadata(value: unknown, id: string): StoredMetadata | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const m = value as Record<string, unknown>;
  const str = (k: string): boolean => typeof m[k] === 'string';
  const optStr = (k: string): boolean => m[k] === undefined || typeof m[k] === 'string';
  const ok =
    m.id === id && str('title') && str('workspace') && KINDS.has(m.kind as string) && str('createdAt') && str('updatedAt') && str('lastEventType') &&
    Number.isSafeInteger(m.depth) && (m.depth as number) >= 0 && Number.isSafeInteger(m.eventCount) && (m.eventCount as number) >= 1 &&
    optStr('parent') && optStr('endedAt') && (m.forkedFrom === undefined || isForkedFrom(m.forkedFrom)) && SESSION_INFO_FIELDS.every(optStr);
  if (!ok) return undefined;
  const { pos, ...meta } = m as unknown as StoredMetadataFile;
  if (pos === undefined) return { meta }; // written by an older version
  return isPosition(pos) && pos.seq === meta.eventCount ? { meta, pos } : undefined;
}

function isPosition(v: unknown): v is LogPosition {
  const p = v as Partial<LogPosition> | null;
  return typeof p === 'object' && p !== null && Number.isSafeInteger(p.seq) && Number.isSafeInteger(p.bytes) && typeof p.lastLine === 'string';
}
