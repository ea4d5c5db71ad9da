// Rewriting a pack without its dead blobs (for GC): the kept records are copied byte for byte into a
// new pack (read in large windows, never one read per blob), the new index is committed, then the old
// pack is quarantined (and put back if a put freshened it meanwhile), its index removed and the
// quarantined pack last — so at every instant each kept blob is reachable through some index, and no
// blob a put trusted is deleted. Readers holding the old index in memory retry through a fresh listing.
import { CkptError } from '../../errors.js';
import { decodePackIndex, type PackEntry } from '../../format/pack-index.js';
import type { StoreBackend } from '../backend.js';
import { createPackSink } from './pack-sink.js';
import { indexKey, PACK_NAME, packKey, type PackSet } from './pack-set.js';

export interface RewritePackResult {
  /** The pack now holding the kept blobs: the new one, the old one when nothing changed, or undefined when none were kept. */
  pack: string | undefined;
  kept: number;
  dropped: number;
  bytesFreed: number;
  /** True when the pack was freshened during the rewrite (a blob in it was just reused): it was left as it was. */
  skipped: boolean;
}

export interface RewriteDeps {
  backend: StoreBackend;
  packs: PackSet;
  maxPackBytes?: number;
}

const WINDOW_BYTES = 8 * 1024 * 1024;
const indexBytes = (count: number): number => 16 + 1024 + 44 * count + 32;

/**
 * `expectMtimeMs` is the pack's mtime when the caller decided its blobs were dead (GC's plan): a put
 * that freshened it at any point after that leaves the pack as it is. Without it, the mtime at the
 * start of the rewrite is the reference.
 */
export async function rewritePack(deps: RewriteDeps, name: string, keep: (id: string) => boolean, expectMtimeMs?: number): Promise<RewritePackResult> {
  const { backend, packs } = deps;
  if (!PACK_NAME.test(name)) throw new CkptError('INVALID_ARGUMENT', `invalid pack name ${JSON.stringify(name)}`, { pack: name });
  const idxBuf = await backend.read(indexKey(name));
  if (!idxBuf) throw new CkptError('NOT_FOUND', `pack ${name} not found`, { pack: name });
  const index = decodePackIndex(idxBuf, name);
  const before = await backend.stat(packKey(name));
  const all = [...index.entries()];
  const kept = all.filter((e) => keep(e.id)).sort((a, b) => a.offset - b.offset);
  const oldBytes = (before?.size ?? 0) + idxBuf.length;
  if (kept.length === all.length) return { pack: name, kept: kept.length, dropped: 0, bytesFreed: 0, skipped: false };
  const expected = expectMtimeMs ?? before?.mtimeMs;
  if (before && before.mtimeMs !== expected) return { pack: name, kept: all.length, dropped: 0, bytesFreed: 0, skipped: true };

  let newPack: string | undefined;
  let newBytes = 0;
  if (kept.length > 0) {
    if (!before) throw new CkptError('BLOB_CORRUPT', `pack ${name} is missing but its index exists`, { pack: name });
    const sink = createPackSink({ backend, packs, maxPackBytes: deps.maxPackBytes });
    try {
      await copyRecords(backend, name, kept, (e, record) => sink.place(e.id, record, EMPTY));
      const written = await sink.finish();
      newPack = written.at(-1)?.name;
      newBytes = written.reduce((n, p) => n + p.bytes + indexBytes(p.count), 0);
    } catch (err) {
      await sink.abort();
      throw err;
    }
  }

  if (!before) {
    // No pack file (a damaged store) and nothing kept: only its index is left to remove.
    await backend.remove(indexKey(name));
    packs.forget(name);
    return { pack: newPack, kept: 0, dropped: all.length, bytesFreed: oldBytes - newBytes, skipped: false };
  }
  // The old pack is taken out of its name first, and only then is its mtime checked (the loose
  // sweep's rule, sweep-loose.ts). A put that reused one of its blobs freshens it (touch, then stat to
  // confirm it is there) and then trusts it:
  //   - a put that touched it before the quarantine moved its mtime: it goes back, the copy is withdrawn;
  //   - a put after the quarantine finds no pack (its stat misses) and writes the blob again.
  // "Stat, then remove" left a window in which a put trusted a blob this rewrite then deleted
  // (issue 27 item 13). A crash after the quarantine leaves the pack in quarantine beside its index:
  // the next GC puts it back (orphans.ts).
  const q = await backend.quarantine(packKey(name));
  if (q && q.stat.mtimeMs !== expected) {
    await backend.release(q.key, packKey(name));
    for (const p of newPack ? [newPack] : []) {
      await backend.remove(indexKey(p));
      packs.forget(p);
      await backend.remove(packKey(p));
    }
    return { pack: name, kept: all.length, dropped: 0, bytesFreed: 0, skipped: true };
  }

  try {
    await backend.remove(indexKey(name));
  } catch (err) {
    // The index stays: so does its pack (an index without its pack is damage to verify).
    if (q) await backend.release(q.key, packKey(name));
    throw err;
  }
  packs.forget(name);
  if (q) await backend.removeLeftover(q.key, Infinity);
  return { pack: newPack, kept: kept.length, dropped: all.length - kept.length, bytesFreed: oldBytes - newBytes, skipped: false };
}

const EMPTY = new Uint8Array(0);

/** Streams `entries` (sorted by offset) out of a pack, reading windows of several MiB. */
async function copyRecords(
  backend: StoreBackend,
  pack: string,
  entries: readonly PackEntry[],
  onRecord: (entry: PackEntry, record: Buffer) => void,
): Promise<void> {
  let window: Buffer = Buffer.alloc(0);
  let windowAt = 0;
  for (const e of entries) {
    if (e.offset < windowAt || e.offset + e.length > windowAt + window.length) {
      windowAt = e.offset;
      window = (await backend.readRange(packKey(pack), e.offset, Math.max(WINDOW_BYTES, e.length))) ?? Buffer.alloc(0);
    }
    const record = window.subarray(e.offset - windowAt, e.offset - windowAt + e.length);
    if (record.length !== e.length) {
      throw new CkptError('BLOB_CORRUPT', `pack ${pack} is cut short at blob ${e.id}`, { pack, blob: e.id });
    }
    // No copy needed: each window is a fresh buffer, so earlier records queued in the sink stay intact.
    onRecord(e, record);
  }
}
