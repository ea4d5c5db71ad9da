// Shared-store tests (issue 17): `CKPT_TEST_STORE` names a running PostgreSQL + S3 pair (set by
// `npm run test:shared`); each test gets its own schema and bucket prefix, dropped afterwards, so
// tests never see each other's objects. Without it the shared suites are skipped.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openStore, type Store } from '../../src/index.js';
import { createS3Objects } from '../../src/storage/shared/s3-objects.js';
import { parseSharedStoreUrl } from '../../src/storage/shared/store-url.js';

export const SHARED_BASE = process.env.CKPT_TEST_STORE || undefined;

/** A URL for a fresh, empty shared store on the test servers. */
export function freshSharedUrl(base = SHARED_BASE): string {
  if (!base) throw new Error('CKPT_TEST_STORE is not set');
  const tag = `t_${randomBytes(6).toString('hex')}`;
  const url = new URL(base);
  const blobs = url.searchParams.get('blobs') ?? 's3://ckpt-test';
  url.searchParams.set('blobs', `${blobs.replace(/\/+$/, '')}/${tag}`);
  url.searchParams.set('schema', tag);
  return url.href;
}

/** Drops a store made by freshSharedUrl: its schema and every S3 object under its prefix. */
export async function dropSharedStore(url: string): Promise<void> {
  const loc = parseSharedStoreUrl(url);
  const client = new pg.Client({ connectionString: loc.pgConnectionString });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${loc.schema}" CASCADE`);
  } finally {
    await client.end();
  }
  const s3 = createS3Objects({ bucket: loc.bucket, endpoint: loc.endpoint, region: loc.region, where: loc.redacted });
  try {
    const names = (await s3.list(loc.prefix)).map((o) => o.name);
    if (names.length > 0) await s3.deleteMany(names);
  } finally {
    s3.close();
  }
}

/** The shared-store counterpart of aging files: moves the mtime of the objects under `folders` back by `ageMs`. */
export async function ageSharedStore(url: string, ageMs: number, folders: readonly string[]): Promise<void> {
  const loc = parseSharedStoreUrl(url);
  const client = new pg.Client({ connectionString: loc.pgConnectionString });
  await client.connect();
  try {
    for (const f of folders) {
      await client.query(
        `UPDATE "${loc.schema}".objects SET mtime_us = (extract(epoch from clock_timestamp()) * 1000000)::bigint - $2::bigint
         WHERE key >= $1 || '/' AND key < $1 || '0'`,
        [f, Math.round(ageMs * 1000)],
      );
    }
  } finally {
    await client.end();
  }
}

/** Opens the store as machine `machine` (CKPT_MACHINE_ID is read when a store is opened). */
export async function openAsMachine(url: string, machine: string): Promise<Store> {
  const saved = process.env.CKPT_MACHINE_ID;
  process.env.CKPT_MACHINE_ID = machine;
  try {
    return await openStore({ dir: url });
  } finally {
    if (saved === undefined) delete process.env.CKPT_MACHINE_ID;
    else process.env.CKPT_MACHINE_ID = saved;
  }
}
