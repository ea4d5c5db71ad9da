// The bulk path into the blob store (a first scan of a large workspace), two ways in:
// - add(data): the blob is hashed and deduplicated on the calling thread (against loose and packed
//   blobs and within the writer), then copied into a batch that a worker thread compresses;
// - addMany(buffer, offsets, lengths): a whole batch (a scan's read batch) is handed over as is — its
//   buffer is transferred to a worker that hashes and compresses every input; deduplication happens
//   when the ids come back (a duplicate's compressed payload is dropped).
// Either way the records are streamed into packs by the pack sink. Nothing added is readable until
// commit() has written the pack's index; callers record references only after it.
import { createHash } from 'node:crypto';
import { CkptError } from '../../errors.js';
import type { CodecPreference } from '../../format/blob-codec.js';
import { encodeBlobHeader } from '../../format/blob-header.js';
import { createPackCompressor } from './pack-compressor.js';
import { createPackSink, type PackSinkOptions } from './pack-sink.js';

export interface PackWriterOptions extends PackSinkOptions {
  maxBlobBytes: number;
  /** Freshens `id` where it already lives (loose or packed); true when it exists. */
  freshenExisting(id: string): Promise<boolean>;
  /** Compression threads (default: cores, at most 4; 0 = on the calling thread). */
  threads?: number;
  codec?: CodecPreference;
  /** Inputs are compressed in batches of about this size (default 1 MiB): amortizes thread hand-offs. */
  batchBytes?: number;
  /** add() waits while this much raw data is queued for compression (default 32 MiB). */
  maxQueuedBytes?: number;
}

export interface PackAddResult {
  id: string;
  bytes: number;
  /** False when the blob already existed (it was freshened) or was added to this writer before. */
  created: boolean;
}

export interface PackCommitResult {
  /** The last pack written (undefined when every blob already existed). */
  pack: string | undefined;
  /** Every pack written, in order (more than one when the size limit rotated them). */
  packs: string[];
  /** Blobs written into packs. */
  count: number;
  /** Bytes of pack objects written. */
  bytes: number;
}

export interface PackWriter {
  add(data: Uint8Array): Promise<PackAddResult>;
  /**
   * Adds every input `data[offsets[i] .. offsets[i] + lengths[i])`; results in input order. Takes
   * ownership of `data`'s whole ArrayBuffer (it is transferred to a worker thread): the caller must
   * not use it afterwards. The caller bounds how many calls it keeps in flight.
   */
  addMany(data: Uint8Array, offsets: ArrayLike<number>, lengths: ArrayLike<number>): Promise<PackAddResult[]>;
  /** Makes every added blob durable and readable; the writer is closed afterwards. */
  commit(): Promise<PackCommitResult>;
  /** Drops what is not committed yet (packs rotated out earlier stay); idempotent, a no-op after commit. Call it after a failed commit. */
  abort(): Promise<void>;
}

interface Batch {
  buf: Uint8Array;
  used: number;
  ids: string[];
  lengths: number[];
}

const MAX_BATCH_ITEMS = 1024;

export function createPackWriter(options: PackWriterOptions): PackWriter {
  const batchBytes = options.batchBytes ?? 1024 * 1024;
  const maxQueuedBytes = options.maxQueuedBytes ?? 32 * 1024 * 1024;
  const sink = createPackSink(options);
  const compressor = createPackCompressor({ threads: options.threads, codec: options.codec });
  const seen = new Set<string>();
  const inflight = new Set<Promise<void>>();
  let queued = 0;
  let batch: Batch | undefined;
  let state: 'open' | 'committing' | 'committed' | 'aborted' = 'open';
  let failure: unknown;

  function assertUsable(): void {
    if (state !== 'open') throw new CkptError('INTERNAL', `pack writer already ${state}`);
    if (failure !== undefined) throw failure;
    sink.check();
  }

  function dispatch(): void {
    const b = batch;
    batch = undefined;
    if (!b || b.ids.length === 0) return;
    queued += b.used;
    const job = compressor
      .run(b.buf.subarray(0, b.used), b.lengths)
      .then((results) => {
        // After abort() nothing more may reach the sink (it would start a new pack).
        if (state === 'aborted') return;
        results.forEach((c, i) => sink.place(b.ids[i] as string, encodeBlobHeader(c.codec, b.lengths[i] as number), c.payload));
      })
      .catch((err: unknown) => {
        failure ??= err;
      })
      .finally(() => {
        queued -= b.used;
        inflight.delete(job);
      });
    inflight.add(job);
  }

  return {
    async add(data) {
      assertUsable();
      if (data.length > options.maxBlobBytes) {
        throw new CkptError('BLOB_TOO_LARGE', `blob of ${data.length} bytes is over the ${options.maxBlobBytes}-byte cap`, {
          bytes: data.length,
          max: options.maxBlobBytes,
        });
      }
      const id = createHash('sha256').update(data).digest('hex');
      const bytes = data.length;
      if (seen.has(id)) return { id, bytes, created: false };
      // Marked before the await, so a concurrent add of the same content dedups too.
      seen.add(id);
      try {
        if (await options.freshenExisting(id)) return { id, bytes, created: false };
      } catch (err) {
        seen.delete(id); // not stored: a retry must not be told it exists
        throw err;
      }
      assertUsable();
      if (batch && batch.used + bytes > batch.buf.length) dispatch();
      // Copied now: the caller may reuse its buffer as soon as add() returns.
      batch ??= { buf: new Uint8Array(Math.max(batchBytes, bytes)), used: 0, ids: [], lengths: [] };
      batch.buf.set(data, batch.used);
      batch.used += bytes;
      batch.ids.push(id);
      batch.lengths.push(bytes);
      if (batch.used >= batchBytes || batch.ids.length >= MAX_BATCH_ITEMS) dispatch();
      while (queued > maxQueuedBytes && inflight.size > 0) await Promise.race(inflight);
      return { id, bytes, created: true };
    },

    async addMany(data, offsets, lengths) {
      assertUsable();
      const n = lengths.length;
      for (let k = 0; k < n; k++) {
        const bytes = lengths[k] as number;
        if (bytes > options.maxBlobBytes) {
          throw new CkptError('BLOB_TOO_LARGE', `blob of ${bytes} bytes is over the ${options.maxBlobBytes}-byte cap`, {
            bytes,
            max: options.maxBlobBytes,
          });
        }
      }
      let total = 0;
      for (let k = 0; k < n; k++) total += lengths[k] as number;
      queued += total;
      let results: PackAddResult[] | undefined;
      const job = (async () => {
        const prepared = await compressor.run(data, lengths, { offsets, hash: true, transfer: true });
        if (state === 'aborted') return;
        const out: PackAddResult[] = new Array<PackAddResult>(n);
        const fresh: number[] = [];
        for (let k = 0; k < n; k++) {
          const id = prepared[k]?.id as string;
          const bytes = lengths[k] as number;
          out[k] = { id, bytes, created: false };
          if (seen.has(id)) continue;
          // Marked before the await, so a concurrent add of the same content dedups too.
          seen.add(id);
          fresh.push(k);
        }
        const exists = await Promise.all(
          fresh.map((k) =>
            options.freshenExisting(out[k]!.id).catch((err: unknown) => {
              seen.delete(out[k]!.id); // not stored: a retry must not be told it exists
              throw err;
            }),
          ),
        );
        if ((state as string) === 'aborted') return;
        fresh.forEach((k, j) => {
          if (exists[j]) return;
          const c = prepared[k]!;
          sink.place(out[k]!.id, encodeBlobHeader(c.codec, lengths[k] as number), c.payload);
          out[k]!.created = true;
        });
        results = out;
      })()
        .catch((err: unknown) => {
          failure ??= err;
        })
        .finally(() => {
          queued -= total;
          inflight.delete(job);
        });
      inflight.add(job);
      await job;
      if (failure !== undefined) throw failure;
      if (!results) throw new CkptError('INTERNAL', `pack writer ${state}`);
      return results;
    },

    async commit() {
      assertUsable();
      // No add() may slip in behind the final index.
      state = 'committing';
      dispatch();
      await Promise.all(inflight);
      if (failure !== undefined) throw failure;
      const packs = await sink.finish();
      state = 'committed';
      await compressor.close();
      return {
        pack: packs.at(-1)?.name,
        packs: packs.map((p) => p.name),
        count: packs.reduce((n, p) => n + p.count, 0),
        bytes: packs.reduce((n, p) => n + p.bytes, 0),
      };
    },

    async abort() {
      if (state === 'committed' || state === 'aborted') return;
      state = 'aborted';
      batch = undefined;
      await Promise.all(inflight);
      await sink.abort();
      await compressor.close();
    },
  };
}
