// Cross-machine locks of the shared driver: PostgreSQL session-level advisory locks, each held on a
// dedicated pooled connection for as long as `fn` runs. When the holder dies (SIGKILL, lost machine)
// its connection closes and PostgreSQL releases the lock, so the next caller takes it over with no
// stale-lock heuristics. In one process callers queue in memory first (fair, no polling); across
// processes `pg_try_advisory_lock` is polled with jittered backoff until the deadline.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { CkptError } from '../../errors.js';
import type { LockOptions } from '../backend.js';

export interface PgLocksOptions {
  /** Connections that hold locks (one per lock held), apart from the query pool. */
  pool: Pool;
  /** Separates the lock ids of stores that share a database (the schema name). */
  namespace: string;
  defaultTimeoutMs: number;
  where: string;
}

export type WithLock = <T>(key: string, fn: () => Promise<T>, options?: LockOptions) => Promise<T>;

/** The locks, and `assertHeld()`: LOCKED when a lock this call runs under was lost (call before a write). */
export interface PgLocks {
  withLock: WithLock;
  assertHeld(): void;
}

interface HeldLock {
  key: string;
  lost?: Error;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The two int4 halves of an advisory lock id for `key` in `namespace` (64 bits of sha256). */
export function advisoryLockId(namespace: string, key: string): [number, number] {
  const h = createHash('sha256').update(namespace).update('\0').update(key).digest();
  return [h.readInt32BE(0), h.readInt32BE(4)];
}

export function createPgLocks(options: PgLocksOptions): PgLocks {
  const heldHere = new AsyncLocalStorage<readonly HeldLock[]>();
  const compromised = (lock: HeldLock): CkptError =>
    new CkptError('LOCKED', `lock ${lock.key} was lost while held: ${lock.lost!.message}`, { key: lock.key, compromised: true });
  const queues = new Map<string, Promise<void>>();

  // Once a lock's connection breaks, PostgreSQL has freed it and another process may hold it: the work
  // under it must not write any more (it used to run on and append events computed before the other
  // holder's, round-6 probe), so every write of the driver asks first.
  const assertHeld = (): void => {
    const lost = heldHere.getStore()?.find((l) => l.lost);
    if (lost) throw compromised(lost);
  };

  const withLock = async function withLock<T>(key: string, fn: () => Promise<T>, lockOptions?: LockOptions): Promise<T> {
    const timeoutMs = lockOptions?.timeoutMs ?? options.defaultTimeoutMs;
    const held = heldHere.getStore();
    if (held?.some((l) => l.key === key)) throw new CkptError('INTERNAL', `nested withLock on ${key} would deadlock`, { key });
    const deadline = Date.now() + timeoutMs;
    const locked = (): CkptError => new CkptError('LOCKED', `lock ${key} not acquired within ${timeoutMs} ms`, { key, timeoutMs });
    const [k1, k2] = advisoryLockId(options.namespace, key);

    const prev = queues.get(key) ?? Promise.resolve();
    let leave!: () => void;
    const mine = new Promise<void>((r) => (leave = r));
    const tail = prev.then(() => mine);
    queues.set(key, tail);
    try {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
      const turn = await Promise.race([prev.then(() => 'go' as const), timedOut]);
      clearTimeout(timer);
      if (turn === 'timeout') throw locked();

      let client: PoolClient;
      try {
        client = await options.pool.connect();
      } catch (err) {
        throw new CkptError('IO', `lock ${key}: cannot connect to ${options.where}: ${(err as Error).message}`, { key, retryable: true }, { cause: err });
      }
      const state: HeldLock = { key };
      const onError = (err: Error): void => {
        state.lost ??= err;
      };
      client.on('error', onError);
      let acquired = false;
      try {
        for (let attempt = 0; ; attempt++) {
          let ok: boolean | undefined;
          try {
            ok = (await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::int4, $2::int4) AS ok', [k1, k2])).rows[0]?.ok;
          } catch (err) {
            state.lost ??= err as Error;
            throw new CkptError('IO', `lock ${key}: ${(err as Error).message}`, { key, retryable: true }, { cause: err });
          }
          if (ok) break;
          const wait = Math.min(200, 5 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random());
          if (Date.now() + wait > deadline) throw locked();
          await sleep(wait);
        }
        acquired = true;
        const result = await heldHere.run([...(held ?? []), state], fn);
        if (state.lost) throw compromised(state);
        return result;
      } finally {
        client.off('error', onError);
        let healthy = !state.lost;
        if (acquired && healthy) {
          healthy = await client.query('SELECT pg_advisory_unlock($1::int4, $2::int4)', [k1, k2]).then(
            () => true,
            () => false,
          );
        }
        // A connection that failed to unlock is closed, not reused: closing it frees the lock.
        client.release(healthy ? undefined : true);
      }
    } finally {
      leave();
      if (queues.get(key) === tail) queues.delete(key);
    }
  };
  return { withLock, assertHeld };
}
