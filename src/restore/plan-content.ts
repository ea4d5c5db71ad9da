// What a restore writes, as bytes (DESIGN §4 step 2): before the point of no return every blob the
// plan writes is read and verified, so a missing or corrupt blob fails the restore closed with
// nothing changed. Up to CONTENT_BUDGET bytes are kept for placing; beyond that, content is only
// verified here and read again when it is placed. Recovery reads each blob when it places it.
// A dry run only looks whether each blob is there (missingPlanContent), so it can say the real run
// would fail BLOB_NOT_FOUND without reading every byte.
import { CkptError, toCkptError } from '../errors.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { PlannedEntry } from './plan-restore.js';
import { mapLimit } from './present.js';

/** Bytes of content kept in memory between the read and placing (the rest is read twice). */
export const CONTENT_BUDGET = 64 * 1024 * 1024;
const READ_PARALLELISM = 16;

/** The bytes of write entry `index` (a rejection skips that entry when placing). */
export type ContentSource = (index: number) => Buffer | Promise<Buffer>;

function blobOf(entry: PlannedEntry): string {
  if (typeof entry.blob !== 'string') throw new CkptError('INTERNAL', `plan entry ${entry.path} has no blob`);
  return entry.blob;
}

/**
 * The paths of planned writes whose blob is neither in the store nor inline in a log line (`inline`:
 * what the real run spills first): the real run would fail BLOB_NOT_FOUND on them. Presence only —
 * a blob that is there but corrupt is found by the real run's read (BLOB_CORRUPT, nothing changed).
 */
export async function missingPlanContent(blobs: BlobStore, entries: readonly PlannedEntry[], inline: ReadonlyMap<string, string>): Promise<string[]> {
  const writes = entries.filter((e) => e.action === 'write');
  const missing = new Set<number>();
  await mapLimit(writes.map((_, i) => i), READ_PARALLELISM, async (i) => {
    const id = blobOf(writes[i]!);
    if (!inline.has(id) && !(await blobs.has(id))) missing.add(i);
  });
  return writes.filter((_, i) => missing.has(i)).map((e) => e.path);
}

/** Content read from the store as it is placed (recovery: the plan comes from the journal). */
export function storeContent(blobs: BlobStore, entries: readonly PlannedEntry[]): ContentSource {
  return (i) => blobs.get(blobOf(entries[i]!));
}

/**
 * Reads and verifies every blob of the plan (16 at a time). BLOB_CORRUPT / BLOB_NOT_FOUND and read
 * failures propagate: the caller aborts the restore before its point of no return.
 */
export async function readPlanContent(
  blobs: BlobStore,
  entries: readonly PlannedEntry[],
  onProgress?: (progress: { phase: string; done: number; total: number }) => void,
): Promise<ContentSource> {
  const writes: number[] = [];
  entries.forEach((e, i) => {
    if (e.action === 'write') writes.push(i);
    else if (e.action === 'symlink' && typeof e.target !== 'string') throw new CkptError('INTERNAL', `plan entry ${e.path} has no link target`);
  });
  const kept = new Map<number, Buffer>();
  let keptBytes = 0;
  let done = 0;
  // The packs read are kept open for the whole read (closed once every read has finished).
  const reads = blobs.openReads();
  try {
    await mapLimit(writes, READ_PARALLELISM, async (i) => {
      const data = await blobs.get(blobOf(entries[i]!), reads);
      if (keptBytes + data.length <= CONTENT_BUDGET) {
        kept.set(i, data);
        keptBytes += data.length;
      }
      onProgress?.({ phase: 'reading', done: ++done, total: writes.length });
    });
  } catch (err) {
    throw toCkptError(err, "reading the restore's content");
  } finally {
    reads.close();
  }
  const fromStore = storeContent(blobs, entries);
  // Each write entry is placed once: its bytes are let go as soon as they are handed over.
  return (i) => {
    const data = kept.get(i);
    if (!data) return fromStore(i);
    kept.delete(i);
    return data;
  };
}
