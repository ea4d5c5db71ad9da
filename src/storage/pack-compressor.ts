// Off-main-thread compression for bulk blob writes. A first scan compresses ~0.8 GB; brotli's fastest
// quality runs ~270 MB/s on one core, so the pack writer hands batches of inputs to a small pool of
// worker threads while the main thread keeps hashing, deduplicating and appending. Which codec a
// blob gets is decided here on the main thread (blob-codec.ts); workers only run the zlib call.
// Without worker threads (or with `threads: 0`) the same calls run inline.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { CODEC_IDS } from '../format/blob-header.js';
import {
  pays,
  planCompression,
  runCompression,
  type CodecPreference,
  type CompressJob,
  type Compressed,
} from '../format/blob-codec.js';

export interface PackCompressorOptions {
  /** Worker threads (default: cores, at most 4). 0 compresses on the calling thread. */
  threads?: number;
  codec?: CodecPreference;
}

export interface PackCompressor {
  /** Compresses each `lengths[i]`-byte slice of `batch` (consecutive); results in input order. */
  run(batch: Uint8Array, lengths: readonly number[]): Promise<Compressed[]>;
  /** Stops the workers; idempotent. Pending runs still resolve (inline) or reject. */
  close(): Promise<void>;
}

// Plain JS, evaluated as the worker: it must not depend on how the main program was loaded (tsx,
// vitest or compiled dist). Outputs are copied into one fresh buffer that is transferred back.
const WORKER_SOURCE = `
const zlib = require('node:zlib');
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ seq, data, jobs }) => {
  try {
    const outs = jobs.map((j) => zlib[j.method](new Uint8Array(data, j.offset, j.length), j.options));
    const total = outs.reduce((n, o) => n + o.length, 0);
    const out = new Uint8Array(total);
    let at = 0;
    for (const o of outs) { out.set(o, at); at += o.length; }
    parentPort.postMessage({ seq, out: out.buffer, lengths: outs.map((o) => o.length) }, [out.buffer]);
  } catch (err) {
    parentPort.postMessage({ seq, error: String((err && err.message) || err) });
  }
});
`;

/** The first this-many raw bytes of a writer are compressed inline. */
const INLINE_FIRST_BYTES = 4 * 1024 * 1024;

interface WorkerJob extends CompressJob {
  offset: number;
  length: number;
}
interface Reply {
  seq: number;
  out?: ArrayBuffer;
  lengths?: number[];
  error?: string;
}
interface Slot {
  worker: Worker;
  busy: number;
}

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
      const worker = new Worker(WORKER_SOURCE, { eval: true });
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
    // A dead pool is not fatal: the rejected batches are redone inline by run().
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

  function inline(raws: Uint8Array[], jobs: (WorkerJob | undefined)[]): Compressed[] {
    return jobs.map((job, i) => finish(raws[i] as Uint8Array, job, job ? runCompression(job, raws[i] as Uint8Array) : undefined));
  }

  return {
    async run(batch, lengths) {
      let at = 0;
      const raws = lengths.map((length) => batch.subarray(at, (at += length)));
      const jobs = raws.map((raw): WorkerJob | undefined => {
        const job = planCompression(raw, preferred, 'fast');
        return job ? { ...job, offset: raw.byteOffset, length: raw.length } : undefined;
      });
      const todo = jobs.filter((j): j is WorkerJob => j !== undefined);
      // Starting a thread costs tens of ms: small writers (one turn's captures) never start one.
      const small = slots.length === 0 && (seen += batch.length) <= INLINE_FIRST_BYTES;
      const slot = todo.length > 0 && !small ? pick() : undefined;
      if (!slot) return inline(raws, jobs);
      const mySeq = ++seq;
      slot.busy++;
      let reply: Reply;
      try {
        reply = await new Promise<Reply>((resolve, reject) => {
          waiting.set(mySeq, { resolve, reject });
          // Cloned, not transferred: the raw slices stay usable here for the blobs that stay raw.
          slot.worker.postMessage({ seq: mySeq, data: batch.buffer, jobs: todo });
        });
      } catch {
        return inline(raws, jobs);
      }
      const { out, lengths: outLengths } = reply;
      if (reply.error !== undefined || !out || !outLengths) return inline(raws, jobs);
      let o = 0;
      let k = 0;
      return jobs.map((job, i) => {
        const raw = raws[i] as Uint8Array;
        if (!job) return finish(raw, undefined, undefined);
        const len = outLengths[k++] ?? 0;
        const payload = new Uint8Array(out, o, len);
        o += len;
        return finish(raw, job, payload);
      });
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
