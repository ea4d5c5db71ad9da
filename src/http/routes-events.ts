// GET /events: Server-Sent Events of every event appended to the store's session logs (by any
// process), filtered by workspace (root path or id) and session, resumable with Last-Event-ID.
// A stream whose client does not read as fast as events come (or never reads) falls behind: past its
// backlog cap it is ended, and the client resumes with Last-Event-ID (or is told `reset`) like any
// dropped stream. Without the cap its queue grew the daemon's memory without bound.
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { DEFAULT_HUB_LIMITS, type EventHub, type HubEvent } from './event-hub.js';
import type { Router } from './route.js';
import type { StreamGate } from './stream-gate.js';

export interface EventsOptions {
  /** Open streams register here so shutdown can end them. */
  streams: Set<() => void>;
  /** Admits a stream (per client and overall caps, 429 beyond them) and takes its slot back when it ends. */
  gate: StreamGate;
  /** How far one stream may fall behind before it is ended (default DEFAULT_STREAM_BACKLOG). */
  backlog?: StreamBacklog;
}

/** Events matched for a stream and not yet written to it: their number and bytes (HubEvent.bytes). */
export interface StreamBacklog {
  events: number;
  bytes: number;
}

/**
 * As much as the hub keeps: a client further behind could not resume from it anyway. The queued events
 * are the hub's own objects, and every live stream's backlog ends at the newest event, so all of them
 * together hold at most one cap's worth beyond the hub.
 */
export const DEFAULT_STREAM_BACKLOG: StreamBacklog = DEFAULT_HUB_LIMITS;

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
      const cap = options.backlog ?? DEFAULT_STREAM_BACKLOG;
      return streamSSE(c, async (stream) => {
        let queue: HubEvent[] = [];
        // The backlog: events in `queue` and in the batch being written, until each is written.
        const behind = { events: 0, bytes: 0 };
        let wake: (() => void) | undefined;
        let ended = false;
        const end = (): void => {
          ended = true;
          release();
          wake?.();
        };
        const unsubscribe = hub.subscribe((events) => {
          if (ended) return;
          for (const e of events) {
            if (!wanted(e)) continue;
            queue.push(e);
            behind.events++;
            behind.bytes += e.bytes;
          }
          if (behind.events > cap.events || behind.bytes > cap.bytes) {
            // The write in progress waits on a full socket: only closing the socket ends it.
            queue = [];
            end();
            (c.env as { incoming?: { socket?: { destroy(): void } } } | undefined)?.incoming?.socket?.destroy();
            return;
          }
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
            const replay = missed.events.filter((e) => wanted(e) && !seen.has(e.n));
            for (const e of replay) {
              behind.events++;
              behind.bytes += e.bytes;
            }
            queue = [...replay, ...queue];
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
              if (ended) break;
              await stream.writeSSE({ id: e.id, event: e.event.type, data: JSON.stringify({ workspace: e.workspace, root: e.root, ...(e.machine ? { machine: e.machine } : {}), session: e.session, event: e.event }) });
              behind.events--;
              behind.bytes -= e.bytes;
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
