// Off-main-thread compression (and hashing) for bulk blob writes. A first scan compresses ~0.8 GB;
// brotli's fastest quality runs ~270 MB/s on one core, so the pack writer hands batches of inputs to
// a small pool of worker threads while the main thread only deduplicates and appends. Which codec a
// blob gets is planned here on the main thread (blob-codec.ts); workers run the zlib call, keep the
// result only where it pays, and — for batches whose ids are not known yet — compute each input's
// sha256 (the blob id) from the same bytes. A batch the caller hands over is transferred, not copied.
// Without worker threads (or with `threads: 0`) the same calls run inline.
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { newWorker } from '../worker-thread.js';
import { CODEC_IDS, type CodecId } from '../../format/blob-header.js';
import {
  MAX_KEPT_RATIO,
  pays,
  planCompression,
  runCompression,
  type CodecPreference,
  type CompressJob,
  type Compressed,
} from '../../format/blob-codec.js';

export interface PackCompressorOptions {
  /** Worker threads (default: cores, at most 4). 0 compresses on the calling thread. */
  threads?: number;
  codec?: CodecPreference;
}

export interface PreparedBlob extends Compressed {
  /** sha256 of the raw bytes (hex); set when run() was asked to hash. */
  id?: string;
}

export interface RunOptions {
  /** Where each input starts in the batch (default: consecutive from 0). */
  offsets?: ArrayLike<number>;
  /** Compute each input's sha256 (on the worker). */
  hash?: boolean;
  /**
   * The caller hands the batch's whole ArrayBuffer over: it is transferred to the worker (not copied)
   * and must not be used by the caller afterwards.
   */
  transfer?: boolean;
}

export interface PackCompressor {
  /** Compresses each `lengths[i]`-byte input of `batch`; results in input order. */
  run(batch: Uint8Array, lengths: ArrayLike<number>, options?: RunOptions): Promise<PreparedBlob[]>;
  /** Stops the workers; idempotent. Pending runs still resolve (inline) or reject. */
  close(): Promise<void>;
}

// Plain JS, evaluated as the worker: it must not depend on how the main program was loaded (tsx,
// vitest or compiled dist). Payloads (compressed where it pays, else the raw bytes) are copied into
// one fresh buffer that is transferred back.
const WORKER_SOURCE = `
const zlib = require('node:zlib');
const { createHash } = require('node:crypto');
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ seq, data, base, items, hash, maxRatio }) => {
  try {
    const n = items.length;
    const outs = new Array(n), codecs = new Array(n), lengths = new Array(n), ids = hash ? new Array(n) : undefined;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const it = items[i];
      const raw = new Uint8Array(data, base + it.offset, it.length);
      if (ids) ids[i] = createHash('sha256').update(raw).digest('hex');
      let out = raw, codec = 0;
      if (it.method) {
        const c = zlib[it.method](raw, it.options);
        if (c.length <= raw.length * maxRatio) { out = c; codec = it.codec; }
      }
      outs[i] = out; codecs[i] = codec; lengths[i] = out.length; total += out.length;
    }
    const buf = new Uint8Array(total);
    let at = 0;
    for (const o of outs) { buf.set(o, at); at += o.length; }
    parentPort.postMessage({ seq, out: buf.buffer, lengths, codecs, ids }, [buf.buffer]);
  } catch (err) {
    // The input goes back so the caller can redo the batch inline.
    parentPort.postMessage({ seq, error: String((err && err.message) || err), data }, [data]);
  }
});
`;

/** The first this-many raw bytes of a writer are compressed inline. */
const INLINE_FIRST_BYTES = 4 * 1024 * 1024;

interface WorkerItem {
  offset: number;
  length: number;
  method?: CompressJob['method'];
  options?: CompressJob['options'];
  codec?: CodecId;
}
interface Reply {
  seq: number;
  out?: ArrayBuffer;
  lengths?: number[];
  codecs?: CodecId[];
  ids?: string[];
  error?: string;
  /** The batch's buffer, handed back with an error. */
  data?: ArrayBuffer;
}
interface Slot {
  worker: Worker;
  busy: number;
}

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

export function createPackCompressor(options: PackCompressorOptions = {}): PackCompressor {
  const threads = Math.max(0, Math.floor(options.threads ?? Math.min(4, availableParallelism())));
  const preferred = options.codec ?? 'auto';
  const slots: Slot[] = [];
  const waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  let seq = 0;
  /** Raw bytes handed to run() so far. */
  let seen = 0;
  let broken = threads === 0;

  function spawn(): Slot | undefined {
    try {
      const worker = newWorker(WORKER_SOURCE);
      // Never keep the process alive for an abandoned writer.
      worker.unref();
      const slot = { worker, busy: 0 };
      worker.on('message', (reply: Reply) => {
        slot.busy--;
        const w = waiting.get(reply.seq);
        waiting.delete(reply.seq);
        w?.resolve(reply);
      });
      worker.on('error', (err) => failAll(err));
      worker.on('exit', () => failAll(new Error('compression worker exited')));
      return slot;
    } catch {
      broken = true;
      return undefined;
    }
  }

  function failAll(err: Error): void {
    // A dead pool is not fatal: the rejected batches are redone inline by run() (when the batch was not transferred).
    broken = true;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  }

  function pick(): Slot | undefined {
    if (broken) return undefined;
    const idle = slots.find((s) => s.busy === 0);
    if (idle) return idle;
    if (slots.length < threads) {
      const slot = spawn();
      if (slot) slots.push(slot);
      return slot;
    }
    return slots.reduce((a, b) => (b.busy < a.busy ? b : a));
  }

  function inline(raws: Uint8Array[], jobs: (CompressJob | undefined)[], hash: boolean): PreparedBlob[] {
    return jobs.map((job, i) => {
      const raw = raws[i] as Uint8Array;
      const r = finish(raw, job, job ? runCompression(job, raw) : undefined);
      return hash ? { ...r, id: sha256(raw) } : r;
    });
  }

  return {
    async run(batch, lengths, runOptions = {}) {
      const hash = runOptions.hash === true;
      const n = lengths.length;
      const raws: Uint8Array[] = new Array<Uint8Array>(n);
      let total = 0;
      for (let i = 0, at = 0; i < n; i++) {
        const start = runOptions.offsets ? (runOptions.offsets[i] as number) : at;
        const length = lengths[i] as number;
        raws[i] = batch.subarray(start, start + length);
        at = start + length;
        total += length;
      }
      const jobs = raws.map((raw) => planCompression(raw, preferred, 'fast'));
      // Starting a thread costs tens of ms: small writers (one turn's captures) never start one.
      const small = slots.length === 0 && (seen += total) <= INLINE_FIRST_BYTES;
      const slot = (hash || jobs.some((j) => j !== undefined)) && !small ? pick() : undefined;
      if (!slot) return inline(raws, jobs, hash);
      const items = raws.map((raw, i): WorkerItem => {
        const job = jobs[i];
        const item: WorkerItem = { offset: raw.byteOffset - batch.byteOffset, length: raw.length };
        if (job) {
          item.method = job.method;
          item.options = job.options;
          item.codec = CODEC_IDS[job.codec];
        }
        return item;
      });
      const transfer = runOptions.transfer === true;
      const base = batch.byteOffset;
      const mySeq = ++seq;
      slot.busy++;
      let reply: Reply;
      try {
        reply = await new Promise<Reply>((resolve, reject) => {
          waiting.set(mySeq, { resolve, reject });
          const message = { seq: mySeq, data: batch.buffer, base, items, hash, maxRatio: MAX_KEPT_RATIO };
          slot.worker.postMessage(message, transfer ? [batch.buffer as ArrayBuffer] : []);
        });
      } catch (err) {
        // A transferred batch is gone from this thread: nothing to redo inline with.
        if (transfer && batch.buffer.byteLength === 0) throw err;
        return inline(raws, jobs, hash);
      }
      const { out, lengths: outLengths, codecs, ids } = reply;
      if (reply.error !== undefined || !out || !outLengths || !codecs || (hash && !ids)) {
        if (!transfer || batch.buffer.byteLength > 0) return inline(raws, jobs, hash);
        if (!reply.data) throw new Error(`compression failed: ${reply.error ?? 'bad reply'}`);
        const back = new Uint8Array(reply.data, base);
        return inline(items.map((it) => back.subarray(it.offset, it.offset + it.length)), jobs, hash);
      }
      const results: PreparedBlob[] = new Array<PreparedBlob>(n);
      for (let i = 0, o = 0; i < n; i++) {
        const len = outLengths[i] as number;
        results[i] = { codec: codecs[i] as CodecId, payload: new Uint8Array(out, o, len), ...(ids ? { id: ids[i] as string } : {}) };
        o += len;
      }
      return results;
    },
    async close() {
      broken = true;
      await Promise.all(slots.splice(0).map((s) => s.worker.terminate()));
    },
  };
}

/** Keeps a compressed payload only where it pays; otherwise the raw bytes. */
function finish(raw: Uint8Array, job: CompressJob | undefined, payload: Uint8Array | undefined): Compressed {
  if (job && payload && pays(raw.length, payload.length)) return { codec: CODEC_IDS[job.codec], payload };
  return { codec: CODEC_IDS.raw, payload: raw };
}
