// Git's own record of a work tree, read in-process (never by spawning git): the `.git/index` file
// (format v2, v3 and v4; stage-0 entries of regular files and symlinks with their stat data and blob
// ids) so a first scan can reference git's blobs for files whose stat matches, and git's object store
// (loose and packed, through isomorphic-git) to copy such a blob into ckpt's store when a later scan
// finds the file changed. Anything this module cannot parse makes it return undefined: the scan then
// reads and hashes the files itself.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { findGitTop, readText } from './ignore-rules.js';

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

export interface GitIndex {
  /** Folder holding `.git` (the work tree top). */
  top: string;
  /** Where objects live (the common dir of a linked worktree). */
  objectsGitdir: string;
  /** Entries keyed by workspace-relative path (only those under the workspace root). */
  entries: Map<string, GitIndexEntry>;
  /** mtime of the index file in ms: entries modified at or after it are "racily clean" and not trusted. */
  indexMtimeMs: number;
}

export interface GitDirs {
  top: string;
  gitdir: string;
  commondir: string;
}

/** The git folders of the work tree enclosing `root` (a `.git` folder, or a `.git` file of a worktree). */
export function findGitDirs(root: string): GitDirs | undefined {
  const top = findGitTop(root);
  if (top === undefined) return undefined;
  const dotGit = join(top, '.git');
  let gitdir = dotGit;
  try {
    if (fs.statSync(dotGit).isFile()) {
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(readText(dotGit) ?? '');
      if (!m?.[1]) return undefined;
      gitdir = resolve(top, m[1]);
    }
  } catch {
    return undefined;
  }
  const common = readText(join(gitdir, 'commondir'))?.trim();
  return { top, gitdir, commondir: common ? resolve(gitdir, common) : gitdir };
}

/** Reads the git index of the work tree enclosing `root`; undefined when there is none or it is not understood. */
export function loadGitIndex(root: string): GitIndex | undefined {
  const dirs = findGitDirs(root);
  if (!dirs) return undefined;
  // sha256 repositories have 32-byte ids in the index: not handled, fall back to hashing.
  const config = readText(join(dirs.commondir, 'config')) ?? '';
  if (/objectformat\s*=\s*sha256/i.test(config)) return undefined;
  const indexPath = join(dirs.gitdir, 'index');
  let data: Buffer;
  let mtimeMs: number;
  try {
    mtimeMs = fs.statSync(indexPath).mtimeMs;
    data = fs.readFileSync(indexPath);
  } catch {
    return undefined;
  }
  const prefixRel = relative(dirs.top, root);
  if (isAbsolute(prefixRel) || prefixRel.startsWith('..')) return undefined;
  const prefix = prefixRel === '' ? '' : `${prefixRel.split(sep).join('/')}/`;
  const entries = parseGitIndex(data, prefix);
  if (!entries) return undefined;
  return { top: dirs.top, objectsGitdir: dirs.commondir, entries, indexMtimeMs: mtimeMs };
}

/**
 * Parses an index file (v2/v3/v4). Keeps stage-0 regular-file and symlink entries under `prefix`
 * (stripped), skipping skip-worktree, intent-to-add and sparse-directory entries. Undefined for an
 * unknown version, a split index or anything malformed.
 */
export function parseGitIndex(data: Buffer, prefix = ''): Map<string, GitIndexEntry> | undefined {
  if (data.length < 12 + 20 || data.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = data.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = data.readUInt32BE(8);
  const end = data.length - 20;
  const entries = new Map<string, GitIndexEntry>();
  let at = 12;
  let previous: Buffer = Buffer.alloc(0);
  for (let n = 0; n < count; n++) {
    const start = at;
    if (at + 62 > end) return undefined;
    const ctimeS = data.readUInt32BE(at);
    const ctimeNs = data.readUInt32BE(at + 4);
    const mtimeS = data.readUInt32BE(at + 8);
    const mtimeNs = data.readUInt32BE(at + 12);
    const ino = data.readUInt32BE(at + 20);
    const mode = data.readUInt32BE(at + 24);
    const size = data.readUInt32BE(at + 36);
    const oid = data.toString('hex', at + 40, at + 60);
    const flags = data.readUInt16BE(at + 60);
    at += 62;
    let extended = 0;
    if (flags & 0x4000) {
      if (version < 3 || at + 2 > end) return undefined;
      extended = data.readUInt16BE(at);
      at += 2;
    }
    let name: Buffer | undefined;
    let path: string;
    if (version === 4) {
      // Prefix compression: strip N bytes from the previous name, append a NUL-terminated suffix.
      let c = data[at++] ?? 0;
      let strip = c & 127;
      while (c & 128) {
        strip += 1;
        c = data[at++] ?? 0;
        strip = (strip << 7) + (c & 127);
      }
      const nul = data.indexOf(0, at);
      if (nul < 0 || nul > end || strip > previous.length) return undefined;
      name = Buffer.concat([previous.subarray(0, previous.length - strip), data.subarray(at, nul)]);
      path = name.toString('utf8');
      previous = name;
      at = nul + 1;
    } else {
      const nul = data.indexOf(0, at);
      if (nul < 0 || nul > end) return undefined;
      path = data.toString('utf8', at, nul);
      // Entries are NUL-padded to a multiple of 8 bytes (1 to 8 NULs).
      at = start + Math.floor((nul - start + 8) / 8) * 8;
    }
    const stage = (flags >> 12) & 3;
    const skip = stage !== 0 || (extended & 0x6000) !== 0 || (mode & 0o170000) === 0o040000;
    if (skip) continue;
    const type = mode & 0o170000;
    if (type !== 0o100000 && type !== 0o120000) continue;
    if (prefix !== '' && !path.startsWith(prefix)) continue;
    entries.set(prefix === '' ? path : path.slice(prefix.length), { oid, mode, size, mtimeS, mtimeNs, ctimeS, ctimeNs, ino });
  }
  // Extensions: a split index ("link") keeps its entries elsewhere; not supported.
  while (at + 8 <= end) {
    const sig = data.toString('latin1', at, at + 4);
    const size = data.readUInt32BE(at + 4);
    if (sig === 'link' || sig === 'sdir') return undefined;
    at += 8 + size;
  }
  return entries;
}

/** Git's blob id of `data`. */
export function gitBlobId(data: Uint8Array): string {
  return createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
}

/**
 * True when the lstat numbers match the index entry (git truncates to 32 bits) and the entry is not
 * racily clean. ms times are compared with a 1 µs tolerance (a double holds ms to ~0.25 µs).
 */
export function matchesGitEntry(
  e: GitIndexEntry,
  st: { size: number; mtimeMs: number; ctimeMs: number; ino: number; mode: number },
  indexMtimeMs: number,
): boolean {
  if (e.size !== st.size % 2 ** 32) return false;
  if (e.ino !== st.ino % 2 ** 32) return false;
  const type = st.mode & 0o170000;
  if (type !== (e.mode & 0o170000)) return false;
  if (type === 0o100000 && (st.mode & 0o100) !== 0 !== ((e.mode & 0o100) !== 0)) return false;
  if (st.mtimeMs >= indexMtimeMs || st.ctimeMs >= indexMtimeMs) return false;
  const close = (s: number, ns: number, ms: number): boolean => Math.abs(s * 1e3 + ns / 1e6 - ms) < 1e-3;
  return close(e.mtimeS, e.mtimeNs, st.mtimeMs) && close(e.ctimeS, e.ctimeNs, st.ctimeMs);
}

/**
 * Reads a blob from git's object store (loose or packed) and verifies it hashes to `oid`; undefined
 * when it is missing, unreadable or does not match.
 */
export async function readGitBlob(objectsGitdir: string, oid: string): Promise<Buffer | undefined> {
  try {
    const git = await import('isomorphic-git');
    const { blob } = await git.readBlob({ fs, gitdir: objectsGitdir, oid });
    const data = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
    return gitBlobId(data) === oid ? data : undefined;
  } catch {
    return undefined;
  }
}
