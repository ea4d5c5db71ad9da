// The state the shared driver's parts (shared-backend.ts, shared-gc.ts) share: the query pool, the
// table names, the S3 side, and how keys map to S3 objects.
import type pg from 'pg';
import type { Tables } from './pg-schema.js';
import type { S3Objects } from './s3-objects.js';
import type { SharedStoreLocation } from './store-url.js';

/** Shared state of the driver's parts. */
export interface SharedEnv {
  pool: pg.Pool;
  t: Tables;
  s3: S3Objects;
  loc: SharedStoreLocation;
  isExternal(key: string): boolean;
  /** A new, unique S3 object name for `key`'s bytes: `<prefix><key>.<store id>.<16 hex>`. */
  newS3Name(key: string): string;
  /** Whether an S3 object name has the shape `newS3Name` gives this store's names (others' are never swept). */
  isOwnS3Name(name: string): boolean;
  /** Deletes S3 objects no row points to any more; failures leave leftovers for GC, never errors. */
  dropS3(names: readonly (string | null)[]): Promise<void>;
}

export interface ChunkRow {
  off: string;
  len: string;
  data: Buffer | null;
  s3_name: string | null;
}

