// Inline before-images against the blob store (format/inline-blobs.ts holds the format): the sink a
// tool capture reads content into (small new content is kept for the event, the rest stored as
// before), the read fallback to a log's inline records, and the spill of inline records into the
// blob store. Every event's blob is in the blob store or inline in that same event; the spill only
// adds the store copy (after a capture, and before a restore plan names the blob).
import { sha256Hex } from '../format/sha256.js';
import { isCkptError } from '../errors.js';
import { compress } from '../format/blob-codec.js';
import { encodeBlob } from '../format/blob-header.js';
import { INLINE_MAX_BYTES, type InlineBlobs } from '../format/inline-blobs.js';
import { decodeVerified, type BlobStore } from './blob-store.js';

export interface InlineSink {
  /** Content of new blobs up to INLINE_MAX_BYTES is kept for the event (`created`: new content), other content goes to `blobs.put`. */
  put(data: Uint8Array): Promise<{ id: string; created?: boolean }>;
  /** The `inline` field for the event (undefined when nothing was kept). */
  inline(): InlineBlobs | undefined;
  /** Stores what was kept (or of it, what `only` selects) in the blob store (durably); idempotent. */
  spill(only?: (id: string) => boolean): Promise<void>;
}

export function createInlineSink(blobs: BlobStore): InlineSink {
  const kept = new Map<string, { raw: Uint8Array; b64: string }>();
  return {
    async put(data) {
      if (data.length > INLINE_MAX_BYTES || data.length > blobs.maxBlobBytes) return blobs.put(data);
      const id = sha256Hex(data);
      if (kept.has(id)) return { id };
      // Content the store holds already is referenced (freshened, and checked by put) as before. A
      // pack another process wrote a moment ago may be missed: that only carries a duplicate copy.
      if (await blobs.freshen(id, 'throttled')) return blobs.put(data);
      // The fast setting (brotli q0: about the size of q1 on source text, in half the time): this is
      // the hook's wait; the blob store's copy, which readers use, is compressed as usual.
      const { codec, payload } = compress(data, 'auto', 'fast');
      // A view into a bigger buffer (a scan's read batch) is copied: the spill must not keep the batch alive.
      const raw = data.byteLength === data.buffer.byteLength ? data : data.slice();
      kept.set(id, { raw, b64: encodeBlob(data.length, codec, payload).toString('base64') });
      return { id, created: true };
    },
    inline: () => (kept.size > 0 ? Object.fromEntries([...kept].map(([id, k]) => [id, k.b64])) : undefined),
    async spill(only) {
      for (const [id, { raw }] of kept) if (!only || only(id)) await blobs.put(raw);
    },
  };
}

/** Decodes one inline record, verified against its id (BLOB_CORRUPT otherwise). */
export function decodeInline(id: string, b64: string): Buffer {
  return decodeVerified(id, Buffer.from(b64, 'base64'), 'inline');
}

/**
 * `blobs` reading through to `records` (a log's inline content by id) for a blob the store does not
 * hold: an inline capture whose spill has not happened (yet, or ever: a crash right after it).
 */
export function withInlineBlobs(blobs: BlobStore, records: ReadonlyMap<string, string>): BlobStore {
  if (records.size === 0) return blobs;
  return {
    ...blobs,
    async get(id) {
      try {
        return await blobs.get(id);
      } catch (err) {
        const b64 = records.get(id);
        if (b64 === undefined || !isCkptError(err, 'BLOB_NOT_FOUND')) throw err;
        return decodeInline(id, b64);
      }
    },
    has: async (id) => records.has(id) || blobs.has(id),
  };
}

/** Puts the inline content among `ids` that the store does not hold into it (before a plan names it). */
export async function spillInline(blobs: BlobStore, records: ReadonlyMap<string, string>, ids: Iterable<string | undefined>): Promise<void> {
  for (const id of new Set(ids)) {
    const b64 = id === undefined ? undefined : records.get(id);
    if (b64 === undefined || (await blobs.has(id!))) continue;
    await blobs.put(decodeInline(id!, b64));
  }
}
