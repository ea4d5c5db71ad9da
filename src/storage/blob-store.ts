// The content-addressed blob store (DESIGN §3): one namespace over loose blob files
// (`blobs/<aa>/<62 hex>`) and packs (`packs/<name>.pack` + `.idx`). Owns put/get with fail-closed
// verification, freshening of existing blobs (so a concurrent GC's age gate protects them), the bulk
// pack writer, and the listing / removal / pack rewrite / verification primitives GC and verify use.
import { sha256Hex } from '../format/sha256.js';
import { CkptError, isCkptError } from '../errors.js';
import { compress, decompress, type CodecPreference } from '../format/blob-codec.js';
import { decodeBlobHeader, encodeBlob } from '../format/blob-header.js';
import type { RangeReader, StoreBackend } from './backend.js';
import { rewritePack, type RewritePackResult } from './pack/pack-rewrite.js';
import { createPackSet, indexKey, PACK_NAME, PACKS_DIR, packKey, type Refresh } from './pack/pack-set.js';
import { createPackWriter, type PackWriter } from './pack/pack-writer.js';

export interface BlobStoreOptions {
  backend: StoreBackend;
  /** Largest blob accepted, in raw bytes (default 16 MiB). */
  maxBlobBytes?: number;
  /** Codec for new blobs (default `auto`: brotli where it pays). */
  codec?: CodecPreference;
  /** Pack size limit before a writer rotates to a new pack (default 256 MiB). */
  maxPackBytes?: number;
  /** Compression threads of pack writers (default: cores, at most 4; 0 = inline). */
  threads?: number;
}

export interface PutResult {
  id: string;
  /** Raw size. */
  bytes: number;
  /** Size on disk (record with header; for an existing blob, its existing record). */
  stored: number;
  created: boolean;
}

export type BlobWhere = 'loose' | 'pack';

export interface BlobInfo {
  where: BlobWhere;
  stored: number;
  /** For a packed blob, its pack's mtime. */
  mtimeMs: number;
  pack?: string;
}

export interface ListedBlob extends BlobInfo {
  id: string;
}

export interface BlobCheck {
  id: string;
  /** True when at least one copy exists and every copy decodes to bytes with the right hash. */
  ok: boolean;
  copies: { where: BlobWhere; pack?: string; ok: boolean; problem?: { code: string; message: string } }[];
}

/** Packs held open for reads (BlobStore.openReads); only the store that made it reads through it. */
export interface PackReads {
  close(): void;
}

export interface BlobStore {
  readonly maxBlobBytes: number;
  /** Stores `data` unless it exists; an existing blob is freshened instead. Idempotent. */
  put(data: Uint8Array): Promise<PutResult>;
  /**
   * The raw bytes, verified against the id. BLOB_NOT_FOUND when missing, BLOB_CORRUPT on any mismatch.
   * With `reads` (from `openReads`), a packed blob is read through the pack kept open there.
   */
  get(id: string, reads?: PackReads): Promise<Buffer>;
  /**
   * Packs kept open across many `get`s (a restore reads hundreds of blobs from a few packs: without
   * it, each read opens, fstats and closes its pack). Closed by the caller once no `get` is in flight.
   */
  openReads(): PackReads;
  has(id: string): Promise<boolean>;
  /**
   * Updates the mtime where the blob lives; false when missing. `throttled`: a pack written by another
   * process in the last seconds may be missed (for callers to whom a "no" only costs a duplicate copy).
   */
  freshen(id: string, refresh?: 'miss' | 'throttled'): Promise<boolean>;
  info(id: string): Promise<BlobInfo | undefined>;
  /** A bulk writer into packs; blobs become readable at its commit(). Loose puts keep working meanwhile. */
  createPackWriter(options?: { threads?: number; maxPackBytes?: number; codec?: CodecPreference }): PackWriter;
  /** Every blob copy: loose ones, then packed ones (a blob may be listed under both). */
  listBlobs(): AsyncIterable<ListedBlob>;
  removeLoose(id: string): Promise<void>;
  /** Rewrites a pack keeping only the blobs `keep` accepts; the old pack is removed (index first). */
  /** `expectMtimeMs`: the pack's mtime when GC planned; if a put freshened it since, the pack is left as it is. */
  rewritePack(name: string, keep: (id: string) => boolean, expectMtimeMs?: number): Promise<RewritePackResult>;
  /** Re-reads and re-hashes every copy of a blob. */
  verifyBlob(id: string): Promise<BlobCheck>;
}

const BLOB_ID = /^[0-9a-f]{64}$/;
const LOOSE_KEY = /^blobs\/([0-9a-f]{2})\/([0-9a-f]{62})$/;
/** A pack touched this recently is fresh enough for any GC grace period (minutes); saves syscalls. */
const PACK_TOUCH_INTERVAL_MS = 10_000;
/** Packs one PackReads keeps open at most (the rest are read as without it). */
const OPEN_PACKS_MAX = 32;

export const looseKey = (id: string): string => `blobs/${id.slice(0, 2)}/${id.slice(2)}`;

export function assertBlobId(id: string): void {
  if (typeof id !== 'string' || !BLOB_ID.test(id)) {
    throw new CkptError('INVALID_ARGUMENT', `invalid blob id ${JSON.stringify(id)} (64 lowercase hex)`, { blob: id });
  }
}

const sha256 = sha256Hex;

/** Decodes a record and checks its hash; every failure is BLOB_CORRUPT naming the blob and copy (`inline`: carried in an event). */
export function decodeVerified(id: string, record: Buffer, where: BlobWhere | 'inline', pack?: string): Buffer {
  const at = pack ? `pack ${pack}` : where;
  let raw: Buffer;
  try {
    const header = decodeBlobHeader(record);
    raw = decompress(header.codec, record.subarray(header.headerLength), header.rawLength);
  } catch (err) {
    if (!isCkptError(err, 'BLOB_CORRUPT')) throw err;
    throw new CkptError('BLOB_CORRUPT', `blob ${id} (${at}) is corrupt: ${err.message}`, { blob: id, where, pack }, { cause: err });
  }
  if (sha256(raw) !== id) {
    throw new CkptError('BLOB_CORRUPT', `blob ${id} (${at}) does not match its hash`, { blob: id, where, pack });
  }
  return raw;
}

export function createBlobStore(options: BlobStoreOptions): BlobStore {
  const { backend } = options;
  const maxBlobBytes = options.maxBlobBytes ?? 16 * 1024 * 1024;
  const packs = createPackSet({ backend });
  const packTouched = new Map<string, number>();

  /** Freshens a pack; false when it is gone (rewritten or collected by another process). */
  async function touchPack(name: string): Promise<boolean> {
    const last = packTouched.get(name);
    if (last !== undefined && Date.now() - last < PACK_TOUCH_INTERVAL_MS) return true;
    await backend.touch(packKey(name));
    await backend.touch(indexKey(name));
    // Checked after the touch: a pack still there now carries a fresh mtime that GC will respect.
    if (!(await backend.stat(packKey(name)))) return false;
    packTouched.set(name, Date.now());
    return true;
  }

  /**
   * Freshens the blob where it lives; its stored size when it exists. `mayBeLoose` lets a bulk
   * writer skip the per-blob stat using a listing: a stale "no" only costs a duplicate copy.
   */
  async function freshenExisting(id: string, refresh: Refresh, mayBeLoose?: (id: string) => Promise<boolean>): Promise<number | undefined> {
    if (!mayBeLoose || (await mayBeLoose(id))) {
      // Touch first, then confirm: a file that survives the stat has an mtime GC will respect.
      if (await backend.touch(looseKey(id))) {
        const st = await backend.stat(looseKey(id));
        if (st) return st.size;
      }
    }
    for (let attempt = 0; attempt < 2; attempt++) {
      const loc = await packs.locate(id, attempt === 0 ? refresh : 'never');
      if (!loc) return undefined;
      if (await touchPack(loc.pack)) return loc.length;
      await packs.refresh();
    }
    return undefined;
  }

  async function info(id: string): Promise<BlobInfo | undefined> {
    assertBlobId(id);
    const st = await backend.stat(looseKey(id));
    if (st) return { where: 'loose', stored: st.size, mtimeMs: st.mtimeMs };
    const loc = await packs.locate(id, 'miss');
    const pst = loc && (await backend.stat(packKey(loc.pack)));
    return loc && pst ? { where: 'pack', stored: loc.length, mtimeMs: pst.mtimeMs, pack: loc.pack } : undefined;
  }

  /** Packs with a missing index (a `.pack` alone) or an index that could not be decoded. */
  async function unindexedPacks(): Promise<string[]> {
    const names = new Set(await backend.children(PACKS_DIR));
    const out = new Set(packs.broken().keys());
    for (const n of names) {
      const pack = n.slice(0, -'.pack'.length);
      if (n.endsWith('.pack') && PACK_NAME.test(pack) && !names.has(`${pack}.idx`)) out.add(pack);
    }
    return [...out].sort();
  }

  /** The packs each PackReads of this store holds open (null: could not be, read as without it). */
  const openPacks = new WeakMap<PackReads, { open: Map<string, RangeReader | null>; retired: RangeReader[] }>();

  function openReads(): PackReads {
    const held = { open: new Map<string, RangeReader | null>(), retired: [] as RangeReader[] };
    const reads: PackReads = {
      close() {
        // Nothing is read through it any more (a later get reads as without it).
        openPacks.delete(reads);
        for (const r of [...held.open.values(), ...held.retired]) r?.close();
      },
    };
    openPacks.set(reads, held);
    return reads;
  }

  /**
   * A packed record read through a pack `reads` holds open, verified; undefined for anything else
   * (not held, cut short, corrupt, a read failure): the caller then reads it as without `reads`, so
   * what is reported — a vanished or rewritten pack, BLOB_CORRUPT — is exactly what it was before.
   */
  async function readThroughHeld(reads: PackReads | undefined, id: string, loc: { pack: string; offset: number; length: number }): Promise<Buffer | undefined> {
    const held = reads && openPacks.get(reads);
    if (!held || !backend.openRange) return undefined;
    let reader = held.open.get(loc.pack);
    if (reader === undefined) {
      if (held.open.size >= OPEN_PACKS_MAX) return undefined;
      try {
        reader = backend.openRange(packKey(loc.pack)) ?? null;
      } catch {
        reader = null;
      }
      held.open.set(loc.pack, reader);
    }
    if (!reader) return undefined;
    try {
      const rec = await reader.read(loc.offset, loc.length);
      if (rec.length === loc.length) return decodeVerified(id, rec, 'pack', loc.pack);
    } catch {
      // read again below, as without the held pack
    }
    // Not closed here: other reads may be in flight on it. Closed with the rest.
    held.open.set(loc.pack, null);
    held.retired.push(reader);
    return undefined;
  }

  /** The raw bytes, verified; BLOB_NOT_FOUND / BLOB_CORRUPT (see BlobStore.get). */
  async function get(id: string, reads?: PackReads): Promise<Buffer> {
    assertBlobId(id);
    // Through held packs the packed copy is tried first (no failed open of the loose name per packed
    // blob): bytes that hash to the id are the content whichever copy holds them, and a damaged packed
    // copy — one a loose repair stands in front of — fails its check and is read as below, loose first.
    if (reads) {
      const held = await packs.locate(id, 'never');
      const raw = held && (await readThroughHeld(reads, id, held));
      if (raw) return raw;
    }
    const loose = await backend.read(looseKey(id));
    if (loose) return decodeVerified(id, loose, 'loose');
    for (let attempt = 0; attempt < 3; attempt++) {
      const loc = await packs.locate(id, 'miss');
      if (!loc) break;
      const raw = (await readThroughHeld(reads, id, loc)) ?? (await readPacked(id, loc));
      if (raw) return raw;
      await packs.refresh();
    }
    // Not found — but a pack whose index is missing or unreadable may hold it: that is damage to
    // the store (an index is a pack's commit point), not an absent blob.
    const unindexed = await unindexedPacks();
    if (unindexed.length > 0) {
      throw new CkptError(
        'BLOB_CORRUPT',
        `blob ${id} not found, and pack(s) ${unindexed.join(', ')} have no readable index: it may be in one of them (run 'ckpt verify')`,
        { blob: id, packs: unindexed },
      );
    }
    throw new CkptError('BLOB_NOT_FOUND', `blob ${id} not found`, { blob: id });
  }

  /** True when `id` reads back whole (the copy readers get is intact). */
  async function readsBack(id: string): Promise<boolean> {
    try {
      await get(id);
      return true;
    } catch (err) {
      if (isCkptError(err, 'BLOB_CORRUPT') || isCkptError(err, 'BLOB_NOT_FOUND')) return false;
      throw err;
    }
  }

  /** Reads a packed record; undefined when the pack vanished (rewritten meanwhile by another process). */
  async function readPacked(id: string, loc: { pack: string; offset: number; length: number }): Promise<Buffer | undefined> {
    const rec = await backend.readRange(packKey(loc.pack), loc.offset, loc.length);
    if (rec && rec.length !== loc.length) {
      throw new CkptError('BLOB_CORRUPT', `blob ${id} (pack ${loc.pack}) is cut short`, { blob: id, where: 'pack', pack: loc.pack });
    }
    return rec && decodeVerified(id, rec, 'pack', loc.pack);
  }

  return {
    maxBlobBytes,

    async put(data) {
      if (data.length > maxBlobBytes) {
        throw new CkptError('BLOB_TOO_LARGE', `blob of ${data.length} bytes is over the ${maxBlobBytes}-byte cap`, {
          bytes: data.length,
          max: maxBlobBytes,
        });
      }
      const id = sha256(data);
      const existing = await freshenExisting(id, 'throttled');
      // The copy a reader would get is checked: a corrupt one is replaced by these (good) bytes
      // rather than kept forever because "it exists".
      const intact = existing !== undefined && (await readsBack(id));
      if (intact) return { id, bytes: data.length, stored: existing, created: false };
      const { codec, payload } = compress(data, options.codec ?? 'auto', 'default');
      const record = encodeBlob(data.length, codec, payload);
      if (existing !== undefined) {
        // Atomic replace of the damaged loose copy (or a loose copy in front of a damaged packed one).
        await backend.write(looseKey(id), record);
        return { id, bytes: data.length, stored: record.length, created: true };
      }
      // create() is the race arbiter: a concurrent put of the same content freshens instead.
      const created = await backend.create(looseKey(id), record);
      return { id, bytes: data.length, stored: record.length, created };
    },

    get,
    openReads,

    has: async (id) => (await info(id)) !== undefined,

    async freshen(id, refresh = 'miss') {
      assertBlobId(id);
      return (await freshenExisting(id, refresh)) !== undefined;
    },

    info,

    createPackWriter(writerOptions) {
      // One listing per fan-out folder for the writer's lifetime instead of one stat per blob.
      const folders = new Map<string, Promise<Set<string>>>();
      let existing: Promise<Set<string>> | undefined;
      const looseListing = async (id: string): Promise<boolean> => {
        const aa = id.slice(0, 2);
        existing ??= backend.children('blobs').then((n) => new Set(n));
        if (!(await existing).has(aa)) return false;
        let names = folders.get(aa);
        if (!names) folders.set(aa, (names = backend.children(`blobs/${aa}`).then((n) => new Set(n))));
        return (await names).has(id.slice(2));
      };
      return createPackWriter({
        backend,
        packs,
        maxBlobBytes,
        codec: writerOptions?.codec ?? options.codec,
        threads: writerOptions?.threads ?? options.threads,
        maxPackBytes: writerOptions?.maxPackBytes ?? options.maxPackBytes,
        freshenExisting: async (id) => (await freshenExisting(id, 'throttled', looseListing)) !== undefined,
      });
    },

    async *listBlobs() {
      for (const key of await backend.list('blobs')) {
        const m = LOOSE_KEY.exec(key);
        const st = m && (await backend.stat(key));
        if (m && st) yield { id: `${m[1]}${m[2]}`, where: 'loose', stored: st.size, mtimeMs: st.mtimeMs };
      }
      await packs.refresh();
      const [broken] = packs.broken().values();
      // Fail closed: a caller deciding what to delete must not miss the blobs of an unreadable index.
      if (broken) throw broken;
      for (const pack of packs.names()) {
        const index = packs.index(pack);
        const st = (await backend.stat(packKey(pack))) ?? (await backend.stat(indexKey(pack)));
        if (!index || !st) continue;
        for (const e of index.entries()) yield { id: e.id, where: 'pack', stored: e.length, mtimeMs: st.mtimeMs, pack };
      }
    },

    async removeLoose(id) {
      assertBlobId(id);
      await backend.remove(looseKey(id));
    },

    rewritePack: (name, keep, expectMtimeMs) => rewritePack({ backend, packs, maxPackBytes: options.maxPackBytes }, name, keep, expectMtimeMs),

    async verifyBlob(id) {
      assertBlobId(id);
      const copies: BlobCheck['copies'] = [];
      const attempt = async (where: BlobWhere, pack: string | undefined, read: () => Promise<unknown>): Promise<void> => {
        try {
          if ((await read()) !== undefined) copies.push({ where, ...(pack ? { pack } : {}), ok: true });
        } catch (err) {
          const problem = isCkptError(err) ? { code: err.code, message: err.message } : { code: 'INTERNAL', message: String(err) };
          copies.push({ where, ...(pack ? { pack } : {}), ok: false, problem });
        }
      };
      await attempt('loose', undefined, async () => {
        const rec = await backend.read(looseKey(id));
        return rec && decodeVerified(id, rec, 'loose');
      });
      await packs.refresh();
      for (const pack of packs.names()) {
        const hit = packs.index(pack)?.find(id);
        if (!hit) continue;
        await attempt('pack', pack, async () => {
          const raw = await readPacked(id, { pack, ...hit });
          if (!raw) throw new CkptError('BLOB_CORRUPT', `pack ${pack} is missing but its index lists ${id}`, { blob: id, pack });
          return raw;
        });
      }
      return { id, ok: copies.length > 0 && copies.every((c) => c.ok), copies };
    },
  };
}
