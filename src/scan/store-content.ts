// Reading and storing the content of the files a scan found new or changed (DESIGN §3): in batches
// read ahead (on the walker's worker thread when there is one and much to read), into the scan's pack
// when many (a first scan: 100,000 files must not become 100,000 store files) or, when few, loose
// (small new content inline in the scan's settle). The scan commits its pack (scan-pack.ts) before it
// records anything that references a blob.
import { toCkptError } from '../errors.js';
import type { PackWriter } from '../storage/pack/pack-writer.js';
import type { ScanPack } from './scan-pack.js';
import { gitBlobId } from '../workspace/git-repo.js';
import { readFilesSync, READ_FAILED, READ_GONE, type ListPool, type ReadBatch } from '../workspace/list-dir.js';
import { markSkipped, type SkippedList } from './known.js';
import { FLAG_STAT_UNKNOWN, HASH_GIT, HASH_SHA256, KIND_GONE, type ScanIndex } from './scan-index.js';

/** From this many files to read on, their content goes into a pack rather than loose blobs. */
export const PACK_THRESHOLD = 64;
/** How content is read and handed to the pack writer: one place to tune the pipeline. */
const PIPELINE = {
  /** Files per read batch, and bytes. */
  batchFiles: 256,
  batchBytes: 2 * 1024 * 1024,
  /** Bytes of changed files' content kept to seed git's delta chains (git-objects.ts seedBlob). */
  gitSeedBytes: 32 * 1024 * 1024,
  /** Batches read ahead of the one being stored. */
  readAhead: 3,
  /** Read batches in flight on the pack writer (hashed and compressed on its worker threads). */
  addWindow: 6,
} as const;

export interface StoreContentInput {
  /** Where many files' content goes (committed by the caller). */
  pack: ScanPack;
  /** The index being built: hashes are set on it, vanished files marked KIND_GONE, failures skipped. */
  next: ScanIndex;
  /** Work items (slots of `next`, previous-index slots, absolute paths) and which of them to read. */
  work: readonly number[];
  workPrev: readonly number[];
  workAbs: readonly string[];
  toRead: readonly number[];
  prev: ScanIndex | undefined;
  pool: ListPool | undefined;
  maxBytes: number;
  skipped: SkippedList;
  onProgress?: (progress: { phase: string; done: number; total: number }) => void;
}

export interface StoreContentResult {
  hashed: number;
  /** Blobs newly written. */
  stored: number;
  dirtyBytes: number;
  /** Git blob ids of files whose previous content is a git reference (slot of `next` -> id). */
  gitSha1: Map<number, string>;
  /**
   * The content of such files whose blob id changed (git blob id -> bytes, up to a byte budget): after
   * a checkout or pull their new blob is often on the delta chain of the previous one, which the scan
   * then copies out of git's packs (git-copy.ts) — the chain stops at content already in memory.
   */
  gitSeeds: Map<string, Buffer>;
}

/**
 * Reads and stores every `toRead` file. A file that vanished or became a symlink since its lstat is
 * dropped (KIND_GONE): the next scan sees its new state.
 */
export async function readAndStore(input: StoreContentInput): Promise<StoreContentResult> {
  const { pack, next, work, workPrev, workAbs, toRead, prev, pool, maxBytes, skipped, onProgress } = input;
  let hashed = 0;
  let stored = 0;
  let dirtyBytes = 0;
  const gitSha1 = new Map<number, string>();
  const gitSeeds = new Map<string, Buffer>();
  let seedBytes = 0;
  const bulk = toRead.length >= PACK_THRESHOLD;
  const writer: PackWriter | undefined = bulk ? pack.writer() : undefined;
  const batches: { from: number; to: number }[] = [];
  for (let from = 0; from < toRead.length; ) {
    let to = from;
    let bytes = 0;
    while (to < toRead.length && to - from < PIPELINE.batchFiles && bytes < PIPELINE.batchBytes) bytes += next.size[work[toRead[to++] as number] as number] as number;
    batches.push({ from, to });
    from = to;
  }
  const readBatchOf = (b: { from: number; to: number }): Promise<ReadBatch> | ReadBatch => {
    const paths: string[] = [];
    const sizes: number[] = [];
    for (let k = b.from; k < b.to; k++) {
      const w = toRead[k] as number;
      paths.push(workAbs[w] as string);
      sizes.push(next.size[work[w] as number] as number);
    }
    return pool && bulk ? pool.read(paths, sizes) : readFilesSync(paths, sizes);
  };
  /** Batches handed to the pack writer whose ids are not back yet (oldest first). */
  const adding: Promise<void>[] = [];
  try {
    const ahead: (Promise<ReadBatch> | ReadBatch)[] = [];
    for (let b = 0; b < batches.length; b++) {
      while (ahead.length < PIPELINE.readAhead && b + ahead.length < batches.length) ahead.push(readBatchOf(batches[b + ahead.length]!));
      const batch = await ahead.shift()!;
      const { from, to } = batches[b]!;
      onProgress?.({ phase: 'storing', done: to, total: toRead.length });
      // The files of this batch to store: slots of `next` and where their bytes are in the batch.
      const slots: number[] = [];
      const offsets: number[] = [];
      const lengths: number[] = [];
      for (let k = 0; k < batch.lengths.length; k++) {
        const w = toRead[from + k] as number;
        const i = work[w] as number;
        const len = batch.lengths[k] as number;
        if (len === READ_GONE) {
          next.kind[i] = KIND_GONE;
          continue;
        }
        if (len === READ_FAILED) {
          markSkipped(next, i, `unreadable: ${batch.errors[k] ?? 'error'}`, skipped);
          continue;
        }
        if (len > maxBytes) {
          markSkipped(next, i, 'too-large', skipped);
          continue;
        }
        const offset = batch.offsets[k] as number;
        hashed++;
        dirtyBytes += len;
        // A file written while it was read (its size moved): the stored stat must not vouch for this content.
        if (len !== next.size[i]) next.flags[i] = FLAG_STAT_UNKNOWN;
        const p = workPrev[w] as number;
        if (p >= 0 && prev!.hashKind[p] === HASH_GIT) {
          const content = batch.data.subarray(offset, offset + len);
          const oid = gitBlobId(content);
          gitSha1.set(i, oid);
          // A copy: the batch's buffer is handed over to the pack writer's thread below.
          if (seedBytes + len <= PIPELINE.gitSeedBytes && oid !== prev!.hashHex(p)) {
            gitSeeds.set(oid, Buffer.from(content));
            seedBytes += len;
          }
        }
        slots.push(i);
        offsets.push(offset);
        lengths.push(len);
      }
      if (slots.length === 0) continue;
      if (writer) {
        // The batch's buffer goes to the writer as is (hashed and compressed on its worker threads).
        const job = writer.addMany(batch.data, offsets, lengths).then((results) => {
          results.forEach((r, k) => {
            next.setHash(slots[k] as number, HASH_SHA256, r.id);
            if (r.created) stored++;
          });
        });
        job.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
        adding.push(job);
        if (adding.length >= PIPELINE.addWindow) await adding.shift();
      } else {
        for (let k = 0; k < slots.length; k++) {
          const offset = offsets[k] as number;
          const r = await pack.loose.put(batch.data.subarray(offset, offset + (lengths[k] as number)));
          next.setHash(slots[k] as number, HASH_SHA256, r.id);
          if (r.created) stored++;
        }
      }
    }
    await Promise.all(adding.splice(0));
  } catch (err) {
    await Promise.allSettled(adding);
    await pack.abort();
    throw toCkptError(err, 'scanning');
  }
  return { hashed, stored, dirtyBytes, gitSha1, gitSeeds };
}
