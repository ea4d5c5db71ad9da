// A capture moved past a prompt (settle.ts acrossPrompt) names the call's first capture: `movedFrom`,
// the tag of an earlier capture of the same log and the same call. Other sessions' timelines leave the
// moved capture out for that first one (workspace-timeline.ts), so a forged reference — to itself, a
// later capture, another call's — would hide a real record: the log is LOG_CORRUPT instead (a probe).
import { CkptError } from '../errors.js';
import type { EventBase } from '../format/event.js';

/**
 * Throws LOG_CORRUPT when a capture of `events` (session `session`'s history) names a `movedFrom` it
 * may not. `copiesDropped`: a removed session's kept file, which holds no copies of a parent's events,
 * so a first capture made before a fork is missing there (the moved one is then placed on its own).
 */
export function checkMovedFrom(events: readonly EventBase[], session: string, copiesDropped = false): void {
  const first = new Map<string, EventBase>();
  for (const e of events) if (e.type === 'capture' && typeof e.tag === 'string' && !first.has(e.tag)) first.set(e.tag, e);
  for (const e of events) {
    if (e.type !== 'capture' || typeof e.movedFrom !== 'string') continue;
    const named = first.get(e.movedFrom);
    const ok = named ? named.seq < e.seq && (typeof e.callId !== 'string' || named.callId === e.callId) : copiesDropped;
    if (ok) continue;
    throw new CkptError('LOG_CORRUPT', `event capture at line ${e.seq} of session ${session}: movedFrom ${e.movedFrom} names no earlier capture of the same call`, {
      session,
      line: e.seq,
      field: 'movedFrom',
    });
  }
}
