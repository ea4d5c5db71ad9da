// Pack and pack-index formats, pure (no I/O). A pack (`packs/<name>.pack`) is a 4-byte header then
// blob records (blob-header.ts) back to back; it carries no table of its own, so it can be streamed
// by appends. Its index (`packs/<name>.idx`) is written once, atomically, after the pack is durable:
// the index is the commit point, and a pack without one is an orphan for GC.
//
// Pack:   "CKP" 0x01 | record | record | …
// Index:  offset  size        field
//         0       4           "CKI" 0x01 (magic + format)
//         4       4           entry count, uint32 BE
//         8       8           size of the pack it describes, uint64 BE
//         16      1024        fanout: 256 x uint32 BE, fanout[b] = entries whose id's first byte <= b
//         1040    44 x count  entries sorted by id: id (32 raw bytes), offset (uint64 BE), length (uint32 BE)
//         end-32  32          sha256 of every byte before it
// Lookup is the fanout bucket plus a binary search over raw bytes in place: no per-entry objects, so
// an index of 100,000 blobs costs 4.4 MB of memory and ~17 comparisons per lookup.
import { createHash } from 'node:crypto';
import { CkptError } from '../errors.js';

export const PACK_HEADER = Buffer.from([0x43, 0x4b, 0x50, 0x01]);
const INDEX_MAGIC = [0x43, 0x4b, 0x49, 0x01];
const FANOUT_AT = 16;
const ENTRIES_AT = FANOUT_AT + 256 * 4;
const ENTRY_BYTES = 44;
const SUM_BYTES = 32;

export interface PackEntry {
  id: string;
  offset: number;
  length: number;
}

export interface PackIndex {
  readonly count: number;
  readonly packSize: number;
  /** Where the record of `id` sits in the pack, or undefined when this pack does not hold it. */
  find(id: string): { offset: number; length: number } | undefined;
  entries(): IterableIterator<PackEntry>;
}

/** Serializes an index over `entries` (any order; ids unique, 64 lowercase hex) for a pack of `packSize` bytes. */
export function encodePackIndex(entries: readonly PackEntry[], packSize: number): Buffer {
  const sorted = [...entries].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const buf = Buffer.alloc(ENTRIES_AT + sorted.length * ENTRY_BYTES + SUM_BYTES);
  buf.set(INDEX_MAGIC, 0);
  buf.writeUInt32BE(sorted.length, 4);
  buf.writeBigUInt64BE(BigInt(packSize), 8);
  const fanout = new Uint32Array(256);
  sorted.forEach((e, i) => {
    if (i > 0 && sorted[i - 1]?.id === e.id) throw new CkptError('INTERNAL', `duplicate id ${e.id} in pack index`);
    const at = ENTRIES_AT + i * ENTRY_BYTES;
    if (buf.write(e.id, at, 32, 'hex') !== 32) throw new CkptError('INTERNAL', `bad blob id ${e.id} in pack index`);
    buf.writeBigUInt64BE(BigInt(e.offset), at + 32);
    buf.writeUInt32BE(e.length, at + 40);
    fanout[buf[at] as number]! += 1;
  });
  let running = 0;
  for (let b = 0; b < 256; b++) {
    running += fanout[b] as number;
    buf.writeUInt32BE(running, FANOUT_AT + b * 4);
  }
  createHash('sha256').update(buf.subarray(0, buf.length - SUM_BYTES)).digest().copy(buf, buf.length - SUM_BYTES);
  return buf;
}

/** Parses and checks an index (checksum, sizes, order, bounds); anything wrong is BLOB_CORRUPT. */
export function decodePackIndex(buf: Buffer, name = 'pack'): PackIndex {
  const corrupt = (why: string): CkptError =>
    new CkptError('BLOB_CORRUPT', `pack index ${name} is corrupt: ${why}`, { pack: name, why });
  if (buf.length < ENTRIES_AT + SUM_BYTES) throw corrupt('too short');
  if (INDEX_MAGIC.some((byte, i) => buf[i] !== byte)) throw corrupt('bad magic or format');
  const count = buf.readUInt32BE(4);
  if (buf.length !== ENTRIES_AT + count * ENTRY_BYTES + SUM_BYTES) throw corrupt('length does not match count');
  const sum = createHash('sha256').update(buf.subarray(0, buf.length - SUM_BYTES)).digest();
  if (!sum.equals(buf.subarray(buf.length - SUM_BYTES))) throw corrupt('checksum mismatch');
  const view = new DataView(buf.buffer, buf.byteOffset, buf.length);
  const packSize = uint64At(view, 8);
  if (packSize < 0) throw corrupt('pack size out of range');
  // The fanout steers the binary search of find(): it must be exactly the one the entries imply
  // (a checksum only proves the bytes are as written, not that the writer was right or honest).
  // DataView reads and a byte loop (no BigInt, no native compare, no readUInt32BE per entry): a scan
  // that looks up one blob loads every index of the store — ~30,000 entries after a baseline of that
  // many files — in code not optimized yet, where these are several times cheaper.
  const buckets = new Uint32Array(256);
  for (let i = 0; i < count; i++) {
    const at = ENTRIES_AT + i * ENTRY_BYTES;
    if (i > 0 && !idAfter(buf, at - ENTRY_BYTES, at)) throw corrupt('ids not sorted');
    const offset = uint64At(view, at + 32);
    if (offset < PACK_HEADER.length || offset + view.getUint32(at + 40) > packSize) throw corrupt('entry out of bounds');
    buckets[buf[at] as number]! += 1;
  }
  for (let b = 0, sum = 0; b < 256; b++) {
    sum += buckets[b]!;
    if (buf.readUInt32BE(FANOUT_AT + b * 4) !== sum) throw corrupt(b === 255 ? 'fanout does not match count' : `fanout[${b}] does not match the entries`);
  }
  const fanoutAt = (b: number): number => (b < 0 ? 0 : buf.readUInt32BE(FANOUT_AT + b * 4));
  const entryAt = (i: number): PackEntry => {
    const at = ENTRIES_AT + i * ENTRY_BYTES;
    return {
      id: buf.toString('hex', at, at + 32),
      offset: uint64At(view, at + 32),
      length: buf.readUInt32BE(at + 40),
    };
  };

  return {
    count,
    packSize,
    find(id) {
      const key = Buffer.from(id, 'hex');
      if (key.length !== 32) return undefined;
      let lo = fanoutAt((key[0] as number) - 1);
      let hi = fanoutAt(key[0] as number);
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const at = ENTRIES_AT + mid * ENTRY_BYTES;
        const cmp = buf.compare(key, 0, 32, at, at + 32);
        if (cmp === 0) {
          const { offset, length } = entryAt(mid);
          return { offset, length };
        }
        if (cmp < 0) lo = mid + 1;
        else hi = mid;
      }
      return undefined;
    },
    *entries() {
      for (let i = 0; i < count; i++) yield entryAt(i);
    },
  };
}

/** The uint64 BE at `at` as a number, or -1 when it is beyond a safe integer. */
function uint64At(view: DataView, at: number): number {
  const hi = view.getUint32(at);
  return hi >= 0x200000 ? -1 : hi * 0x1_0000_0000 + view.getUint32(at + 4);
}

/** True when the 32-byte id at `b` sorts strictly after the one at `a` (byte by byte; ids differ early). */
function idAfter(buf: Buffer, a: number, b: number): boolean {
  let k = 0;
  while (k < 32 && buf[a + k] === buf[b + k]) k++;
  return k < 32 && (buf[a + k] as number) < (buf[b + k] as number);
}
