// The shared driver of StoreBackend (issue 17): PostgreSQL holds every object's row and the bytes of
// logs, metadata and indexes; blobs and packs (`blobs/`, `packs/`) live in S3 as immutable, uniquely
// named objects that a chunk row points to. A row is the commit point: an S3 object without one is a
// leftover of an interrupted write. Locks are advisory locks (pg-lock.ts); GC's quarantine, release
// and leftovers are in shared-gc.ts; appends to logs NOTIFY listeners (shared-notify.ts).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { CkptError } from '../../errors.js';
import type { ObjectStat, StoreBackend } from '../backend.js';
import { createPgLocks } from './pg-lock.js';
import { ensureSchema, NOW_US, tablesOf } from './pg-schema.js';
import { createS3Objects } from './s3-objects.js';
import type { ChunkRow, SharedEnv } from './shared-env.js';
import { createSharedGc } from './shared-gc.js';
import { subscribeAppends, type AppendListener } from './shared-notify.js';
import { compareKeys, keySegments } from '../store-key.js';
import { parseSharedStoreUrl, type SharedStoreLocation } from './store-url.js';

export interface SharedBackendOptions {
  /** `postgres://…?blobs=s3://bucket[/prefix]&endpoint=…` (see store-url.ts). */
  url: string;
  /** Default wait for `withLock` before LOCKED (10 s). */
  lockTimeoutMs?: number;
}

export interface SharedBackend extends StoreBackend {
  readonly location: SharedStoreLocation;
  /** Calls `listener` for every append to an inline object (session logs) by any process on any machine. */
  /** LISTENs for appends; `onError` is told when the connection breaks (the subscription is then over). */
  subscribe(listener: AppendListener, onError?: (err: Error) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const EXTERNAL_ROOTS = ['blobs/', 'packs/'];

/** How long one query may wait for the server: `CKPT_SHARED_QUERY_TIMEOUT_MS` (tests), default 60 s. */
function queryTimeoutMs(): number {
  const ms = Number(process.env.CKPT_SHARED_QUERY_TIMEOUT_MS);
  return Number.isSafeInteger(ms) && ms > 0 ? ms : 60_000;
}
const OWN_TAIL = 1 + 16 + 1 + 16;
const toMs = (us: string | number): number => Number(us) / 1000;

export async function createSharedBackend(options: SharedBackendOptions): Promise<SharedBackend> {
  const loc = parseSharedStoreUrl(options.url);
  const t = tablesOf(loc.schema);
  // A server that stops answering after the connection was made (frozen, a network gone silent) must
  // fail the command (IO, retryable) in bounded time: without a query timeout a restore waited for
  // ever (a probe froze PostgreSQL with SIGSTOP: still waiting after 300 s). Every query ckpt makes is
  // short (locks are polled with pg_try_advisory_lock); the keepalive finds a peer that is gone.
  const poolConfig = {
    connectionString: loc.pgConnectionString,
    allowExitOnIdle: true,
    idleTimeoutMillis: 5_000,
    connectionTimeoutMillis: 30_000,
    query_timeout: queryTimeoutMs(),
    keepAlive: true,
    application_name: 'ckpt',
  };
  const pool = new pg.Pool({ ...poolConfig, max: 8 });
  const lockPool = new pg.Pool({ ...poolConfig, max: 32 });
  // A pooled connection that breaks (server restart) must not crash the process: an idle one is
  // the pool's 'error'; a checked-out one (a transaction, a held lock) emits 'error' on the client
  // itself — with no listener, an uncaught exception that killed a CLI (exit 1, a stack) or a daemon
  // mid-command (found by test/fleet-pg-restart.test.ts). Its queries fail (IO) either way, and the
  // pool drops a client that is no longer queryable when it is released.
  for (const p of [pool, lockPool]) {
    p.on('error', () => {});
    p.on('connect', (client) => client.on('error', () => {}));
  }
  const s3 = createS3Objects({ bucket: loc.bucket, endpoint: loc.endpoint, region: loc.region, where: loc.redacted });
  const closers: (() => Promise<void>)[] = [];
  // The bucket is checked (made if missing) by the first put, not here: what needs only PostgreSQL
  // (logs, status, the daemon's feed) opens and works while S3 is unreachable.
  let storeId: string;
  try {
    storeId = await ensureSchema(pool, loc.schema);
  } catch (err) {
    await Promise.allSettled([pool.end(), lockPool.end()]);
    s3.close();
    if (err instanceof CkptError) throw err;
    throw new CkptError('IO', `cannot open the shared store ${loc.redacted}: ${(err as Error).message}`, { store: loc.redacted, retryable: true }, { cause: err });
  }

  // `.<store id>.<16 hex>`: the end of every S3 object name this store writes.
  const ownTail = new RegExp(`^\\.${storeId}\\.[0-9a-f]{16}$`);
  const isOwnS3Name = (name: string): boolean => {
    if (!name.startsWith(loc.prefix) || name.length <= loc.prefix.length + OWN_TAIL || !ownTail.test(name.slice(-OWN_TAIL))) return false;
    const key = name.slice(loc.prefix.length, -OWN_TAIL);
    try {
      keySegments(key);
    } catch {
      return false;
    }
    return EXTERNAL_ROOTS.some((r) => key.startsWith(r));
  };
  const env: SharedEnv = {
    pool,
    t,
    s3,
    loc,
    isExternal: (key) => EXTERNAL_ROOTS.some((r) => key.startsWith(r)),
    newS3Name: (key) => `${loc.prefix}${key}.${storeId}.${randomBytes(8).toString('hex')}`,
    isOwnS3Name,
    async dropS3(names) {
      // Only this store's objects: a row naming another store's object (one sharing the bucket) or
      // any other key of the bucket must never make this store delete it (a forged row; probe 2026-12-07).
      const live = names.filter((n): n is string => typeof n === 'string' && isOwnS3Name(n));
      if (live.length === 0) return;
      // Rows are untrusted: one may name another row's object (a damaged or copied row). An object
      // some row still names stays; deleting it lost that row's blob when a put replaced the bad row.
      const named = await pool
        .query<{ s3_name: string }>(`SELECT DISTINCT s3_name FROM ${t.chunks} WHERE s3_name = ANY($1::text[])`, [live])
        .then((r) => new Set(r.rows.map((row) => row.s3_name)))
        .catch(() => undefined);
      if (!named) return;
      const gone = live.filter((n) => !named.has(n));
      if (gone.length > 0) await s3.deleteMany(gone).catch(() => {});
    },
  };

  const q = async <R extends pg.QueryResultRow>(what: string, sql: string, params: unknown[]): Promise<pg.QueryResult<R>> => {
    try {
      return await pool.query<R>(sql, params);
    } catch (err) {
      throw new CkptError('IO', `${what}: ${(err as Error).message}`, { retryable: true }, { cause: err });
    }
  };
  const corrupt = (key: string, why: string): CkptError =>
    new CkptError(env.isExternal(key) ? 'BLOB_CORRUPT' : 'LOG_CORRUPT', `stored object ${key} is damaged: ${why}`, { key });

  /** The bytes [from, to) of `key` from its chunk rows (ordered by offset), checked for gaps and lengths. */
  async function assemble(key: string, rows: ChunkRow[], from: number, to: number): Promise<Buffer> {
    if (to <= from) return Buffer.alloc(0);
    let expected = -1;
    for (const r of rows) {
      const off = Number(r.off);
      if (expected >= 0 && off !== expected) throw corrupt(key, `chunk at ${off}, expected ${expected}`);
      expected = off + Number(r.len);
    }
    if (rows.length === 0 || Number(rows[0]!.off) > from || expected < to) throw corrupt(key, `chunks do not cover bytes ${from}-${to}`);
    const parts = await Promise.all(
      rows.map(async (r) => {
        const off = Number(r.off);
        const len = Number(r.len);
        const a = Math.max(from, off) - off;
        const b = Math.min(to, off + len) - off;
        if (r.data) {
          if (r.data.length !== len) throw corrupt(key, `chunk at ${off} holds ${r.data.length} bytes, expected ${len}`);
          return r.data.subarray(a, b);
        }
        const got = await s3.get(r.s3_name!, a === 0 && b === len ? undefined : { offset: a, length: b - a });
        if (!got) throw corrupt(key, `its S3 object ${r.s3_name} is missing`);
        if (got.length !== b - a) throw corrupt(key, `its S3 object ${r.s3_name} returned ${got.length} bytes, expected ${b - a}`);
        return got;
      }),
    );
    return Buffer.concat(parts);
  }

  const prefixRange = (prefix: string): { root: boolean; p: string } => {
    const segs = keySegments(prefix, true);
    return { root: segs.length === 0, p: segs.join('/') };
  };
  // Keys under p: p/… ('0' is the character after '/').
  const UNDER = `(key >= $1 || '/' AND key < $1 || '0')`;

  const locks = createPgLocks({ pool: lockPool, namespace: loc.schema, defaultTimeoutMs: options.lockTimeoutMs ?? 10_000, where: loc.redacted });
  const { assertHeld } = locks;

  const freshen = async (key: string): Promise<boolean> =>
    (await q('touch', `UPDATE ${t.objects} SET mtime_us = greatest(${NOW_US}, mtime_us + 1) WHERE key = $1`, [key])).rowCount! > 0;

  const backend: SharedBackend = {
    kind: 'shared',
    location: loc,
    ...createSharedGc(env),

    async read(key) {
      keySegments(key);
      const res = await q<{ size: string } & ChunkRow>(
        `read ${key}`,
        `SELECT o.size, c.off, c.len, c.data, c.s3_name FROM ${t.objects} o LEFT JOIN ${t.chunks} c ON c.key = o.key
         WHERE o.key = $1 ORDER BY c.off`,
        [key],
      );
      if (res.rows.length === 0) return undefined;
      const size = Number(res.rows[0]!.size);
      return assemble(key, res.rows.filter((r) => r.off !== null), 0, size);
    },

    async readFrom(key, offset) {
      keySegments(key);
      const res = await q<{ size: string } & ChunkRow>(
        `read ${key}`,
        `SELECT o.size, c.off, c.len, c.data, c.s3_name FROM ${t.objects} o
         LEFT JOIN ${t.chunks} c ON c.key = o.key AND c.off + c.len > $2::bigint
         WHERE o.key = $1 ORDER BY c.off`,
        [key, offset],
      );
      if (res.rows.length === 0) return undefined;
      const size = Number(res.rows[0]!.size);
      return assemble(key, res.rows.filter((r) => r.off !== null), Math.min(offset, size), size);
    },

    async readRange(key, offset, length) {
      keySegments(key);
      const res = await q<{ size: string } & ChunkRow>(
        `read ${key}`,
        `SELECT o.size, c.off, c.len, c.data, c.s3_name FROM ${t.objects} o
         LEFT JOIN ${t.chunks} c ON c.key = o.key AND c.off < $2::bigint + $3::bigint AND c.off + c.len > $2::bigint
         WHERE o.key = $1 ORDER BY c.off`,
        [key, offset, Math.max(0, length)],
      );
      if (res.rows.length === 0) return undefined;
      const size = Number(res.rows[0]!.size);
      return assemble(key, res.rows.filter((r) => r.off !== null), Math.min(offset, size), Math.min(offset + Math.max(0, length), size));
    },

    async write(key, data) {
      keySegments(key);
      assertHeld();
      if (!env.isExternal(key)) {
        // One statement, so atomic: the object row and its single chunk replace what was there.
        await q(
          `write ${key}`,
          `WITH d AS (DELETE FROM ${t.chunks} WHERE key = $1 AND (off > 0 OR $2::bigint = 0)),
           o AS (INSERT INTO ${t.objects} (key, size, mtime_us) VALUES ($1, $2::bigint, ${NOW_US})
                 ON CONFLICT (key) DO UPDATE SET size = EXCLUDED.size, mtime_us = greatest(EXCLUDED.mtime_us, ${t.objects}.mtime_us + 1))
           INSERT INTO ${t.chunks} (key, off, len, data) SELECT $1, 0, $2::bigint, $3::bytea WHERE $2::bigint > 0
           ON CONFLICT (key, off) DO UPDATE SET len = EXCLUDED.len, data = EXCLUDED.data, s3_name = NULL`,
          [key, data.length, Buffer.from(data.buffer, data.byteOffset, data.length)],
        );
        return;
      }
      const name = data.length > 0 ? env.newS3Name(key) : null;
      if (name) await s3.put(name, data);
      let old: (string | null)[] = [];
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        old = (await client.query<{ s3_name: string | null }>(`DELETE FROM ${t.chunks} WHERE key = $1 RETURNING s3_name`, [key])).rows.map((r) => r.s3_name);
        await client.query(
          `INSERT INTO ${t.objects} (key, size, mtime_us) VALUES ($1, $2::bigint, ${NOW_US})
           ON CONFLICT (key) DO UPDATE SET size = EXCLUDED.size, mtime_us = greatest(EXCLUDED.mtime_us, ${t.objects}.mtime_us + 1)`,
          [key, data.length],
        );
        if (name) await client.query(`INSERT INTO ${t.chunks} (key, off, len, s3_name) VALUES ($1, 0, $2::bigint, $3)`, [key, data.length, name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        await env.dropS3([name]);
        throw new CkptError('IO', `write ${key}: ${(err as Error).message}`, { retryable: true }, { cause: err });
      } finally {
        client.release();
      }
      await env.dropS3(old);
    },

    async create(key, data) {
      keySegments(key);
      assertHeld();
      const external = env.isExternal(key) && data.length > 0;
      const name = external ? env.newS3Name(key) : null;
      // The S3 put runs alongside the existence check: callers (the blob store) create what they just
      // found missing, so the object is nearly always needed and its latency is not added to the check's.
      const [check, put] = await Promise.allSettled([freshen(key), name ? s3.put(name, data) : undefined]);
      if (check.status === 'rejected') {
        if (put.status === 'fulfilled') await env.dropS3([name]);
        throw check.reason;
      }
      if (check.value) {
        // Already there: freshened (a concurrent GC's age gate then protects it) and left alone.
        if (put.status === 'fulfilled') await env.dropS3([name]);
        return false;
      }
      if (put.status === 'rejected') throw put.reason;
      const bytes = external ? null : Buffer.from(data.buffer, data.byteOffset, data.length);
      // The row insert decides the one winner among concurrent creators.
      const res = await q<{ n: number }>(
        `create ${key}`,
        `WITH o AS (INSERT INTO ${t.objects} (key, size, mtime_us) VALUES ($1, $2::bigint, ${NOW_US}) ON CONFLICT (key) DO NOTHING RETURNING key),
         c AS (INSERT INTO ${t.chunks} (key, off, len, data, s3_name) SELECT key, 0, $2::bigint, $3::bytea, $4 FROM o WHERE $2::bigint > 0)
         SELECT count(*)::int AS n FROM o`,
        [key, data.length, bytes, name],
      );
      if (res.rows[0]!.n === 1) return true;
      await env.dropS3([name]);
      await freshen(key);
      return false;
    },

    async append(key, data) {
      keySegments(key);
      assertHeld();
      const len = data.length;
      const external = env.isExternal(key);
      const name = external && len > 0 ? env.newS3Name(key) : null;
      if (name) await s3.put(name, data);
      try {
        // The upsert's row lock serializes appenders: each gets the offset where its bytes start.
        await q(
          `append ${key}`,
          `WITH o AS (INSERT INTO ${t.objects} (key, size, mtime_us) VALUES ($1, $2::bigint, ${NOW_US})
                      ON CONFLICT (key) DO UPDATE SET size = ${t.objects}.size + EXCLUDED.size,
                        mtime_us = greatest(EXCLUDED.mtime_us, ${t.objects}.mtime_us + 1)
                      RETURNING size),
           c AS (INSERT INTO ${t.chunks} (key, off, len, data, s3_name) SELECT $1, size - $2::bigint, $2::bigint, $3::bytea, $4 FROM o WHERE $2::bigint > 0)
           SELECT CASE WHEN $5::boolean THEN pg_notify($6, json_build_object('key', $1::text, 'size', size)::text) END FROM o`,
          [key, len, name ? null : Buffer.from(data.buffer, data.byteOffset, len), name, !external, t.channel],
        );
      } catch (err) {
        await env.dropS3([name]);
        throw err;
      }
    },

    async truncate(key, size) {
      keySegments(key);
      assertHeld();
      const dropped: (string | null)[] = [];
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const cur = await client.query<{ size: string }>(`SELECT size FROM ${t.objects} WHERE key = $1 FOR UPDATE`, [key]);
        if (cur.rows.length === 0) throw new CkptError('NOT_FOUND', `cannot truncate missing ${key}`, { key });
        const was = Number(cur.rows[0]!.size);
        if (size > was) {
          // Growing fills with zeros, as ftruncate does.
          await client.query(`INSERT INTO ${t.chunks} (key, off, len, data) VALUES ($1, $2::bigint, $3::bigint, $4)`, [key, was, size - was, Buffer.alloc(size - was)]);
        } else if (size < was) {
          const gone = await client.query<{ s3_name: string | null }>(`DELETE FROM ${t.chunks} WHERE key = $1 AND off >= $2::bigint RETURNING s3_name`, [key, size]);
          dropped.push(...gone.rows.map((r) => r.s3_name));
          const cut = await client.query<ChunkRow>(`SELECT off, len, data, s3_name FROM ${t.chunks} WHERE key = $1 AND off < $2::bigint AND off + len > $2::bigint`, [key, size]);
          const straddler = cut.rows[0];
          if (straddler) {
            const keep = size - Number(straddler.off);
            if (straddler.data) {
              await client.query(`UPDATE ${t.chunks} SET data = substring(data FROM 1 FOR $3::int), len = $3::bigint WHERE key = $1 AND off = $2::bigint`, [key, straddler.off, keep]);
            } else {
              const head = await assemble(key, [straddler], Number(straddler.off), size);
              const name = env.newS3Name(key);
              await s3.put(name, head);
              await client.query(`UPDATE ${t.chunks} SET s3_name = $3, len = $4::bigint WHERE key = $1 AND off = $2::bigint`, [key, straddler.off, name, keep]);
              dropped.push(straddler.s3_name);
            }
          }
        }
        await client.query(`UPDATE ${t.objects} SET size = $2::bigint, mtime_us = greatest(${NOW_US}, mtime_us + 1) WHERE key = $1`, [key, size]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        if (err instanceof CkptError) throw err;
        throw new CkptError('IO', `truncate ${key}: ${(err as Error).message}`, { retryable: true }, { cause: err });
      } finally {
        client.release();
      }
      await env.dropS3(dropped);
    },

    async stat(key): Promise<ObjectStat | undefined> {
      keySegments(key);
      const res = await q<{ size: string; mtime_us: string }>(`stat ${key}`, `SELECT size, mtime_us FROM ${t.objects} WHERE key = $1`, [key]);
      const row = res.rows[0];
      return row ? { size: Number(row.size), mtimeMs: toMs(row.mtime_us) } : undefined;
    },

    async touch(key) {
      keySegments(key);
      return freshen(key);
    },

    async remove(key) {
      keySegments(key);
      assertHeld();
      const res = await q<{ s3_name: string | null }>(
        `remove ${key}`,
        `WITH o AS (DELETE FROM ${t.objects} WHERE key = $1), c AS (DELETE FROM ${t.chunks} WHERE key = $1 RETURNING s3_name) SELECT s3_name FROM c`,
        [key],
      );
      await env.dropS3(res.rows.map((r) => r.s3_name));
    },

    async removeTree(prefix) {
      const p = keySegments(prefix).join('/');
      assertHeld();
      const res = await q<{ s3_name: string | null }>(
        `removeTree ${prefix}`,
        `WITH o AS (DELETE FROM ${t.objects} WHERE quarantine_of IS NULL AND (key = $1 OR ${UNDER})),
         c AS (DELETE FROM ${t.chunks} WHERE (key = $1 OR ${UNDER}) RETURNING s3_name) SELECT s3_name FROM c`,
        [p],
      );
      await env.dropS3(res.rows.map((r) => r.s3_name));
    },

    async list(prefix) {
      const { root, p } = prefixRange(prefix);
      const res = await q<{ key: string }>(`list ${prefix}`, `SELECT key FROM ${t.objects} WHERE quarantine_of IS NULL AND ($2::boolean OR ${UNDER})`, [p, root]);
      return res.rows.map((r) => r.key).sort(compareKeys);
    },

    async children(prefix) {
      const { root, p } = prefixRange(prefix);
      const res = await q<{ name: string }>(
        `children ${prefix}`,
        `SELECT DISTINCT split_part(substr(key, CASE WHEN $2::boolean THEN 1 ELSE char_length($1) + 2 END), '/', 1) AS name
         FROM ${t.objects} WHERE quarantine_of IS NULL AND ($2::boolean OR ${UNDER})`,
        [p, root],
      );
      return res.rows.map((r) => r.name).sort(compareKeys);
    },

    withLock: locks.withLock,

    async subscribe(listener, onError) {
      const stop = await subscribeAppends({ connectionString: loc.pgConnectionString, channel: t.channel, where: loc.redacted, ...(onError ? { onError } : {}) }, listener);
      closers.push(stop);
      return stop;
    },

    async close() {
      await Promise.allSettled(closers.splice(0).map((c) => c()));
      await Promise.allSettled([pool.end(), lockPool.end()]);
      s3.close();
    },
  };
  return backend;
}
