// Live appends across machines: the shared driver's appends to inline objects (session logs) run
// `pg_notify(<channel>, {"key","size"})` in the same statement, so a notification is sent exactly
// when the append commits. A subscription LISTENs on a dedicated connection; payloads from the
// database are untrusted and are checked before reaching the listener.
import pg from 'pg';
import { CkptError } from '../../errors.js';

export interface AppendEvent {
  /** The store key appended to (e.g. `workspaces/<wid>/sessions/<id>/events.jsonl`). */
  key: string;
  /** Its size after the append: read from the previous size to here for the new bytes. */
  size: number;
}

export type AppendListener = (event: AppendEvent) => void;

export interface SubscribeOptions {
  connectionString: string;
  channel: string;
  where: string;
  /** Called when the connection breaks; the subscription is over (resubscribe to continue). */
  onError?: (err: Error) => void;
}

/** LISTENs for appends; resolves once listening, to a function that stops (idempotent). */
export async function subscribeAppends(options: SubscribeOptions, listener: AppendListener): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: options.connectionString, application_name: 'ckpt-listen' });
  client.on('error', (err) => options.onError?.(err));
  client.on('notification', (msg) => {
    if (msg.channel !== options.channel || !msg.payload) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(msg.payload);
    } catch {
      return;
    }
    // Any role that can connect may NOTIFY: `null` or a number parses, and destructuring `null` threw
    // out of this handler and ended the daemon (a shared-store probe).
    if (typeof parsed !== 'object' || parsed === null) return;
    const { key, size } = parsed as { key?: unknown; size?: unknown };
    if (typeof key === 'string' && typeof size === 'number' && Number.isSafeInteger(size) && size >= 0) listener({ key, size });
  });
  try {
    await client.connect();
    await client.query(`LISTEN "${options.channel}"`);
  } catch (err) {
    await client.end().catch(() => {});
    throw new CkptError('IO', `cannot listen on ${options.where}: ${(err as Error).message}`, { retryable: true }, { cause: err });
  }
  let stopped = false;
  return async () => {
    if (stopped) return;
    stopped = true;
    await client.end().catch(() => {});
  };
}
