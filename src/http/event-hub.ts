// Live events for GET /events (DESIGN §10 "Daemon"): the store's log feed numbered for Server-Sent
// Events. Ids are `<boot>-<n>` (n counts events since this daemon started); the last 10,000 are kept,
// and at most 32 MiB of them serialized, so a client that reconnects with Last-Event-ID gets what it
// missed. An id from another daemon run or older than the buffer cannot be resumed: the client is told
// (`reset`) and re-reads the logs. The byte cap matters because a hook credential alone can append
// prompts of 64 Ki chars: 10,000 of them held ~1.5 GB.
import { randomBytes } from 'node:crypto';
import { createLogFeed, type FeedEvent, type LogFeed, type Store } from '../index.js';

export interface HubEvent extends FeedEvent {
  id: string;
  n: number;
  /** UTF-8 bytes of the event as a stream sends it (its FeedEvent as JSON): what the caps count. */
  bytes: number;
}

/** How much the hub keeps for Last-Event-ID: the newest events within both caps (oldest dropped first). */
export interface HubLimits {
  events: number;
  bytes: number;
}

export const DEFAULT_HUB_LIMITS: HubLimits = { events: 10_000, bytes: 32 * 1024 * 1024 };

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

export async function createEventHub(store: Store, onError?: (err: unknown) => void, limits: HubLimits = DEFAULT_HUB_LIMITS): Promise<EventHub> {
  const boot = randomBytes(4).toString('hex');
  const buffer: HubEvent[] = [];
  let bufferBytes = 0;
  const listeners = new Set<HubListener>();
  let n = 0;
  const feed: LogFeed = await createLogFeed(store.ctx, {
    onEvents(batch) {
      const numbered = batch.map((e) => ({ ...e, n: ++n, id: `${boot}-${n}`, bytes: Buffer.byteLength(JSON.stringify(e)) }));
      buffer.push(...numbered);
      for (const e of numbered) bufferBytes += e.bytes;
      // Oldest first, until both caps hold (an event over the byte cap alone is not kept at all).
      let drop = Math.max(0, buffer.length - limits.events);
      for (let i = 0; i < drop; i++) bufferBytes -= buffer[i]!.bytes;
      while (drop < buffer.length && bufferBytes > limits.bytes) bufferBytes -= buffer[drop++]!.bytes;
      if (drop > 0) buffer.splice(0, drop);
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
