// Session metadata (DESIGN §3 metadata.json): a summary derived from the event log. The log is the
// source of truth; metadata.json is rewritten under the session lock after every append, and can be
// rebuilt from the log when it is missing (a crash between creating the log and writing it).
import type { EventBase, SessionKind } from '../format/event.js';
import { applyInfo, type SessionInfo } from './session-info.js';

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
      meta.kind = (event.kind as SessionKind | undefined) ?? 'root';
      if (typeof event.title === 'string') meta.title = event.title;
      if (typeof event.parent === 'string') meta.parent = event.parent;
      if (event.forkedFrom) meta.forkedFrom = event.forkedFrom as { session: string; seq: number; workspace?: string };
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
