// The PostgreSQL tables of the shared driver (DESIGN §10 "Shared store"): one row per object in
// `objects` (size, mtime in µs from the database clock, quarantine origin) and its bytes in `chunks`
// keyed by (key, offset) — a whole write is one chunk, every append one more (a session log is one
// row per appended event batch; appends are serialized by the row lock of the objects upsert, so
// offsets, and the seqs inside, never repeat or skip). A chunk holds its bytes inline (`data`) or
// names the immutable S3 object holding them (`s3_name`, for `blobs/` and `packs/`).
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

/** Creates the schema and tables unless present (serialized by a transaction-level advisory lock). */
export async function ensureSchema(pool: Pool, schema: string): Promise<void> {
  const t = tablesOf(schema);
  const present = await pool.query<{ version: string | null }>(`SELECT (SELECT value FROM ${t.meta} WHERE name = 'schema_version') AS version`).catch(
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
