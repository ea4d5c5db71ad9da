// What GC needs from the shared driver (DESIGN §10 "Shared store"): quarantine renames an object's
// rows to a hidden `../gc/<hex>` key (its S3 objects stay where they are, uniquely named, so a put
// meanwhile writes new ones and nothing is shared); release renames them back unless a copy was
// written meanwhile; leftovers are quarantined rows and S3 objects no row points to (interrupted
// writes) whose names carry this store's id, aged by the database clock and S3's LastModified respectively.
import { randomBytes } from 'node:crypto';
import { CkptError } from '../../errors.js';
import type { Leftover, Quarantined, StoreBackend } from '../backend.js';
import type { SharedEnv } from './shared-env.js';
import { keySegments } from '../store-key.js';

/** Leftover keys start with `../`, which no object key can: they never collide with or list as objects. */
const QUARANTINE = '../gc/';
const S3_ORPHAN = '../s3/';
/** A cutoff in µs PostgreSQL can compare (Infinity and beyond-range values clamp). */
const cutoffUs = (ms: number): number => (ms === Infinity ? Number.MAX_SAFE_INTEGER : Math.max(-1, Math.min(Number.MAX_SAFE_INTEGER, Math.floor(ms * 1000))));

type GcPart = Pick<StoreBackend, 'quarantine' | 'release' | 'leftovers' | 'removeLeftover'>;

export function createSharedGc(env: SharedEnv): GcPart {
  const { pool, t, s3, loc } = env;
  const wrap = (what: string, err: unknown): CkptError =>
    err instanceof CkptError ? err : new CkptError('IO', `${what}: ${(err as Error).message}`, { retryable: true }, { cause: err });

  return {
    async quarantine(key): Promise<Quarantined | undefined> {
      keySegments(key);
      const qkey = `${QUARANTINE}${randomBytes(8).toString('hex')}`;
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const res = await client.query<{ size: string; mtime_us: string }>(
          `UPDATE ${t.objects} SET key = $2, quarantine_of = $1 WHERE key = $1 RETURNING size, mtime_us`,
          [key, qkey],
        );
        const row = res.rows[0];
        if (row) await client.query(`UPDATE ${t.chunks} SET key = $2 WHERE key = $1`, [key, qkey]);
        await client.query('COMMIT');
        return row ? { key: qkey, stat: { size: Number(row.size), mtimeMs: Number(row.mtime_us) / 1000 } } : undefined;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw wrap(`quarantine ${key}`, err);
      } finally {
        client.release();
      }
    },

    async release(quarantineKey, key) {
      keySegments(key);
      if (!quarantineKey.startsWith(QUARANTINE)) throw new CkptError('INVALID_ARGUMENT', `not a quarantined object: ${quarantineKey}`, { key: quarantineKey });
      let dropped: (string | null)[] = [];
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const held = await client.query(`SELECT 1 FROM ${t.objects} WHERE key = $1 FOR UPDATE`, [quarantineKey]);
        if (held.rows.length > 0) {
          await client.query('SAVEPOINT back');
          try {
            await client.query(`UPDATE ${t.objects} SET key = $2, quarantine_of = NULL WHERE key = $1`, [quarantineKey, key]);
            await client.query(`UPDATE ${t.chunks} SET key = $2 WHERE key = $1`, [quarantineKey, key]);
          } catch (err) {
            if ((err as { code?: string }).code !== '23505') throw err;
            // A copy was written under `key` meanwhile: it stays, the quarantined one goes.
            await client.query('ROLLBACK TO SAVEPOINT back');
            await client.query(`DELETE FROM ${t.objects} WHERE key = $1`, [quarantineKey]);
            dropped = (await client.query<{ s3_name: string | null }>(`DELETE FROM ${t.chunks} WHERE key = $1 RETURNING s3_name`, [quarantineKey])).rows.map((r) => r.s3_name);
          }
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        dropped = [];
        throw wrap(`release ${key}`, err);
      } finally {
        client.release();
      }
      await env.dropS3(dropped);
    },

    async leftovers(): Promise<Leftover[]> {
      try {
        // S3 first: an object put after this listing is not seen; one listed whose row commits
        // later shows as a leftover but is fresh, and removal goes by age.
        const listed = [...(await s3.list(`${loc.prefix}blobs/`)), ...(await s3.list(`${loc.prefix}packs/`))];
        const quarantined = await pool.query<{ key: string; size: string; mtime_us: string; quarantine_of: string }>(
          `SELECT key, size, mtime_us, quarantine_of FROM ${t.objects} WHERE quarantine_of IS NOT NULL`,
        );
        const referenced = new Set(
          (await pool.query<{ s3_name: string }>(`SELECT s3_name FROM ${t.chunks} WHERE s3_name IS NOT NULL`)).rows.map((r) => r.s3_name),
        );
        const out: Leftover[] = quarantined.rows.map((r) => ({
          key: r.key,
          bytes: Number(r.size),
          mtimeMs: Number(r.mtime_us) / 1000,
          quarantineOf: r.quarantine_of,
        }));
        for (const o of listed) {
          // Only names this store gives its objects: another store's under the same prefix (one bucket,
          // another schema) or below it (a prefix inside this one's `blobs/`) are never its orphans.
          if (!referenced.has(o.name) && env.isOwnS3Name(o.name)) out.push({ key: `${S3_ORPHAN}${o.name.slice(loc.prefix.length)}`, bytes: o.size, mtimeMs: o.mtimeMs });
        }
        return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      } catch (err) {
        throw wrap('leftovers', err);
      }
    },

    async removeLeftover(key, cutoffMs) {
      if (key.startsWith(QUARANTINE) && /^[0-9a-f]+$/.test(key.slice(QUARANTINE.length))) {
        let res;
        try {
          res = await pool.query<{ size: string | null; names: (string | null)[] }>(
            `WITH o AS (DELETE FROM ${t.objects} WHERE key = $1 AND mtime_us < $2::bigint RETURNING size),
             c AS (DELETE FROM ${t.chunks} WHERE key = $1 AND EXISTS (SELECT 1 FROM o) RETURNING s3_name)
             SELECT (SELECT size FROM o) AS size, array(SELECT s3_name FROM c) AS names`,
            [key, cutoffUs(cutoffMs)],
          );
        } catch (err) {
          throw wrap(`remove leftover ${key}`, err);
        }
        const row = res.rows[0];
        if (!row || row.size === null) return 0;
        await env.dropS3(row.names);
        return Number(row.size);
      }
      if (key.startsWith(S3_ORPHAN)) {
        const rest = key.slice(S3_ORPHAN.length);
        keySegments(rest);
        if (!env.isExternal(rest)) throw new CkptError('INVALID_ARGUMENT', `not a leftover of this store: ${key}`, { key });
        const name = `${loc.prefix}${rest}`;
        if (!env.isOwnS3Name(name)) throw new CkptError('INVALID_ARGUMENT', `not a leftover of this store: ${key}`, { key });
        const head = await s3.head(name);
        if (!head || head.mtimeMs >= cutoffMs) return 0;
        const used = await pool.query(`SELECT 1 FROM ${t.chunks} WHERE s3_name = $1 LIMIT 1`, [name]).catch((err: unknown) => {
          throw wrap(`remove leftover ${key}`, err);
        });
        if (used.rows.length > 0) return 0;
        await s3.deleteMany([name]);
        return head.size;
      }
      throw new CkptError('INVALID_ARGUMENT', `not a leftover of this store: ${JSON.stringify(key)}`, { key });
    },
  };
}

