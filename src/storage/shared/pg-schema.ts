// The PostgreSQL tables of the shared driver (DESIGN §10 "Shared store"): one row per object in
// `objects` (size, mtime in µs from the database clock, quarantine origin) and its bytes in `chunks`
// keyed by (key, offset) — a whole write is one chunk, every append one more (a session log is one
// row per appended event batch; appends are serialized by the row lock of the objects upsert, so
// offsets, and the seqs inside, never repeat or skip). A chunk holds its bytes inline (`data`) or
// names the immutable S3 object holding them (`s3_name`, for `blobs/` and `packs/`).
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { CkptError } from '../../errors.js';

export const SCHEMA_VERSION = 1;

export interface Tables {
  objects: string;
  chunks: string;
  meta: string;
  /** NOTIFY channel of appends to inline objects (session logs). */
  channel: string;
}

export function tablesOf(schema: string): Tables {
  return { objects: `"${schema}".objects`, chunks: `"${schema}".chunks`, meta: `"${schema}".meta`, channel: `ckpt_${schema}` };
}

/** µs since the epoch by the database clock: one clock for every machine writing the store. */
export const NOW_US = `(extract(epoch from clock_timestamp()) * 1000000)::bigint`;

/**
 * A store's id (16 hex digits, `meta.store_id`, made once): its S3 object names carry it, so a GC sweeps
 * only objects this store wrote — several stores may share a database (one schema each) and a bucket
 * (a round-6 probe: one store's gc deleted the other's blobs as its own orphans).
 */
const STORE_ID = /^[0-9a-f]{16}$/;

/** Creates the schema and tables unless present (serialized by a transaction-level advisory lock); returns the store's id. */
export async function ensureSchema(pool: Pool, schema: string): Promise<string> {
  const t = tablesOf(schema);
  let id = await createTables(pool, schema, t);
  if (id === undefined) {
    await pool.query(`INSERT INTO ${t.meta} (name, value) VALUES ('store_id', $1) ON CONFLICT (name) DO NOTHING`, [randomBytes(8).toString('hex')]);
    id = (await pool.query<{ value: string }>(`SELECT value FROM ${t.meta} WHERE name = 'store_id'`)).rows[0]?.value;
  }
  if (id === undefined || !STORE_ID.test(id)) throw new CkptError('LOG_CORRUPT', `the shared store's id (${t.meta} store_id) is not 16 hex digits`, { id: id ?? null });
  return id;
}

/** Creates the tables unless present; the store's id when it has one already (one query for an existing store). */
async function createTables(pool: Pool, schema: string, t: Tables): Promise<string | undefined> {
  const present = await pool
    .query<{ version: string | null; id: string | null }>(`SELECT (SELECT value FROM ${t.meta} WHERE name = 'schema_version') AS version, (SELECT value FROM ${t.meta} WHERE name = 'store_id') AS id`)
    .catch(
    (err: { code?: string }) => {
      // No schema or no table yet (undefined schema / table): created below.
      if (err.code === '3F000' || err.code === '42P01') return undefined;
      throw err;
    },
  );
  const version = present?.rows[0]?.version;
  if (version != null) {
    if (Number(version) > SCHEMA_VERSION) {
      throw new CkptError('INVALID_ARGUMENT', `the shared store's tables are version ${version}; this ckpt knows version ${SCHEMA_VERSION}: upgrade ckpt`, { version });
    }
    return;
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Two processes opening a new store at once must not race on CREATE … IF NOT EXISTS.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('ckpt-schema'), hashtext($1))`, [schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${t.objects} (
      key text COLLATE "C" PRIMARY KEY,
      size bigint NOT NULL CHECK (size >= 0),
      mtime_us bigint NOT NULL,
      quarantine_of text COLLATE "C")`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${t.chunks} (
      key text COLLATE "C" NOT NULL,
      off bigint NOT NULL CHECK (off >= 0),
      len bigint NOT NULL CHECK (len > 0),
      data bytea,
      s3_name text COLLATE "C",
      PRIMARY KEY (key, off),
      CHECK ((data IS NULL) <> (s3_name IS NULL)))`);
    await client.query(`CREATE INDEX IF NOT EXISTS chunks_s3_name ON ${t.chunks} (s3_name) WHERE s3_name IS NOT NULL`);
    await client.query(`CREATE INDEX IF NOT EXISTS objects_quarantined ON ${t.objects} (quarantine_of) WHERE quarantine_of IS NOT NULL`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${t.meta} (name text PRIMARY KEY, value text NOT NULL)`);
    await client.query(`INSERT INTO ${t.meta} (name, value) VALUES ('schema_version', $1) ON CONFLICT (name) DO NOTHING`, [String(SCHEMA_VERSION)]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
