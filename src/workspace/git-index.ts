// Git's own record of a work tree, read in-process (never by spawning git): the `.git/index` file
// (format v2, v3 and v4; stage-0 entries of regular files and symlinks with their stat data and blob
// ids) so a first scan can reference git's blobs for files whose stat matches. Anything this module
// cannot parse, and a work tree whose checkout may convert any file (git-convert.ts), makes it return
// undefined: the scan then reads and hashes the files itself (and the paths named by attributes that
// convert, in any other work tree). The
// repository's folders and objects are in git-repo.ts.
import * as fs from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { checkoutConversions, type TrackedFile } from './git-convert.js';
import { findGitDirs, type GitDirs } from './git-repo.js';
import { readRegularFile, readSmallText } from '../small-text.js';

/** Past this an index is not parsed (the scan hashes instead): ~10 M entries. */
const MAX_INDEX_BYTES = 1024 * 1024 * 1024;

export interface GitIndexEntry {
  /** Blob id (40 hex). */
  oid: string;
  /** Git's mode: 0o100644, 0o100755 or 0o120000. */
  mode: number;
  size: number;
  mtimeS: number;
  mtimeNs: number;
  ctimeS: number;
  ctimeNs: number;
  ino: number;
}

/** How a path may have been converted (GitIndex.conversion). */
export type Converted = 'size' | 'any';

export interface GitIndex {
  /** Folder holding `.git` (the work tree top). */
  top: string;
  /** Where objects live (the common dir of a linked worktree). */
  objectsGitdir: string;
  /** Entries under the workspace root, keyed by workspace-relative path. */
  table: GitIndexTable;
  /** mtime of the index file in ms: entries modified at or after it are "racily clean" and not trusted. */
  indexMtimeMs: number;
  /**
   * How a checkout or an add may have converted a workspace-relative path (git-convert.ts): `size`
   * (line endings, `$Id$`: the file holds its blob's bytes exactly when it has the blob's size),
   * `any` (a filter, an encoding, an untracked .gitattributes: never referenced); undefined when
   * not at all. Absent when nothing converts.
   */
  conversion?: (rel: string) => Converted | undefined;
}

/**
 * `index` with the paths below each folder holding one of `attributeFiles` (workspace-relative
 * `.gitattributes` the walk saw) that git's index does not list counted as converted: a checkout reads
 * such a file too (git takes the work tree's where the index has none, and git-convert.ts reads only
 * the tracked ones and those from the root up), and ckpt does not parse it. `index` itself when there
 * is none.
 */
export function withUntrackedAttributes(index: GitIndex, attributeFiles: readonly string[]): GitIndex {
  const folders = attributeFiles.filter((f) => f.includes('/') && index.table.slotOf(f) < 0).map((f) => f.slice(0, f.lastIndexOf('/') + 1));
  if (folders.length === 0) return index;
  const conversion = index.conversion;
  return { ...index, conversion: (rel) => (folders.some((d) => rel.startsWith(d)) ? 'any' : conversion?.(rel)) };
}

/**
 * The kept entries of an index, flat: the raw index bytes and, per entry, where its fixed-size part
 * starts (stat data and blob id are read from there on demand), plus one path -> entry map. No
 * object per entry, no hex string per id: a 100k-entry index parses in a few ms.
 */
export class GitIndexTable {
  /** Workspace-relative paths, in index order. */
  readonly paths: string[];
  /** The raw index file: entry `j`'s blob id is `bytes[oidAt(j) .. oidAt(j) + 20)`. */
  readonly bytes: Uint8Array;
  private readonly at: Uint32Array;
  private map: Map<string, number> | undefined;

  /**
   * True when every path is ASCII: then git's order (bytes) is JavaScript's string order, and a
   * folder's entries are found by binary search (folderNames) instead of a map of every path.
   */
  readonly ascii: boolean;

  /** Every `.gitattributes` the index lists, in or outside the workspace (path relative to the work tree top, blob id). */
  readonly attributeFiles: readonly TrackedFile[];

  constructor(data: Uint8Array, at: Uint32Array, paths: string[], ascii = false, attributeFiles: readonly TrackedFile[] = []) {
    this.bytes = data;
    this.at = at;
    this.paths = paths;
    this.ascii = ascii;
    this.attributeFiles = attributeFiles;
  }

  /**
   * The entries directly in folder `dirRel` (`''`: the root) by file name, for an `ascii` table
   * (sorted as JavaScript compares strings): the folder's block is found by binary search and its
   * subfolders' blocks are skipped, so the walk matches each file by its listed name, without a map
   * of every path.
   */
  folderNames(dirRel: string): Map<string, number> {
    const { paths } = this;
    const n = paths.length;
    const out = new Map<string, number>();
    const start = dirRel === '' ? 0 : dirRel.length + 1;
    // Paths starting with `dir/` sort from `dir/` up to (excluding) `dir0` ('0' follows '/').
    const lo = dirRel === '' ? 0 : this.lowerBound(`${dirRel}/`, 0, n);
    const hi = dirRel === '' ? n : this.lowerBound(`${dirRel}0`, lo, n);
    for (let j = lo; j < hi; ) {
      const p = paths[j] as string;
      const slash = p.indexOf('/', start);
      if (slash < 0) {
        out.set(p.slice(start), j++);
        continue;
      }
      j = this.lowerBound(`${p.slice(0, slash)}0`, j + 1, hi); // past the subfolder's block
    }
    return out;
  }

  private lowerBound(key: string, lo: number, hi: number): number {
    const { paths } = this;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((paths[mid] as string) < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  get count(): number {
    return this.paths.length;
  }

  /** Entry number of `path`, or -1. */
  slotOf(path: string): number {
    let map = this.map;
    if (!map) {
      map = this.map = new Map();
      const { paths } = this;
      for (let i = 0; i < paths.length; i++) map.set(paths[i] as string, i);
    }
    const j = map.get(path);
    return j === undefined ? -1 : j;
  }

  private u32(j: number, field: number): number {
    const d = this.bytes;
    const o = (this.at[j] as number) + field;
    return (((d[o] as number) << 24) | ((d[o + 1] as number) << 16) | ((d[o + 2] as number) << 8) | (d[o + 3] as number)) >>> 0;
  }

  mode(j: number): number {
    return this.u32(j, 24);
  }

  oidAt(j: number): number {
    return (this.at[j] as number) + 40;
  }

  oid(j: number): string {
    const o = this.at[j] as number;
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset + o + 40, 20).toString('hex');
  }

  /** True when the entry's blob id equals the 20 bytes of `ids` at `offset`. */
  sameOid(j: number, ids: Uint8Array, offset: number): boolean {
    const d = this.bytes;
    for (let b = 0, o = (this.at[j] as number) + 40; b < 20; b++) if (d[o + b] !== ids[offset + b]) return false;
    return true;
  }

  entry(j: number): GitIndexEntry {
    return {
      oid: this.oid(j),
      mode: this.u32(j, 24),
      size: this.u32(j, 36),
      mtimeS: this.u32(j, 8),
      mtimeNs: this.u32(j, 12),
      ctimeS: this.u32(j, 0),
      ctimeNs: this.u32(j, 4),
      ino: this.u32(j, 20),
    };
  }

  /**
   * True when the lstat numbers match entry `j` (git truncates to 32 bits) and the entry is not
   * racily clean (file changed at or after the index was written). ms times are compared with a
   * 1 µs tolerance (a double holds ms to ~0.25 µs).
   */
  matches(j: number, size: number, mtimeMs: number, ctimeMs: number, ino: number, mode: number, indexMtimeMs: number): boolean {
    if (this.u32(j, 36) !== size % 4294967296) return false;
    // Size 0 of a blob that is not the empty one: git's mark for a racily clean entry whose content
    // differed when the index was written ("smudged"); git calls it modified whatever the stat says.
    if (size === 0 && !this.sameOid(j, EMPTY_BLOB, 0)) return false;
    if (this.u32(j, 20) !== ino % 4294967296) return false;
    const gitMode = this.u32(j, 24);
    const type = mode & 0o170000;
    if (type !== (gitMode & 0o170000)) return false;
    if (type === 0o100000 && (mode & 0o100) !== 0 !== ((gitMode & 0o100) !== 0)) return false;
    if (mtimeMs >= indexMtimeMs || ctimeMs >= indexMtimeMs) return false;
    if (Math.abs(this.u32(j, 8) * 1e3 + this.u32(j, 12) / 1e6 - mtimeMs) >= 1e-3) return false;
    return Math.abs(this.u32(j, 0) * 1e3 + this.u32(j, 4) / 1e6 - ctimeMs) < 1e-3;
  }
}

/** git's id of the empty blob. */
const EMPTY_BLOB = Buffer.from('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391', 'hex');

/** Reads the git index of the work tree enclosing `root`; undefined when there is none or it is not understood. */
export function loadGitIndex(root: string): GitIndex | undefined {
  const where = locateGitIndex(root);
  if (!where) return undefined;
  let mtimeMs: number;
  try {
    mtimeMs = fs.statSync(where.indexPath).mtimeMs;
  } catch {
    return undefined;
  }
  // Never a FIFO or a device in the index's place (small-text.ts).
  const data = readRegularFile(where.indexPath, { follow: true, maxBytes: MAX_INDEX_BYTES });
  return data === undefined ? undefined : gitIndexOf(where, data, mtimeMs);
}

/**
 * The stat of git's index of the work tree enclosing `root` (undefined when there is none ckpt can
 * read: no repository, a removed `.git`, a sha256 repository). No parse: the scan asks it before it
 * trusts the git references it carries by stat.
 */
export function gitIndexStat(root: string): { mtimeMs: number; key: string } | undefined {
  const where = locateGitIndex(root);
  if (!where) return undefined;
  try {
    const st = fs.statSync(where.indexPath);
    // Which file, and which version of it: another repository's index (a nested repository's `.git`
    // removed: the enclosing one's), or an older copy put back (its mtime kept), differs here.
    return { mtimeMs: st.mtimeMs, key: `${where.indexPath}\0${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` };
  } catch {
    return undefined;
  }
}

interface GitIndexLocation {
  dirs: GitDirs;
  /** The workspace root. */
  root: string;
  indexPath: string;
  /** The workspace root's path in the index (`''` or ending in `/`). */
  prefix: string;
}

function locateGitIndex(root: string): GitIndexLocation | undefined {
  const dirs = findGitDirs(root);
  if (!dirs) return undefined;
  // sha256 repositories have 32-byte ids in the index: not handled, fall back to hashing.
  const config = readSmallText(join(dirs.commondir, 'config'), { follow: true }) ?? '';
  if (/objectformat\s*=\s*sha256/i.test(config)) return undefined;
  const prefixRel = relative(dirs.top, root);
  if (isAbsolute(prefixRel) || prefixRel.startsWith('..')) return undefined;
  const prefix = prefixRel === '' ? '' : `${prefixRel.split(sep).join('/')}/`;
  return { dirs, root, indexPath: join(dirs.gitdir, 'index'), prefix };
}

function gitIndexOf(where: GitIndexLocation, data: Buffer, mtimeMs: number): GitIndex | undefined {
  const table = parseGitIndexTable(data, where.prefix);
  if (!table) return undefined;
  // A checkout that may convert content leaves files whose stat matches but whose bytes are not the blob's.
  const { any, opaque } = checkoutConversions(where.dirs, where.root, table.attributeFiles);
  if (opaque === 'all') return undefined;
  const index: GitIndex = { top: where.dirs.top, objectsGitdir: where.dirs.commondir, table, indexMtimeMs: mtimeMs };
  if (any !== 'none') {
    index.conversion = (rel) => {
      const top = where.prefix + rel;
      if (opaque !== 'none' && opaque(top)) return 'any';
      return any === 'all' || any(top) ? 'size' : undefined;
    };
  }
  return index;
}

/**
 * Parses an index file (v2/v3/v4) into a map of entry objects (see parseGitIndexTable for what is
 * kept); undefined for what it cannot parse.
 */
export function parseGitIndex(data: Buffer, prefix = ''): Map<string, GitIndexEntry> | undefined {
  const table = parseGitIndexTable(data, prefix);
  if (!table) return undefined;
  const out = new Map<string, GitIndexEntry>();
  for (let j = 0; j < table.count; j++) out.set(table.paths[j] as string, table.entry(j));
  return out;
}

/**
 * Parses an index file (v2/v3/v4). Keeps stage-0 regular-file and symlink entries under `prefix`
 * (stripped), skipping skip-worktree, intent-to-add and sparse-directory entries. Undefined for an
 * unknown version, a split index or anything malformed.
 */
export function parseGitIndexTable(data: Buffer, prefix = ''): GitIndexTable | undefined {
  if (data.length < 12 + 20 || data.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = data.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = data.readUInt32BE(8);
  const end = data.length - 20;
  // Every entry takes at least 62 bytes + a NUL: a larger count is malformed (and must not size arrays).
  if (count > (end - 12) / 63) return undefined;
  const at = new Uint32Array(count);
  const pre = Buffer.from(prefix, 'utf8');
  const preLen = pre.length;
  // The kept paths (prefix stripped), NUL-separated, decoded at once at the end.
  let names = Buffer.allocUnsafe(Math.max(1024, data.length));
  let len = 0;
  let kept = 0;
  let high = 0; // OR of every kept path byte: ASCII-only when bit 7 stays clear
  const attributeFiles: TrackedFile[] = [];
  // v4: the previous entry's full name (prefix compression).
  let name = Buffer.allocUnsafe(version === 4 ? 4096 : 0);
  let nameLen = 0;
  let pos = 12;
  for (let n = 0; n < count; n++) {
    const start = pos;
    if (pos + 62 > end) return undefined;
    const mode = readU32(data, pos + 24);
    const flags = ((data[pos + 60] as number) << 8) | (data[pos + 61] as number);
    pos += 62;
    let extended = 0;
    if (flags & 0x4000) {
      if (version < 3 || pos + 2 > end) return undefined;
      extended = ((data[pos] as number) << 8) | (data[pos + 1] as number);
      pos += 2;
    }
    const type = mode & 0o170000;
    const want = ((flags >> 12) & 3) === 0 && (extended & 0x6000) === 0 && (type === 0o100000 || type === 0o120000);
    // The entry's full name, as bytes: src[from, to).
    let src: Uint8Array = data;
    let from: number;
    let to: number;
    if (version === 4) {
      // Strip N bytes from the previous name, append a NUL-terminated suffix. The varint is summed
      // in doubles: `<<` wrapped it at 32 bits to a negative N, which passed the check below and
      // grew the name past its bytes (uninitialised memory in paths, paths out of step with entries).
      let c = data[pos++] ?? 0;
      let strip = c & 127;
      while (c & 128) {
        if (pos >= end) return undefined;
        c = data[pos++] as number;
        strip = (strip + 1) * 128 + (c & 127);
      }
      if (strip > nameLen) return undefined;
      let k = nameLen - strip;
      for (; pos < end; pos++) {
        const b = data[pos] as number;
        if (b === 0) break;
        if (k === name.length) {
          const bigger = Buffer.allocUnsafe(name.length * 2);
          name.copy(bigger, 0, 0, k);
          name = bigger;
        }
        name[k++] = b;
      }
      if (pos >= end) return undefined;
      pos++;
      nameLen = k;
      src = name;
      from = 0;
      to = k;
    } else {
      from = pos;
      while (pos < end && data[pos] !== 0) pos++;
      if (pos >= end) return undefined;
      to = pos;
      // Entries are NUL-padded to a multiple of 8 bytes (1 to 8 NULs).
      pos = start + Math.floor((pos - start + 8) / 8) * 8;
    }
    if (isAttributesName(src, from, to)) attributeFiles.push({ path: Buffer.from(src.subarray(from, to)).toString('utf8'), oid: data.toString('hex', start + 40, start + 60) });
    if (!want || to - from <= preLen) continue;
    let under = true;
    for (let b = 0; b < preLen; b++) {
      if (src[from + b] !== pre[b]) {
        under = false;
        break;
      }
    }
    if (!under) continue;
    if (len + (to - from) + 1 > names.length) {
      const bigger = Buffer.allocUnsafe(Math.max(names.length * 2, len + (to - from) + 1));
      names.copy(bigger, 0, 0, len);
      names = bigger;
    }
    for (let b = from + preLen; b < to; b++) high |= names[len++] = src[b] as number;
    names[len++] = 0;
    at[kept++] = start;
  }
  // Extensions: a split index ("link") keeps its entries elsewhere; not supported.
  while (pos + 8 <= end) {
    const sig = data.toString('latin1', pos, pos + 4);
    const size = data.readUInt32BE(pos + 4);
    if (sig === 'link' || sig === 'sdir') return undefined;
    pos += 8 + size;
  }
  const paths = kept === 0 ? [] : names.toString('utf8', 0, len - 1).split('\0');
  if (paths.length !== kept) return undefined; // a NUL inside a name: malformed
  return new GitIndexTable(data, at.subarray(0, kept), paths, (high & 0x80) === 0, attributeFiles);
}

const ATTRIBUTES = Buffer.from('.gitattributes');

/** True when bytes [from, to) of `src` name a `.gitattributes` file (at the top or in a folder). */
function isAttributesName(src: Uint8Array, from: number, to: number): boolean {
  const start = to - ATTRIBUTES.length;
  if (start < from || src[to - 1] !== 0x73 || (start > from && src[start - 1] !== 0x2f)) return false;
  for (let k = 0; k < ATTRIBUTES.length; k++) if (src[start + k] !== ATTRIBUTES[k]) return false;
  return true;
}

function readU32(d: Uint8Array, o: number): number {
  return (((d[o] as number) << 24) | ((d[o + 1] as number) << 16) | ((d[o + 2] as number) << 8) | (d[o + 3] as number)) >>> 0;
}
