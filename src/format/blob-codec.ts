// Blob payload compression, pure (no I/O): which codec a blob gets ("only where it pays"), the
// zlib call that produces it (as plain data, so a worker thread can run the same call), and decoding
// with a bound on the output so a corrupt or hostile record cannot balloon memory.
//
// Measured on this project's machine (Node 20, 35-42 MB of .ts/.js/.json/.md from node_modules,
// one file per call, single thread): brotli q0 ~270 MB/s ratio 0.30, q1 ~205 MB/s 0.29, q2 ~125 MB/s
// 0.27, q3 ~100 MB/s 0.26, q5 ~50 MB/s 0.23; deflate level 1 ~120 MB/s 0.29 (slower and worse than
// brotli q0, so `auto` never picks it); sha256 ~1.2 GB/s. Hence brotli q1 for single puts and q0 for
// bulk (pack) writes, which also run on worker threads (see storage/pack/pack-compressor.ts).
import * as zlib from 'node:zlib';
import { CkptError } from '../errors.js';
import { CODEC_IDS, type CodecId, type CodecName } from './blob-header.js';

/** Inputs below this are stored raw: the header and codec framing would eat any saving. */
export const COMPRESS_MIN_BYTES = 64;
/** A compressed payload is kept only when it is at most this fraction of the raw size (saves >= 10%). */
export const MAX_KEPT_RATIO = 0.9;
/** Inputs at least this large are first probed on a prefix, so media and archives skip the full pass. */
const PROBE_MIN_BYTES = 256 * 1024;
const PROBE_BYTES = 32 * 1024;

export type CodecPreference = 'auto' | CodecName;
/** `fast` for bulk writes (a first scan), `default` for single puts where latency does not matter. */
export type CompressEffort = 'fast' | 'default';

/** One zlib call as data: `zlib[method](raw, options)`. Structured-cloneable, so a worker can run it. */
export interface CompressJob {
  codec: Exclude<CodecName, 'raw'>;
  method: 'brotliCompressSync' | 'zstdCompressSync' | 'deflateRawSync';
  options: Record<string, unknown>;
}

export interface Compressed {
  codec: CodecId;
  /** The bytes to store after the header (`raw` itself when codec is raw). */
  payload: Uint8Array;
}

type ZlibFn = (buf: Uint8Array, options?: object) => Buffer;
const zlibFns = zlib as unknown as Record<string, ZlibFn | undefined>;
const zlibConstants = zlib.constants as unknown as Record<string, number | undefined>;

/** zstd exists in node:zlib from Node 22.15 on; it is detected, never required. */
export function hasZstd(): boolean {
  return typeof zlibFns.zstdCompressSync === 'function' && typeof zlibFns.zstdDecompressSync === 'function';
}

export function availableCodecs(): CodecName[] {
  return hasZstd() ? ['raw', 'brotli', 'zstd', 'deflate'] : ['raw', 'brotli', 'deflate'];
}

/**
 * The compression call for `raw`, or undefined when it should be stored raw (tiny, or a probe shows
 * it does not compress). `auto` means brotli even where zstd exists: one store is shared by every
 * ckpt process, and a zstd blob would be unreadable to a hook running on an older Node.
 */
export function planCompression(
  raw: Uint8Array,
  preferred: CodecPreference = 'auto',
  effort: CompressEffort = 'default',
): CompressJob | undefined {
  if (preferred === 'raw' || raw.length < COMPRESS_MIN_BYTES) return undefined;
  const job = jobFor(preferred === 'zstd' && !hasZstd() ? 'brotli' : preferred === 'auto' ? 'brotli' : preferred, effort, raw.length);
  if (raw.length >= PROBE_MIN_BYTES) {
    const probe = raw.subarray(0, PROBE_BYTES);
    if (!pays(probe.length, runCompression(job, probe).length)) return undefined;
  }
  return job;
}

/** Brotli's window: large enough for the whole input (so no loss), no larger (less to allocate: ~30% faster on a 16 KiB file). */
function brotliWindowBits(rawLength: number): number {
  return Math.min(22, Math.max(10, Math.ceil(Math.log2(rawLength + 16))));
}

function jobFor(codec: Exclude<CodecName, 'raw'>, effort: CompressEffort, rawLength: number): CompressJob {
  const fast = effort === 'fast';
  switch (codec) {
    case 'zstd':
      return {
        codec,
        method: 'zstdCompressSync',
        options: { params: { [zlibConstants.ZSTD_c_compressionLevel ?? 100]: fast ? 1 : 3 } },
      };
    case 'deflate':
      return { codec, method: 'deflateRawSync', options: { level: fast ? 1 : 6 } };
    case 'brotli':
      return {
        codec,
        method: 'brotliCompressSync',
        options: {
          params: {
            [zlib.constants.BROTLI_PARAM_QUALITY]: fast ? 0 : 1,
            [zlib.constants.BROTLI_PARAM_LGWIN]: brotliWindowBits(rawLength),
            [zlib.constants.BROTLI_PARAM_SIZE_HINT]: rawLength,
          },
        },
      };
  }
}

export function runCompression(job: CompressJob, raw: Uint8Array): Buffer {
  const fn = zlibFns[job.method];
  if (!fn) throw new CkptError('IO', `${job.codec} is not supported by this Node (${process.version})`);
  return fn(raw, job.options);
}

/** Whether a payload of `payloadLength` is worth storing instead of `rawLength` raw bytes. */
export function pays(rawLength: number, payloadLength: number): boolean {
  return payloadLength <= rawLength * MAX_KEPT_RATIO;
}

/** Picks the codec where it pays and compresses; falls back to raw when compression does not pay. */
export function compress(raw: Uint8Array, preferred: CodecPreference = 'auto', effort: CompressEffort = 'default'): Compressed {
  const job = planCompression(raw, preferred, effort);
  if (!job) return { codec: CODEC_IDS.raw, payload: raw };
  const payload = runCompression(job, raw);
  return pays(raw.length, payload.length) ? { codec: CODEC_IDS[job.codec], payload } : { codec: CODEC_IDS.raw, payload: raw };
}

/**
 * Decodes a payload to exactly `rawLength` bytes. Any decoder failure or length mismatch is
 * BLOB_CORRUPT; a zstd blob on a Node without zstd is IO (the blob is fine, this runtime is not).
 */
export function decompress(codec: CodecId, payload: Uint8Array, rawLength: number): Buffer {
  const corrupt = (why: string, cause?: unknown): CkptError =>
    new CkptError('BLOB_CORRUPT', `blob payload does not decode: ${why}`, { why }, { cause });
  if (codec === CODEC_IDS.raw) {
    if (payload.length !== rawLength) throw corrupt('raw length mismatch');
    return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  }
  const method = { 1: 'brotliDecompressSync', 2: 'zstdDecompressSync', 3: 'inflateRawSync' }[codec];
  if (!method) throw corrupt(`unknown codec ${String(codec)}`);
  const fn = zlibFns[method];
  if (!fn) {
    throw new CkptError('IO', `zstd not supported by this Node (${process.version}); use Node >= 22.15 to read this blob`, {
      codec: 'zstd',
      retryable: false,
    });
  }
  if (rawLength > MAX_DECODED_BYTES) throw corrupt('raw length too large');
  let out: Buffer;
  try {
    // The bound turns a lying header (or a decompression bomb) into an error instead of an allocation.
    // One output chunk of the expected size (+ slack, so the end of the stream is seen in it): zlib's
    // default 16 KiB chunks cost a loop and a concatenation per blob (brotli decoding ~2× slower).
    // Capped, so a lying header cannot make it allocate more up front than a blob may hold.
    out = fn(payload, { maxOutputLength: Math.max(1, rawLength), chunkSize: Math.min(rawLength, ONE_CHUNK_MAX) + 64 });
  } catch (err) {
    throw corrupt((err as Error).message, err);
  }
  if (out.length !== rawLength) throw corrupt('decoded length mismatch');
  return out;
}

/** Decoded sizes up to this are produced in one zlib output chunk. */
const ONE_CHUNK_MAX = 16 * 1024 * 1024;

/** Far above any blob cap, below what a Buffer can hold. */
const MAX_DECODED_BYTES = 1024 * 1024 * 1024;
