// The one pack a scan writes (DESIGN §10 "Scans"): the content of the files it read and the git blobs
// it copied go through the same pack writer, made on first use and committed once — one pack, one set
// of fsyncs per scan — before anything that references those blobs is recorded (a capture, the index).
// A scan that reads few files (a watched scan after a shell tool) stores their content loose instead,
// small new content inline in its settle (the log's one fsync; the store copy follows: scan-record.ts).
import { createHash } from 'node:crypto';
import type { WorkspaceContext } from '../context.js';
import { CkptError } from '../errors.js';
import type { PackWriter } from '../storage/pack/pack-writer.js';
import { createInlineSink, type InlineSink } from '../storage/inline-store.js';

export interface ScanPack {
  /** The writer, made on the first call. */
  writer(): PackWriter;
  /** Makes every blob added so far durable and readable; a no-op when none was. The writer is closed after it. */
  commit(): Promise<void>;
  /** Drops what is not committed; idempotent, and a no-op after commit. */
  abort(): Promise<void>;
  /** Where the content of a scan that reads few files goes: kept for the settle when small and new, else stored. */
  loose: InlineSink;
}

export function createScanPack(ctx: WorkspaceContext): ScanPack {
  let made: PackWriter | undefined;
  let done = false;
  return {
    writer() {
      if (done) throw new CkptError('INTERNAL', 'the scan pack is already committed');
      return (made ??= ctx.blobs.createPackWriter());
    },
    async commit() {
      if (done) return;
      done = true;
      await made?.commit();
    },
    async abort() {
      done = true;
      await made?.abort();
    },
    loose: createInlineSink(ctx.blobs),
  };
}

/**
 * A pack that stores nothing (a read's look, DESIGN §10 "diff looks too"): the content read is only
 * hashed, so the look's after-images name it, and nothing reaches the store (a read-only store works).
 */
export function createHashOnlyPack(): ScanPack {
  const hash = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
  const writer: PackWriter = {
    add: async (data) => ({ id: hash(data), bytes: data.length, created: false }),
    addMany: async (data, offsets, lengths) =>
      Array.from({ length: lengths.length }, (_, k) => {
        const bytes = lengths[k] as number;
        return { id: hash(data.subarray(offsets[k] as number, (offsets[k] as number) + bytes)), bytes, created: false };
      }),
    commit: async () => ({ pack: undefined, packs: [], count: 0, bytes: 0 }),
    abort: async () => {},
  };
  return {
    writer: () => writer,
    commit: async () => {},
    abort: async () => {},
    loose: { put: async (data) => ({ id: hash(data) }), inline: () => undefined, spill: async () => {} },
  };
}
