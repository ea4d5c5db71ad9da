// Read routes the web timeline needs beyond the CLI contract (DESIGN §10 "Web timeline"): a
// session's events paged (so a 10,000-event session loads a page at a time) with blob ids left out,
// and each session's turn and touched-file counts for the sessions list.
import { z } from 'zod';
import type { DaemonState } from './daemon-state.js';
import type { Router } from './route.js';
import { sessionRoutes } from './session-route.js';
import { workspaceQuery } from './schemas.js';

const MAX_PAGE = 1000;

export function addWebRoutes(r: Router, state: DaemonState): void {
  sessionRoutes(r, state)('GET /events', {
    summary: "a page of the session's events, oldest first (offset, limit ≤ 1000, or tail=1 for the newest page; blob ids omitted)",
    query: workspaceQuery.extend({
      offset: z.coerce.number().int().min(0).optional(),
      limit: z.coerce.number().int().min(1).max(MAX_PAGE).optional(),
      tail: z.enum(['1']).optional(),
    }),
    handler: async ({ s, query }) => {
      const events = await s.events();
      const limit = query.limit ?? 200;
      const offset = query.tail ? Math.max(0, events.length - limit) : (query.offset ?? 0);
      return { total: events.length, offset, events: events.slice(offset, offset + limit).map((e) => withoutBlobs(e)) };
    },
  });

  r.add({
    method: 'get',
    path: '/web/sessions',
    summary: "the workspace's sessions with their turn, capture and touched-file counts",
    query: workspaceQuery,
    handler: async ({ query }) => {
      const ws = await state.workspace(query.workspace);
      const out = [];
      for (const meta of await ws.list()) {
        const s = await state.session(query.workspace, meta.id, { recover: false });
        const events = await s.events();
        const files = new Set<string>();
        let turns = 0;
        let captures = 0;
        for (const e of events) {
          if (e.type === 'turn') turns++;
          if (e.type === 'capture') {
            captures++;
            for (const f of (e as unknown as { files: { path: string }[] }).files) files.add(f.path);
          }
        }
        out.push({ ...meta, turns, captures, filesTouched: files.size });
      }
      return { sessions: out };
    },
  });
}

/** A copy of an event without the store's blob ids (DESIGN §9: ids are not part of the public output). */
function withoutBlobs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutBlobs);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (k !== 'blob' && k !== 'recovery' && k !== 'inline') out[k] = withoutBlobs(v);
    return out;
  }
  return value;
}
