// The workspace's persistent scan index (DESIGN §3 `scan-index.*`): what the last scan saw of every
// path — lstat numbers (size, mtime, ctime, inode, mode), kind, and the content id (a sha256 blob in
// ckpt's store, or a git blob id to be copied from git's objects when needed) — plus the folders and
// the ignore-rule texts it walked under, and the time the scan started. Shared by every session of
// the workspace. Binary and columnar so 100k entries load and save in milliseconds:
//
//   header (48 B): "CKSI" u32 version, u32 count, u32 flags, f64 timeMs, u32 pathsBytes, u32 extraBytes
//   f64 size[count] | f64 mtimeMs[count] | f64 ctimeMs[count] | f64 ino[count] | u32 mode[count]
//   u8 kind[count] | u8 hashKind[count] | u8 flags[count] | (pad to 8) | hash[count * 32]
//   paths (UTF-8, NUL-separated) | extra (JSON: symlink targets, skip reasons, rule texts, git's index key)
//
// A folder entry's size holds the slot of its first child and its mtime the number of children (the
// children of a folder are contiguous, in listing order), so an unchanged tree is matched entry by
// entry without a path map; -1: unknown (then the map is used).
//
// mtimes are ms as doubles (Node's lstat numbers): exact enough to detect a change to ~0.25 µs, and
// entries modified close to the scan are re-hashed anyway (racily clean, see scan.ts).
import { CkptError } from '../errors.js';
import { allStoredPaths, isStoredPath } from '../format/stored-path.js';

export const KIND_FILE = 0;
export const KIND_SYMLINK = 1;
export const KIND_DIR = 2;
/** A file ckpt could not record (too large, unreadable): `why` says why. */
export const KIND_SKIPPED = 3;
/** Vanished while being read: dropped by compact(). */
export const KIND_GONE = 255;

export const HASH_NONE = 0;
export const HASH_SHA256 = 1;
export const HASH_GIT = 2;

/** The stat numbers are unknown (the entry came from another record): always re-read. */
export const FLAG_STAT_UNKNOWN = 1;

const MAGIC = 'CKSI';
const VERSION = 2;
/** Bytes of the header (ScanIndex.headerTime reads the index's time from them alone). */
export const HEADER = 48;
export const HASH_BYTES = 32;

export interface StatLike {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  mode: number;
}

export class ScanIndex {
  count = 0;
  /** Wall-clock ms at which the scan that wrote this index started. */
  timeMs: number;
  paths: string[] = [];
  size: Float64Array;
  mtime: Float64Array;
  ctime: Float64Array;
  ino: Float64Array;
  mode: Uint32Array;
  kind: Uint8Array;
  hashKind: Uint8Array;
  flags: Uint8Array;
  hash: Uint8Array;
  targets = new Map<number, string>();
  why = new Map<number, string>();
  /** Rule-file texts per folder of the walk that wrote this index. */
  rules = new Map<string, string>();
  /** Number of entries of the root folder (slots 0..rootChildren-1); -1 unknown. */
  rootChildren = -1;
  /** Folders a cut-short scan did not reach before any of their content was known (see scan.ts). */
  unbaselined: string[] = [];
  /** git's index as the scan that wrote this index saw it at its start (workspace/git-index.ts gitIndexStat's key; '' none); undefined: not recorded (older indexes). */
  gitIndex: string | undefined;
  private map: Map<string, number> | undefined;

  constructor(capacity: number, timeMs: number) {
    const c = Math.max(16, capacity);
    this.timeMs = timeMs;
    this.size = new Float64Array(c);
    this.mtime = new Float64Array(c);
    this.ctime = new Float64Array(c);
    this.ino = new Float64Array(c);
    this.mode = new Uint32Array(c);
    this.kind = new Uint8Array(c);
    this.hashKind = new Uint8Array(c);
    this.flags = new Uint8Array(c);
    this.hash = new Uint8Array(c * HASH_BYTES);
  }

  get capacity(): number {
    return this.size.length;
  }

  /** Slot of `path`, or -1. */
  slotOf(path: string): number {
    if (!this.map) {
      this.map = new Map();
      for (let i = 0; i < this.count; i++) this.map.set(this.paths[i] as string, i);
    }
    return this.map.get(path) ?? -1;
  }

  private grow(): void {
    const c = this.capacity * 2;
    const f64 = (a: Float64Array) => {
      const b = new Float64Array(c);
      b.set(a);
      return b;
    };
    const u8 = (a: Uint8Array, n = 1) => {
      const b = new Uint8Array(c * n);
      b.set(a);
      return b;
    };
    this.size = f64(this.size);
    this.mtime = f64(this.mtime);
    this.ctime = f64(this.ctime);
    this.ino = f64(this.ino);
    const mode = new Uint32Array(c);
    mode.set(this.mode);
    this.mode = mode;
    this.kind = u8(this.kind);
    this.hashKind = u8(this.hashKind);
    this.flags = u8(this.flags);
    this.hash = u8(this.hash, HASH_BYTES);
  }

  /** Appends a path with its stat numbers; kind/content are set by the caller. */
  push(path: string, kind: number, st: StatLike | undefined): number {
    if (this.count === this.capacity) this.grow();
    const i = this.count++;
    this.paths.push(path);
    this.map?.set(path, i);
    this.kind[i] = kind;
    if (st) {
      this.size[i] = st.size;
      this.mtime[i] = st.mtimeMs;
      this.ctime[i] = st.ctimeMs;
      this.ino[i] = st.ino;
      this.mode[i] = st.mode;
    } else {
      this.flags[i] = FLAG_STAT_UNKNOWN;
    }
    return i;
  }

  /** True when `st` equals the stored stat numbers of slot `i`. */
  statEquals(i: number, st: StatLike): boolean {
    return (
      this.mtime[i] === st.mtimeMs &&
      this.size[i] === st.size &&
      this.ctime[i] === st.ctimeMs &&
      this.ino[i] === st.ino &&
      this.mode[i] === st.mode &&
      this.flags[i] === 0
    );
  }

  /** Copies kind and content (hash, target, reason) of `from`'s slot `j` into slot `i`. */
  copyContent(i: number, from: ScanIndex, j: number): void {
    this.kind[i] = from.kind[j] as number;
    this.hashKind[i] = from.hashKind[j] as number;
    const src = from.hash;
    const dst = this.hash;
    for (let b = 0, s = j * HASH_BYTES, d = i * HASH_BYTES; b < HASH_BYTES; b++) dst[d + b] = src[s + b] as number;
    if (from.kind[j] === KIND_SYMLINK) this.targets.set(i, from.targets.get(j) ?? '');
    else if (from.kind[j] === KIND_SKIPPED) {
      const why = from.why.get(j);
      if (why !== undefined) this.why.set(i, why);
    }
  }

  /** Copies a whole entry (stat numbers, flags and content); a folder's child block becomes unknown. */
  copyEntry(from: ScanIndex, j: number): number {
    if (from.kind[j] === KIND_DIR) {
      const d = this.push(from.paths[j] as string, KIND_DIR, undefined);
      this.flags[d] = 0;
      this.size[d] = -1;
      this.mode[d] = from.mode[j] as number;
      return d;
    }
    const i = this.push(from.paths[j] as string, from.kind[j] as number, {
      size: from.size[j] as number,
      mtimeMs: from.mtime[j] as number,
      ctimeMs: from.ctime[j] as number,
      ino: from.ino[j] as number,
      mode: from.mode[j] as number,
    });
    this.flags[i] = from.flags[j] as number;
    this.copyContent(i, from, j);
    return i;
  }

  setHash(i: number, kind: number, hex: string): void {
    this.hashKind[i] = kind;
    this.hash.fill(0, i * HASH_BYTES, (i + 1) * HASH_BYTES);
    this.hash.set(Buffer.from(hex, 'hex'), i * HASH_BYTES);
  }

  /** Sets slot `i`'s content id from `len` bytes of `src` at `offset` (the rest zeroed). */
  setHashBytes(i: number, kind: number, src: Uint8Array, offset: number, len: number): void {
    this.hashKind[i] = kind;
    const h = this.hash;
    const at = i * HASH_BYTES;
    for (let b = 0; b < len; b++) h[at + b] = src[offset + b] as number;
    for (let b = len; b < HASH_BYTES; b++) h[at + b] = 0;
  }

  /** The content id of slot `i` as hex (64 for sha256, 40 for git), or undefined. */
  hashHex(i: number): string | undefined {
    const k = this.hashKind[i];
    if (k === HASH_SHA256) return Buffer.from(this.hash.buffer, this.hash.byteOffset + i * HASH_BYTES, 32).toString('hex');
    if (k === HASH_GIT) return Buffer.from(this.hash.buffer, this.hash.byteOffset + i * HASH_BYTES, 20).toString('hex');
    return undefined;
  }

  /** This index without KIND_GONE entries (itself when there are none); folder blocks are remapped. */
  compact(): ScanIndex {
    if (!this.kind.subarray(0, this.count).includes(KIND_GONE)) return this;
    // kept[i] = entries kept before slot i.
    const kept = new Uint32Array(this.count + 1);
    for (let i = 0; i < this.count; i++) kept[i + 1] = (kept[i] as number) + (this.kind[i] === KIND_GONE ? 0 : 1);
    const remap = (first: number, n: number): [number, number] => [kept[first] as number, (kept[first + n] as number) - (kept[first] as number)];
    const out = new ScanIndex(this.count, this.timeMs);
    out.rules = this.rules;
    out.unbaselined = this.unbaselined;
    out.gitIndex = this.gitIndex;
    if (this.rootChildren >= 0) out.rootChildren = remap(0, this.rootChildren)[1];
    for (let i = 0; i < this.count; i++) {
      if (this.kind[i] === KIND_GONE) continue;
      if (this.kind[i] === KIND_DIR) {
        const d = out.push(this.paths[i] as string, KIND_DIR, undefined);
        out.flags[d] = 0;
        const first = this.size[i] as number;
        const n = this.mtime[i] as number;
        if (first >= 0 && first + n <= this.count) [out.size[d], out.mtime[d]] = remap(first, n);
        else out.size[d] = -1;
      } else out.copyEntry(this, i);
    }
    return out;
  }

  encode(): Buffer {
    const n = this.count;
    const paths = Buffer.from(this.paths.join('\0'), 'utf8');
    const extra = Buffer.from(
      JSON.stringify({ targets: [...this.targets], why: [...this.why], rules: [...this.rules], rootChildren: this.rootChildren, unbaselined: this.unbaselined, gitIndex: this.gitIndex }),
      'utf8',
    );
    const layout = columns(n);
    const out = Buffer.alloc(layout.end + paths.length + extra.length);
    out.write(MAGIC, 0, 'latin1');
    out.writeUInt32LE(VERSION, 4);
    out.writeUInt32LE(n, 8);
    out.writeUInt32LE(0, 12);
    out.writeDoubleLE(this.timeMs, 16);
    out.writeUInt32LE(paths.length, 24);
    out.writeUInt32LE(extra.length, 28);
    const put = (arr: ArrayBufferView, at: number, bytes: number) =>
      out.set(new Uint8Array(arr.buffer, arr.byteOffset, bytes), at);
    put(this.size, layout.size, n * 8);
    put(this.mtime, layout.mtime, n * 8);
    put(this.ctime, layout.ctime, n * 8);
    put(this.ino, layout.ino, n * 8);
    put(this.mode, layout.mode, n * 4);
    put(this.kind, layout.kind, n);
    put(this.hashKind, layout.hashKind, n);
    put(this.flags, layout.flags, n);
    put(this.hash, layout.hash, n * HASH_BYTES);
    paths.copy(out, layout.end);
    extra.copy(out, layout.end + paths.length);
    return out;
  }

  /** The time of an encoded index from its header alone (undefined when the bytes are no index's header). */
  static headerTime(head: Buffer): number | undefined {
    if (head.length < HEADER || head.toString('latin1', 0, 4) !== MAGIC || head.readUInt32LE(4) !== VERSION) return undefined;
    const t = head.readDoubleLE(16);
    return Number.isFinite(t) ? t : undefined;
  }

  /** Decodes an encoded index; LOG_CORRUPT when it is not one (callers then rebuild it). */
  static decode(data: Buffer): ScanIndex {
    const bad = (why: string) => new CkptError('LOG_CORRUPT', `scan index is corrupt: ${why}`);
    if (data.length < HEADER || data.toString('latin1', 0, 4) !== MAGIC) throw bad('bad magic');
    if (data.readUInt32LE(4) !== VERSION) throw bad('unknown version');
    const n = data.readUInt32LE(8);
    const layout = columns(n);
    const pathsBytes = data.readUInt32LE(24);
    const extraBytes = data.readUInt32LE(28);
    if (data.length !== layout.end + pathsBytes + extraBytes) throw bad('length mismatch');
    // Typed-array views need 8-byte alignment: copy once when the buffer is not aligned.
    let buf = data;
    if (buf.byteOffset % 8 !== 0) {
      const copy = new Uint8Array(data.length);
      copy.set(data);
      buf = Buffer.from(copy.buffer, 0, copy.length);
    }
    const idx = new ScanIndex(0, buf.readDoubleLE(16));
    const ab = buf.buffer;
    const o = buf.byteOffset;
    idx.count = n;
    idx.size = new Float64Array(ab, o + layout.size, n);
    idx.mtime = new Float64Array(ab, o + layout.mtime, n);
    idx.ctime = new Float64Array(ab, o + layout.ctime, n);
    idx.ino = new Float64Array(ab, o + layout.ino, n);
    idx.mode = new Uint32Array(ab, o + layout.mode, n);
    idx.kind = new Uint8Array(ab, o + layout.kind, n);
    idx.hashKind = new Uint8Array(ab, o + layout.hashKind, n);
    idx.flags = new Uint8Array(ab, o + layout.flags, n);
    idx.hash = new Uint8Array(ab, o + layout.hash, n * HASH_BYTES);
    const joined = n === 0 ? '' : buf.toString('utf8', layout.end, layout.end + pathsBytes);
    idx.paths = n === 0 ? [] : joined.split('\0');
    if (idx.paths.length !== n) throw bad('path count mismatch');
    // Every path is untrusted input: a forged `../x` would be stat'ed and recorded outside the root.
    // Checked on the joined text at once; the per-path check only names the offender.
    if (n > 0 && !allStoredPaths(joined, idx.paths)) {
      for (const p of idx.paths) if (!isStoredPath(p)) throw bad(`path ${JSON.stringify(p)} is not a clean workspace-relative path`);
    }
    try {
      const extra = JSON.parse(buf.toString('utf8', layout.end + pathsBytes, layout.end + pathsBytes + extraBytes)) as {
        targets: [number, string][];
        why: [number, string][];
        rules: [string, string][];
        rootChildren?: number;
        unbaselined?: string[];
        gitIndex?: unknown;
      };
      idx.rootChildren = extra.rootChildren ?? -1;
      idx.unbaselined = extra.unbaselined ?? [];
      if (!Array.isArray(idx.unbaselined) || !idx.unbaselined.every(isStoredPath)) throw new Error('unbaselined');
      // Only compared with git's index of now: a forged one at most makes a scan check its references again.
      if (extra.gitIndex !== undefined && typeof extra.gitIndex !== 'string') throw new Error('gitIndex');
      idx.gitIndex = extra.gitIndex;
      idx.targets = new Map(extra.targets);
      idx.why = new Map(extra.why);
      idx.rules = new Map(extra.rules);
    } catch {
      throw bad('malformed extra section');
    }
    return idx;
  }
}

function columns(n: number) {
  const size = HEADER;
  const mtime = size + n * 8;
  const ctime = mtime + n * 8;
  const ino = ctime + n * 8;
  const mode = ino + n * 8;
  const kind = mode + n * 4;
  const hashKind = kind + n;
  const flags = hashKind + n;
  const hash = Math.ceil((flags + n) / 8) * 8;
  return { size, mtime, ctime, ino, mode, kind, hashKind, flags, hash, end: hash + n * HASH_BYTES };
}
