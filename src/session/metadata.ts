// Session metadata (DESIGN §3 metadata.json): a summary derived from the event log. The log is the
// source of truth; metadata.json is rewritten under the session lock after every append, and can be
// rebuilt from the log when it is missing (a crash between creating the log and writing it).
import type { EventBase, SessionKind } from '../format/event.js';

export interface SessionMetadata {
  id: string;
  title: string;
  workspace: string;
  kind: SessionKind;
  parent?: string;
  forkedFrom?: { session: string; seq: number };
  createdAt: string;
  updatedAt: string;
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
      if (event.forkedFrom) meta.forkedFrom = event.forkedFrom as { session: string; seq: number };
    } else if (event.type === 'title' && typeof event.title === 'string') {
      meta.title = event.title;
    }
    meta.updatedAt = event.at;
    meta.eventCount = event.seq;
    meta.lastEventType = event.type;
  }
  if (!meta) throw new Error('foldMetadata needs at least the session event');
  return meta;
}
