// Live events for GET /events (DESIGN §10 "Daemon"): the store's log feed numbered for Server-Sent
// Events. Ids are `<boot>-<n>` (n counts events since this daemon started); the last 10,000 are kept so
// a client that reconnects with Last-Event-ID gets what it missed. An id from another daemon run or
// older than the buffer cannot be resumed: the client is told (`reset`) and re-reads the logs.
import { randomBytes } from 'node:crypto';
import { createLogFeed, type FeedEvent, type LogFeed, type Store } from '../index.js';

export interface HubEvent extends FeedEvent {
  id: string;
  n: number;
}

export type HubListener = (events: HubEvent[]) => void;

export interface EventHub {
  readonly boot: string;
  /** Events after `lastEventId` still in the buffer; `reset` when that id cannot be resumed. */
  since(lastEventId: string): { events: HubEvent[]; reset?: string };
  subscribe(listener: HubListener): () => void;
  /** Reads every log now (tests; the feed also polls). */
  sync(): Promise<void>;
  close(): void;
}

const BUFFER = 10_000;

export async function createEventHub(store: Store, onError?: (err: unknown) => void): Promise<EventHub> {
  const boot = randomBytes(4).toString('hex');
  const buffer: HubEvent[] = [];
  const listeners = new Set<HubListener>();
  let n = 0;
  const feed: LogFeed = await createLogFeed(store.ctx, {
    onEvents(batch) {
      const numbered = batch.map((e) => ({ ...e, n: ++n, id: `${boot}-${n}` }));
      buffer.push(...numbered);
      if (buffer.length > BUFFER) buffer.splice(0, buffer.length - BUFFER);
      for (const l of listeners) l(numbered);
    },
    onError: (err) => onError?.(err),
    ...(store.subscribeAppends ? { subscribe: store.subscribeAppends } : {}),
  });
  return {
    boot,
    since(lastEventId) {
      const m = /^([0-9a-f]{8})-(\d+)$/.exec(lastEventId);
      if (!m || m[1] !== boot) return { events: [], reset: 'the event id is from another daemon run: re-read the session logs' };
      const after = Number(m[2]);
      const first = buffer[0]?.n ?? n + 1;
      if (after < first - 1) return { events: [], reset: 'events after that id are no longer buffered: re-read the session logs' };
      return { events: buffer.filter((e) => e.n > after) };
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    sync: () => feed.sync(),
    close() {
      listeners.clear();
      feed.close();
    },
  };
}
