// Reading the present state of one workspace path as a FileImage (DESIGN §2): `file` (content stored
// as a blob, exact mode), `symlink` (target text, never followed), `dir`, `absent`, or `skipped` with
// a reason. A permission or read error is `skipped`, never `absent`.
import { constants, fstatSync, lstatSync, openSync, type Stats } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { readdir } from 'node:fs/promises';
import { readLinkTarget, TARGET_NOT_UTF8 } from './link-target.js';
import { join } from 'node:path';
import type { FileImage } from '../format/event.js';
import { sha256Hex } from '../format/sha256.js';
import type { BlobStore } from '../storage/blob-store.js';
import { closeQuietly, readToEnd } from '../storage/fs/fs-io.js';

export interface ReadImageOptions {
  /** Where content goes (the blob store, or a pack writer); without it only the hash is computed (drift checks). */
  blobs?: Pick<BlobStore, 'put'> | { put(data: Uint8Array): Promise<{ id: string }> };
  maxBytes: number;
  /** Handed a regular file's bytes and the lstat they were read after (a restore keeps them for its recovery capture). */
  onContent?: (data: Buffer, info: Stats) => void;
}

export async function readImage(abs: string, rel: string, options: ReadImageOptions): Promise<FileImage> {
  let info;
  try {
    info = lstatSync(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      // A name that is not valid UTF-8 reaches ckpt with U+FFFD in it and looks absent: recording it
      // as absent would make a restore "delete" what it never saw. It cannot be recorded: skipped.
      if (rel.includes('\uFFFD') && (await hasUndecodableName(abs, rel))) return { path: rel, state: 'skipped', why: NOT_UTF8 };
      return { path: rel, state: 'absent' };
    }
    return { path: rel, state: 'skipped', why: `unreadable: ${code ?? String(err)}` };
  }
  if (info.isSymbolicLink()) {
    try {
      const target = await readLinkTarget(abs);
      return target === undefined ? { path: rel, state: 'skipped', why: TARGET_NOT_UTF8 } : { path: rel, state: 'symlink', target };
    } catch (err) {
      return { path: rel, state: 'skipped', why: `unreadable: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
    }
  }
  if (info.isDirectory()) return { path: rel, state: 'dir', mode: info.mode & 0o7777 };
  if (!info.isFile()) return { path: rel, state: 'skipped', why: 'not-regular' };
  if (info.size > options.maxBytes) {
    return { path: rel, state: 'skipped', why: 'too-large', bytes: info.size };
  }
  let data: Buffer;
  try {
    data = await readNoFollow(abs);
  } catch (err) {
    return { path: rel, state: 'skipped', why: `unreadable: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  }
  if (data.length > options.maxBytes) return { path: rel, state: 'skipped', why: 'too-large', bytes: data.length };
  const mode = info.mode & 0o7777;
  options.onContent?.(data, info);
  if (options.blobs) {
    const put = await options.blobs.put(data);
    return { path: rel, state: 'file', blob: put.id, bytes: data.length, mode };
  }
  return { path: rel, state: 'file', blob: sha256(data), bytes: data.length, mode };
}

/** Why a path whose name (or a folder's name on the way) is not valid UTF-8 is skipped. */
export const NOT_UTF8 = 'name-not-utf8';

/** True when a segment of `rel` (beneath the root `abs` ends in) stands for a name that is not UTF-8. */
async function hasUndecodableName(abs: string, rel: string): Promise<boolean> {
  let dir = abs.slice(0, abs.length - rel.length - 1);
  for (const part of rel.split('/')) {
    if (part.includes('\uFFFD')) {
      let names: Buffer[];
      try {
        names = await readdir(dir, { encoding: 'buffer' });
      } catch {
        return false;
      }
      if (names.some((b) => !isUtf8(b) && b.toString('utf8') === part)) return true;
    }
    dir = join(dir, part);
  }
  return false;
}

export function sha256(data: Uint8Array): string {
  return sha256Hex(data);
}

/**
 * Reads a regular file without following a symlink swapped in after the lstat (direct calls for a
 * small file, see storage/fs/fs-io.ts). O_NONBLOCK: a FIFO swapped in fails the check instead of blocking.
 */
export async function readNoFollow(abs: string): Promise<Buffer> {
  const fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`not a regular file: ${abs}`), { code: 'EINVAL' });
    return await readToEnd(fd, st.size);
  } finally {
    closeQuietly(fd);
  }
}

