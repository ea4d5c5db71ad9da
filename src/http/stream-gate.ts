// Caps on the daemon's live `GET /events` streams (issue 27 item 10): each open stream holds a socket,
// a hub subscription and its queue (about 50 KB; 2,000 streams grew a daemon by ~95 MB), so a client
// that leaks EventSources, or loops opening them, could exhaust the daemon. A stream is admitted only
// while its client holds fewer than `perClient` and the daemon fewer than `total`; beyond either the
// answer is `LIMIT_REACHED` (HTTP 429, DESIGN §7) before any stream starts. A stream's slot is given
// back when it ends for any reason (the client went away, the daemon closed it).
import { CkptError, invalidValue } from '../index.js';

export interface StreamLimits {
  /** Streams one client may hold at once (a client: one web sign-in, or the bearer token, per remote address). */
  perClient: number;
  /** Streams the daemon holds at once, all clients together. */
  total: number;
}

/** 32 per client (a browser caps a host's connections at 6 anyway), 256 in all (~13 MB). */
export const DEFAULT_STREAM_LIMITS: StreamLimits = { perClient: 32, total: 256 };

export interface StreamGate {
  /** A slot for `client`, or LIMIT_REACHED. The returned release is idempotent. */
  acquire(client: string): () => void;
  /** Streams open now (all clients). */
  readonly open: number;
}

export function createStreamGate(limits: StreamLimits = DEFAULT_STREAM_LIMITS): StreamGate {
  const byClient = new Map<string, number>();
  let open = 0;
  return {
    get open() {
      return open;
    },
    acquire(client) {
      const mine = byClient.get(client) ?? 0;
      if (mine >= limits.perClient) {
        throw new CkptError('LIMIT_REACHED', `too many live event streams from this client (${mine} open, at most ${limits.perClient}): close one (or raise --max-event-streams-per-client)`, { limit: limits.perClient, scope: 'client', open: mine, retryAfterSeconds: 5 });
      }
      if (open >= limits.total) {
        throw new CkptError('LIMIT_REACHED', `too many live event streams on this daemon (${open} open, at most ${limits.total}): try again later (or raise --max-event-streams)`, { limit: limits.total, scope: 'daemon', open, retryAfterSeconds: 5 });
      }
      byClient.set(client, mine + 1);
      open++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        open--;
        const left = (byClient.get(client) ?? 1) - 1;
        if (left > 0) byClient.set(client, left);
        else byClient.delete(client);
      };
    },
  };
}

/** A stream limit given as text (flag or environment): a positive integer, else INVALID_ARGUMENT. */
export function parseStreamLimit(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw invalidValue(name, text, `${name} must be a positive integer, got ${JSON.stringify(text)}`, { [name]: text });
  return n;
}
