// Where a session's history continues from (issue 26 items 3, 4), for `ckpt log` and `ckpt status`:
// the session an agent's `/clear` left behind (session info `continues`), and the fork point with the
// number of paths that differed from it when the fork was made (the fork's `fork` capture).
import type { EventBase } from '../format/event.js';
import type { SessionHandle } from '../session/session-handle.js';
import { createSessionStore } from '../session/session-store.js';

export interface SessionLinks {
  /** The session this one carries on (an agent's `/clear`), with its turn count; `missing` when it was removed. */
  continues?: { session: string; turns: number; missing?: true };
  /** A fork: the parent, the fork point, and how many paths differed from it when the fork was made. */
  forkedFrom?: { session: string; seq: number; workspace?: string; differs: number; tag?: string };
}

export async function sessionLinks(session: SessionHandle, events: readonly EventBase[]): Promise<SessionLinks> {
  const meta = await session.metadata();
  const out: SessionLinks = {};
  if (meta.continues) {
    try {
      const previous = await createSessionStore(session.ctx).get(meta.continues);
      const turns = (await previous.events()).filter((e) => e.type === 'turn').length;
      out.continues = { session: meta.continues, turns };
    } catch {
      out.continues = { session: meta.continues, turns: 0, missing: true };
    }
  }
  if (meta.forkedFrom) {
    const point = meta.forkedFrom.seq;
    const record = events.find((e) => e.type === 'capture' && e.tool === 'fork' && e.seq > point);
    out.forkedFrom = {
      ...meta.forkedFrom,
      differs: Array.isArray(record?.files) ? record.files.length : 0,
      ...(record && typeof record.tag === 'string' ? { tag: record.tag } : {}),
    };
  }
  return out;
}
