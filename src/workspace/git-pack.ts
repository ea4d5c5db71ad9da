// One git pack (`objects/pack/pack-*.idx` + `.pack`) read in place: the index's sorted id table
// answers "is it here" without reading the pack; an object is read with positional reads of its own
// compressed bytes (bounded by the next object's offset), inflated, and — for offset and ref deltas —
// rebuilt on its base, with recently built bases cached (delta chains share them). A pack is never
// loaded whole, so packs of any size work. Everything read is untrusted: sizes are checked against the
// headers, inflation is capped, and the caller verifies the object's id.
import * as fs from 'node:fs';
import { constants as zlibConstants, inflateSync } from 'node:zlib';

export type GitObjectType = 'commit' | 'tree' | 'blob' | 'tag';
export interface GitObject {
  type: GitObjectType;
  data: Buffer;
}

const TYPES: Record<number, GitObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const OFS_DELTA = 6;
const REF_DELTA = 7;
/** Deltas nested deeper than this are refused (git's default max depth is 50; 4095 is its hard limit). */
const MAX_CHAIN = 4096;
/** No object or delta inflates past this (a corrupt size must not exhaust memory). */
const MAX_INFLATE = 512 * 1024 * 1024;
/**
 * Bytes one read may inflate and rebuild, its whole delta chain counted (across packs too): each
 * object is capped above, but a chain of 4,095 deltas each rebuilding 512 MiB (8,192 one-byte copy
 * ops, ~40 bytes in the pack) would take hours. 8 GiB: 500 levels of a 16 MiB file (ckpt's default
 * size cap), ~10 s of copying.
 */
export const MAX_READ_BYTES = 16 * MAX_INFLATE;
/**
 * Objects one read may visit, its bases and the copies it tries counted: a chain is at most
 * MAX_CHAIN deep, but trying every copy of each base (git-objects.ts) multiplies along a ref-delta
 * cycle whose objects have several copies.
 */
export const MAX_READ_OBJECTS = 4 * MAX_CHAIN;
/** What one read has inflated and rebuilt so far (MAX_READ_BYTES), and the objects it visited (MAX_READ_OBJECTS). */
export interface ReadBudget {
  bytes: number;
  objects: number;
}
/** Resolves a ref-delta base that is not in this pack, within the same read's budget. */
export type ExternalBase = (raw: Buffer, budget: ReadBudget) => GitObject | undefined;
/** Bytes of rebuilt delta bases kept per pack. */
const BASE_CACHE_BYTES = 32 * 1024 * 1024;

/** Bytes of a pack index's id table read (and checked) at a time. */
const ID_CHUNK_BYTES = 1 << 20;

/**
 * A pack index's id table (`count` entries of `stride` bytes, the id at `idAt` in each), read a chunk
 * at a time. A real table is dense, sorted data: each id's first byte is its fanout bucket. A chunk
 * where most are not is no table (a sparse file's zeros, garbage): undefined, before the rest is
 * read — so what one index makes a scan allocate is bounded by what its file really holds, not by
 * the count its fanout claims. A few bad entries (a flipped byte) only spoil themselves (`find`).
 */
function readIdTable(fd: number, at: number, fanout: Uint32Array, stride: number, idAt: number): Buffer | undefined {
  const count = fanout[255] as number;
  const perChunk = Math.max(1, Math.floor(ID_CHUNK_BYTES / stride));
  const chunks: Buffer[] = [];
  let bucket = 0;
  for (let from = 0; from < count; from += perChunk) {
    const n = Math.min(perChunk, count - from);
    const chunk = Buffer.allocUnsafe(n * stride);
    if (fs.readSync(fd, chunk, 0, chunk.length, at + from * stride) !== chunk.length) return undefined;
    let misplaced = 0;
    for (let k = 0; k < n; k++) {
      while ((fanout[bucket] as number) <= from + k) bucket++;
      if (chunk[k * stride + idAt] !== bucket) misplaced++;
    }
    if (misplaced * 2 > n) return undefined;
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, count * stride);
}

export class GitPack {
  /** Offsets in pack order (sorted), for each object's end; read with `byIndex` on the first object read. */
  private sortedOffsets: Float64Array | undefined;
  private readonly bases = new Map<number, GitObject>();
  private baseBytes = 0;
  /** Objects whose content the caller already holds (verified by their id), by pack offset: never evicted. */
  private readonly seeds = new Map<number, GitObject>();

  private constructor(
    private readonly packPath: string,
    private readonly fanout: Uint32Array,
    private readonly ids: Buffer,
    private readonly v2: boolean,
    private readonly idxPath: string,
    private readonly packSize: number,
  ) {}

  /** The pack of index `idxPath`, or undefined when the index (or its pack) is missing or malformed. */
  static open(idxPath: string): GitPack | undefined {
    let fd: number | undefined;
    try {
      fd = openRegular(idxPath);
      const size = fs.fstatSync(fd).size;
      const head = Buffer.alloc(8 + 1024);
      if (fs.readSync(fd, head, 0, head.length, 0) !== head.length) return undefined;
      const v2 = head.readUInt32BE(0) === 0xff744f63;
      if (v2 && head.readUInt32BE(4) !== 2) return undefined;
      const fanAt = v2 ? 8 : 0;
      const fanout = new Uint32Array(256);
      for (let k = 0; k < 256; k++) {
        fanout[k] = head.readUInt32BE(fanAt + 4 * k);
        if (k > 0 && (fanout[k] as number) < (fanout[k - 1] as number)) return undefined;
      }
      const count = fanout[255] as number;
      // v2: ids, CRCs, offsets (+ large offsets), two checksums; v1: (offset, id) pairs, two checksums.
      if (size < fanAt + 1024 + count * (v2 ? 28 : 24) + 40) return undefined;
      const ids = readIdTable(fd, fanAt + 1024, fanout, v2 ? 20 : 24, v2 ? 0 : 4);
      if (!ids) return undefined;
      const packPath = idxPath.replace(/\.idx$/, '.pack');
      return new GitPack(packPath, fanout, ids, v2, idxPath, fs.statSync(packPath).size);
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }

  get count(): number {
    return this.fanout[255] as number;
  }

  /** The object's position in the index (id order), or -1. */
  find(bytes: Uint8Array, offset: number): number {
    const b = bytes[offset] as number;
    let lo = b === 0 ? 0 : (this.fanout[b - 1] as number);
    let hi = (this.fanout[b] as number) - 1;
    const stride = this.v2 ? 20 : 24;
    const first = this.v2 ? 0 : 4;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = first + mid * stride;
      let c = 0;
      for (let k = 0; k < 20 && c === 0; k++) c = (this.ids[at + k] as number) - (bytes[offset + k] as number);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /**
   * Reads object `oid` (20 raw bytes); `external` resolves a ref-delta base that is not in this pack.
   * Throws when the pack is unreadable or malformed; undefined when the object is not in it. The pack
   * file stays open for the next read until close().
   */
  read(raw: Uint8Array, external: ExternalBase, budget: ReadBudget = { bytes: 0, objects: 0 }): GitObject | undefined {
    const k = this.find(raw, 0);
    if (k < 0) return undefined;
    const at = this.offsets()[k] as number;
    this.fd ??= openRegular(this.packPath);
    return this.readAt(this.fd, at, external, 0, budget);
  }

  /**
   * Gives this pack the content of object `raw` (20 bytes), which the caller has and has verified
   * against that id: a delta chain that reaches it stops there instead of inflating the rest of the
   * chain. False when the object is not in this pack.
   */
  seed(raw: Uint8Array, obj: GitObject): boolean {
    const k = this.find(raw, 0);
    if (k < 0) return false;
    let at: number;
    try {
      at = this.offsets()[k] as number;
    } catch {
      return false; // an index whose offsets cannot be read: no object of it is read either
    }
    if (at < 0) return false;
    this.seeds.set(at, obj);
    return true;
  }

  /**
   * The size of object `raw` (20 bytes) without building it: a whole object's header says it, a
   * delta's result size is the second number of its delta data (the first bytes inflated). Undefined
   * when the object is not here or its entry cannot be read; the pack file stays open until close().
   */
  sizeOf(raw: Uint8Array): number | undefined {
    const k = this.find(raw, 0);
    if (k < 0) return undefined;
    try {
      const at = this.offsets()[k] as number;
      const end = this.endOf(at);
      if (!(at >= 12 && end > at && end <= this.packSize - 20)) return undefined;
      this.fd ??= openRegular(this.packPath);
      return entrySize(this.fd, at, end);
    } catch {
      return undefined;
    }
  }

  /** Closes the pack file a read left open (reads of a batch share it); the next read opens it again. */
  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    fs.closeSync(fd);
  }
  private fd: number | undefined;

  private readAt(fd: number, at: number, external: ExternalBase, depth: number, budget: ReadBudget): GitObject {
    const seeded = this.seeds.get(at);
    if (seeded) return seeded;
    const cached = this.bases.get(at);
    if (cached) {
      this.bases.delete(at); // most recently used last
      this.bases.set(at, cached);
      return cached;
    }
    if (depth > MAX_CHAIN) throw new Error('delta chain too long');
    if (++budget.objects > MAX_READ_OBJECTS) throw new Error(`read of more than ${MAX_READ_OBJECTS} objects`);
    const end = this.endOf(at);
    if (!(at >= 12 && end > at && end <= this.packSize - 20)) throw new Error(`object offset ${at} outside the pack`);
    const buf = Buffer.allocUnsafe(end - at);
    if (fs.readSync(fd, buf, 0, buf.length, at) !== buf.length) throw new Error('short read');
    let pos = 0;
    let c = buf[pos++] as number;
    const type = (c >> 4) & 7;
    let size = c & 15;
    for (let shift = 4; c & 0x80; shift += 7) {
      if (pos >= buf.length || shift > 49) throw new Error('bad object header');
      c = buf[pos++] as number;
      size += (c & 0x7f) * 2 ** shift;
    }
    let base: GitObject | undefined;
    if (type === OFS_DELTA) {
      c = buf[pos++] as number;
      let back = c & 0x7f;
      while (c & 0x80) {
        if (pos >= buf.length) throw new Error('bad delta offset');
        c = buf[pos++] as number;
        back = (back + 1) * 128 + (c & 0x7f);
      }
      base = this.readAt(fd, at - back, external, depth + 1, budget);
    } else if (type === REF_DELTA) {
      const id = buf.subarray(pos, pos + 20);
      pos += 20;
      const k = this.find(id, 0);
      base = k >= 0 ? this.readAt(fd, this.offsets()[k] as number, external, depth + 1, budget) : external(Buffer.from(id), budget);
      if (!base) throw new Error(`delta base ${id.toString('hex')} missing`);
    } else if (!TYPES[type]) throw new Error(`unknown object type ${type}`);
    if (size > MAX_INFLATE) throw new Error(`object of ${size} bytes`);
    spend(budget, size);
    // One output chunk of the announced size: no 16 KiB chunks concatenated afterwards.
    const inflated = inflateSync(buf.subarray(pos), { maxOutputLength: Math.max(1, size), chunkSize: Math.max(64, size) });
    if (inflated.length !== size) throw new Error('object size mismatch');
    const obj: GitObject = base ? { type: base.type, data: applyDelta(inflated, base.data, Math.min(MAX_INFLATE, MAX_READ_BYTES - budget.bytes)) } : { type: TYPES[type]!, data: inflated };
    if (base) spend(budget, obj.data.length);
    if (base || depth > 0) this.remember(at, obj); // bases, and rebuilt objects that may be bases
    return obj;
  }

  /** Keeps a rebuilt object (a base of others, or itself deltified) within the cache's byte budget. */
  private remember(at: number, obj: GitObject): void {
    if (obj.data.length > BASE_CACHE_BYTES / 4) return;
    this.bases.set(at, obj);
    this.baseBytes += obj.data.length;
    for (const [k, v] of this.bases) {
      if (this.baseBytes <= BASE_CACHE_BYTES) break;
      this.bases.delete(k);
      this.baseBytes -= v.data.length;
    }
  }

  /** Every object's offset in index order (v2 large offsets resolved). */
  private offsets(): Float64Array {
    if (this.byIndex) return this.byIndex;
    const n = this.count;
    const byIndex = new Float64Array(n);
    if (this.v2) {
      const fd = openRegular(this.idxPath);
      try {
        const at = 8 + 1024 + n * 24;
        const table = Buffer.allocUnsafe(n * 4);
        if (fs.readSync(fd, table, 0, table.length, at) !== table.length) throw new Error('short index');
        let large: Buffer | undefined;
        for (let k = 0; k < n; k++) {
          const o = table.readUInt32BE(k * 4);
          if (o & 0x80000000) {
            if (!large) {
              // At most one 8-byte large offset per object, whatever size the file claims.
              const size = Math.min(n * 8, Math.max(0, fs.fstatSync(fd).size - 40 - (at + n * 4)));
              large = Buffer.allocUnsafe(size);
              large = large.subarray(0, fs.readSync(fd, large, 0, size, at + n * 4));
            }
            // A bad large offset spoils its own entry (-1: readAt refuses it), not the whole pack:
            // throwing here failed every read of the pack, and every seed (a scan's INTERNAL error).
            const j = (o & 0x7fffffff) * 8;
            byIndex[k] = j + 8 > large.length ? -1 : Number(large.readBigUInt64BE(j));
          } else byIndex[k] = o;
        }
      } finally {
        fs.closeSync(fd);
      }
    } else {
      for (let k = 0; k < n; k++) byIndex[k] = this.ids.readUInt32BE(k * 24);
    }
    this.byIndex = byIndex;
    this.sortedOffsets = Float64Array.from(byIndex).sort();
    return byIndex;
  }
  private byIndex: Float64Array | undefined;

  /** Where the object at `at` ends: the next object's offset, or the pack's trailing checksum. */
  private endOf(at: number): number {
    const s = this.sortedOffsets!;
    let lo = 0;
    let hi = s.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((s[mid] as number) <= at) lo = mid + 1;
      else hi = mid;
    }
    return lo < s.length ? (s[lo] as number) : this.packSize - 20;
  }
}

function spend(budget: ReadBudget, bytes: number): void {
  budget.bytes += bytes;
  if (budget.bytes > MAX_READ_BYTES) throw new Error(`read of more than ${MAX_READ_BYTES} bytes (delta chain)`);
}

/** Bytes of an entry read for its size: the header, a delta's base reference and its data's first bytes. */
const SIZE_PROBE_BYTES = 256;
const SIZE_PROBE_MAX_BYTES = 1024;

/** The size of the object whose pack entry spans [at, end) of `fd` (GitPack.sizeOf). */
function entrySize(fd: number, at: number, end: number): number | undefined {
  const probe = (len: number): Buffer => {
    const buf = Buffer.allocUnsafe(Math.min(len, end - at));
    return buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, at));
  };
  let buf = probe(SIZE_PROBE_BYTES);
  let pos = 0;
  let c = buf[pos++] as number;
  const type = (c >> 4) & 7;
  let size = c & 15;
  for (let shift = 4; c & 0x80; shift += 7) {
    if (pos >= buf.length || shift > 49) return undefined;
    c = buf[pos++] as number;
    size += (c & 0x7f) * 2 ** shift;
  }
  if (type !== OFS_DELTA && type !== REF_DELTA) return TYPES[type] ? size : undefined;
  if (type === REF_DELTA) pos += 20;
  else while ((buf[pos++] as number) & 0x80) if (pos >= buf.length) return undefined;
  // The delta data starts with two varints (source size, result size), at most 20 bytes: inflate
  // the first bytes of its stream, more when they were not enough (a long block header). Inflation
  // grows at most ~1,032-fold, so 1 KiB of input stays within inflatePrefix's bound.
  let data = inflatePrefix(buf.subarray(pos));
  if (data.length < 20 && buf.length < end - at) {
    buf = probe(SIZE_PROBE_MAX_BYTES);
    data = inflatePrefix(buf.subarray(pos));
  }
  let q = 0;
  const varint = (): number | undefined => {
    let v = 0;
    for (let shift = 0; q < data.length && shift <= 49; shift += 7) {
      const b = data[q++] as number;
      v += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return v;
    }
    return undefined;
  };
  const sourceSize = varint();
  return sourceSize === undefined ? undefined : varint();
}

/** What the first bytes of a zlib stream inflate to (no error for a stream cut short); empty past 2 MiB. */
export function inflatePrefix(compressed: Buffer): Buffer {
  try {
    return inflateSync(compressed, { finishFlush: zlibConstants.Z_SYNC_FLUSH, maxOutputLength: 2 * 1024 * 1024 });
  } catch {
    return Buffer.alloc(0);
  }
}

/**
 * Rebuilds an object from git's delta format (source size, target size, copy and insert ops). The
 * target size is checked against the cap before anything is allocated: one-byte copy ops of 64 KiB
 * each let a 200-byte pack entry announce, allocate and fill gigabytes.
 */
export function applyDelta(delta: Buffer, source: Buffer, maxTarget = MAX_INFLATE): Buffer {
  let pos = 0;
  const varint = (): number => {
    let v = 0;
    let shift = 0;
    let c: number;
    do {
      if (pos >= delta.length) throw new Error('truncated delta');
      c = delta[pos++] as number;
      v += (c & 0x7f) * 2 ** shift;
      shift += 7;
    } while (c & 0x80);
    return v;
  };
  if (varint() !== source.length) throw new Error('delta base size mismatch');
  const size = varint();
  if (size > maxTarget) throw new Error(`delta result of ${size} bytes`);
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  while (pos < delta.length) {
    const cmd = delta[pos++] as number;
    if (cmd & 0x80) {
      let off = 0;
      let len = 0;
      if (cmd & 0x01) off = delta[pos++] as number;
      if (cmd & 0x02) off |= (delta[pos++] as number) << 8;
      if (cmd & 0x04) off |= (delta[pos++] as number) << 16;
      if (cmd & 0x08) off += (delta[pos++] as number) * 0x1000000; // no sign bit: a multiplication
      if (cmd & 0x10) len = delta[pos++] as number;
      if (cmd & 0x20) len |= (delta[pos++] as number) << 8;
      if (cmd & 0x40) len |= (delta[pos++] as number) << 16;
      if (len === 0) len = 0x10000;
      if (off + len > source.length || o + len > out.length) throw new Error('delta copy out of range');
      copyBytes(source, off, len, out, o);
      o += len;
    } else if (cmd) {
      if (pos + cmd > delta.length || o + cmd > out.length) throw new Error('delta insert out of range');
      copyBytes(delta, pos, cmd, out, o);
      pos += cmd;
      o += cmd;
    } else throw new Error('reserved delta opcode');
  }
  if (o !== out.length) throw new Error('delta result size mismatch');
  return out;
}

/**
 * Most delta copies are a few dozen bytes (the history fixture: ~160,000 per 515 blobs, most 16–128
 * bytes), where a plain loop beats Buffer.copy's argument handling; longer ones use set().
 */
function copyBytes(from: Uint8Array, at: number, len: number, to: Uint8Array, o: number): void {
  if (len <= 32) for (let k = 0; k < len; k++) to[o + k] = from[at + k] as number;
  else to.set(from.subarray(at, at + len), o);
}

/** Opens a pack or index file for reading; a FIFO or device planted there throws instead of blocking. */
function openRegular(path: string): number {
  const fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  if (!fs.fstatSync(fd).isFile()) {
    fs.closeSync(fd);
    throw new Error(`${path} is not a regular file`);
  }
  return fd;
}
