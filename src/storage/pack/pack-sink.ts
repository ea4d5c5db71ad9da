// Streams finished blob records into pack objects: records are buffered into chunks of a few MiB and
// appended (each append is durable), a pack rotates to a new one past its size limit, and a pack's
// index is written atomically only after all of its bytes are appended — the index is the commit
// point. Used by the pack writer (fresh blobs) and by pack rewrites (records copied as they are).
import { randomBytes } from 'node:crypto';
import { decodePackIndex, encodePackIndex, PACK_HEADER, type PackEntry } from '../../format/pack-index.js';
import type { StoreBackend } from '../backend.js';
import { indexKey, packKey, type PackSet } from './pack-set.js';

export interface PackSinkOptions {
  backend: StoreBackend;
  packs: PackSet;
  /** Start a new pack once the current one would pass this size (default 256 MiB). */
  maxPackBytes?: number;
  /** Append to the pack object in chunks of about this size (default 8 MiB): few fsyncs, bounded memory. */
  chunkBytes?: number;
}

export interface CommittedPack {
  name: string;
  count: number;
  bytes: number;
}

export interface PackSink {
  /** Queues one record (header + payload) for `id`; ids must be unique within the sink. */
  place(id: string, header: Uint8Array, payload: Uint8Array): void;
  /** Rejects with the first failed append or index write, if any. */
  check(): void;
  /** Appends what is buffered, writes the last index; every pack placed into is then committed. */
  finish(): Promise<CommittedPack[]>;
  /** Waits for pending I/O and removes the uncommitted pack (index, then pack); packs already rotated out stay committed. */
  abort(): Promise<void>;
}

/** Time-ordered, unique: newer packs sort after older ones (lookups search newest first). */
export function newPackName(): string {
  return `${Date.now().toString(36).padStart(9, '0')}-${randomBytes(6).toString('hex')}`;
}

export function createPackSink(options: PackSinkOptions): PackSink {
  const { backend, packs } = options;
  const maxPackBytes = options.maxPackBytes ?? 256 * 1024 * 1024;
  const chunkBytes = options.chunkBytes ?? 8 * 1024 * 1024;
  const committed: CommittedPack[] = [];
  let name: string | undefined;
  let size = 0;
  let entries: PackEntry[] = [];
  let chunk: Uint8Array[] = [];
  let chunkSize = 0;
  let io: Promise<void> = Promise.resolve();
  let failure: unknown;
  /** Packs started whose index is not written yet: what abort() must remove. */
  const open = new Set<string>();

  /** Chains I/O so appends land in order; the first failure sticks and stops later steps. */
  function enqueue(step: () => Promise<void>): void {
    io = io.then(() => (failure === undefined ? step() : undefined)).catch((err: unknown) => {
      failure ??= err;
    });
  }

  function flush(): void {
    if (!name || chunkSize === 0) return;
    const data = Buffer.concat(chunk, chunkSize);
    const key = packKey(name);
    chunk = [];
    chunkSize = 0;
    enqueue(() => backend.append(key, data));
  }

  function seal(): void {
    if (!name) return;
    flush();
    const sealed = { name, entries, size };
    enqueue(async () => {
      const idx = encodePackIndex(sealed.entries, sealed.size);
      await backend.write(indexKey(sealed.name), idx);
      packs.add(sealed.name, decodePackIndex(idx, sealed.name));
      open.delete(sealed.name);
      committed.push({ name: sealed.name, count: sealed.entries.length, bytes: sealed.size });
    });
    name = undefined;
    entries = [];
  }

  function check(): void {
    if (failure !== undefined) throw failure;
  }

  return {
    place(id, header, payload) {
      check();
      const length = header.length + payload.length;
      if (name && entries.length > 0 && size + length > maxPackBytes) seal();
      if (!name) {
        name = newPackName();
        open.add(name);
        chunk.push(PACK_HEADER);
        chunkSize = size = PACK_HEADER.length;
      }
      entries.push({ id, offset: size, length });
      chunk.push(header, payload);
      chunkSize += length;
      size += length;
      if (chunkSize >= chunkBytes) flush();
    },
    check,
    async finish() {
      seal();
      await io;
      if (failure !== undefined) throw failure;
      return committed;
    },
    async abort() {
      name = undefined;
      chunk = [];
      chunkSize = 0;
      await io;
      // The index first: a failed index write may have put it in place already (its rename done, the
      // folder fsync failed), and an index whose pack is gone is damage (found by the fault suite's
      // gc-repack scenario); a pack without an index is only garbage.
      for (const orphan of [...open]) {
        await backend.remove(indexKey(orphan));
        packs.forget(orphan);
        await backend.remove(packKey(orphan));
      }
      open.clear();
    },
  };
}
