// GET /events: Server-Sent Events of every event appended to the store's session logs (by any
// process), filtered by workspace (root path or id) and session, resumable with Last-Event-ID.
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import type { EventHub, HubEvent } from './event-hub.js';
import type { Router } from './route.js';
import type { StreamGate } from './stream-gate.js';

export interface EventsOptions {
  /** Open streams register here so shutdown can end them. */
  streams: Set<() => void>;
  /** Admits a stream (per client and overall caps, 429 beyond them) and takes its slot back when it ends. */
  gate: StreamGate;
}

export function addEventRoutes(r: Router, hub: EventHub, options: EventsOptions): void {
  r.add({
    method: 'get',
    path: '/events',
    summary: 'live events (text/event-stream): every append to any session log of the store; resumable with Last-Event-ID',
    query: z.object({
      workspace: z.string().min(1).optional().describe('workspace root path or 20-hex id'),
      machine: z.string().min(1).max(256).optional().describe('only workspaces of this machine (shared stores)'),
      session: z.string().min(1).optional(),
      lastEventId: z.string().max(64).optional().describe('same as the Last-Event-ID header'),
      key: z.string().max(64).optional().describe("the web page's key (an EventSource cannot send X-Ckpt-Key); checked by the guard"),
    }),
    handler: async ({ query, c }) => {
      const wanted = (e: HubEvent): boolean =>
        (query.workspace === undefined || e.workspace === query.workspace || e.root === query.workspace) &&
        (query.session === undefined || e.session === query.session) &&
        (query.machine === undefined || e.machine === query.machine);
      const resumeFrom = c.req.header('last-event-id') ?? query.lastEventId;
      // A client is its credential from one remote address (on loopback: one browser sign-in, or the token).
      const remote = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress ?? 'local';
      // Admitted (or LIMIT_REACHED, 429) before the stream starts, so a refusal is an ordinary JSON error.
      const release = options.gate.acquire(`${remote} ${c.get('ckptClient') ?? 'token'}`);
      return streamSSE(c, async (stream) => {
        let queue: HubEvent[] = [];
        let wake: (() => void) | undefined;
        let ended = false;
        const end = (): void => {
          ended = true;
          release();
          wake?.();
        };
        const unsubscribe = hub.subscribe((events) => {
          for (const e of events) if (wanted(e)) queue.push(e);
          wake?.();
        });
        options.streams.add(end);
        stream.onAbort(end);
        try {
          await stream.writeSSE({ event: 'hello', data: JSON.stringify({ boot: hub.boot }) });
          if (resumeFrom) {
            const missed = hub.since(resumeFrom);
            if (missed.reset) await stream.writeSSE({ event: 'reset', data: JSON.stringify({ reason: missed.reset }) });
            const seen = new Set(queue.map((e) => e.n));
            queue = [...missed.events.filter((e) => wanted(e) && !seen.has(e.n)), ...queue];
          }
          while (!ended) {
            if (queue.length === 0) {
              // A comment line every 15 s keeps proxies and idle timeouts from closing the stream.
              await new Promise<void>((resolve) => {
                wake = resolve;
                setTimeout(resolve, 15_000).unref();
              });
              wake = undefined;
              if (queue.length === 0 && !ended) await stream.write(': keep-alive\n\n');
              continue;
            }
            const batch = queue;
            queue = [];
            for (const e of batch) {
              await stream.writeSSE({ id: e.id, event: e.event.type, data: JSON.stringify({ workspace: e.workspace, root: e.root, ...(e.machine ? { machine: e.machine } : {}), session: e.session, event: e.event }) });
            }
          }
        } finally {
          release();
          unsubscribe();
          options.streams.delete(end);
        }
      });
    },
  });
}
