// Staging names and files (DESIGN §4 step 4): each write or symlink of a restore is placed by writing
// it as a temp file beside its target — `.<name>.ckpt-stage-<restoreId>-<index>` — with its exact
// mode and renaming that over the target, so a reader or a failure sees the old file or the new one,
// never a partial one. Names derive from the restore id (random) and the entry index: a crashed
// restore's leftovers are found again and removed, and never collide with another restore's.
import { closeSync, constants, fsync, lstatSync, mkdirSync, openSync, unlinkSync } from 'node:fs';
import { readdir, rm, rmdir, lstat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ancestorsOf, checkParentChain } from './present.js';
import { STAGE_MARK } from '../workspace/stage-name.js';

/**
 * The staging file of entry `index` of restore `id` (name kept short: NAME_MAX is 255 bytes), in
 * its target's folder. Placing moves a deleted file to the name of index `d<i>` before unlinking it (place.ts).
 */
export function stagePath(root: string, rel: string, id: string, index: number | string): string {
  const name = basename(rel);
  const short = Buffer.byteLength(name) > 120 ? Buffer.from(name).subarray(0, 120).toString('utf8').replace(/\uFFFD+$/, '') : name;
  return join(root, dirname(rel), `.${short}${STAGE_MARK}${id}-${index}`);
}

/**
 * Creates the missing parent folders of `rel`, one segment at a time, re-checking with lstat that no
 * symlink or file took a folder's place. Returns false (nothing written) when the chain is blocked.
 */
export function ensureParents(root: string, rel: string, created?: Set<string>): boolean {
  for (const dir of ancestorsOf(rel)) {
    const abs = join(root, dir);
    let info = lstatSync(abs, { throwIfNoEntry: false });
    if (!info) {
      try {
        mkdirSync(abs);
        created?.add(dirname(abs));
      } catch (mkErr) {
        if ((mkErr as NodeJS.ErrnoException).code !== 'EEXIST') throw mkErr;
      }
      info = lstatSync(abs);
    }
    if (!info.isDirectory()) return false; // a symlink or file: never written through
  }
  return true;
}

/** Unlinks `abs` if it exists (a leftover or abandoned staging file). */
export function unlinkIfPresent(abs: string): void {
  try {
    unlinkSync(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Creates `abs` (never following a symlink there) for writing. A leftover of the same name (a
 * staging file of an interrupted run of this restore) is replaced: unlinked, then created again.
 * The create comes first: a name that is almost never there costs no failed unlink per file.
 */
export function createExclusive(abs: string): number {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  try {
    return openSync(abs, flags, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  unlinkIfPresent(abs);
  return openSync(abs, flags, 0o600);
}

/** fsync on the thread pool, then close (whatever the fsync's outcome). */
export function flushAndClose(fd: number): Promise<void> {
  return new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve()))).finally(() => closeSync(fd));
}

/** Removes every staging file of restore `id` beside `paths` and in their ancestors (where older versions staged). Returns how many. */
export async function removeStaged(root: string, paths: readonly string[], id: string): Promise<number> {
  const marker = `${STAGE_MARK}${id}-`;
  let removed = 0;
  const dirs = new Set<string>(['.']);
  for (const p of paths) for (const a of ancestorsOf(p)) dirs.add(a);
  for (const dir of dirs) {
    const chain = dir === '.' ? { ok: true } : await checkParentChain(root, `${dir}/x`);
    if (!chain.ok) continue; // never list or unlink through a symlinked folder
    let names: string[];
    try {
      names = await readdir(join(root, dir));
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.startsWith('.') || !name.includes(marker)) continue;
      await rm(join(root, dir, name), { force: true });
      removed++;
    }
  }
  return removed;
}

/**
 * Removes folders (deepest first) that are empty; a non-empty or missing one is left alone, and so is
 * one reached through a symlinked ancestor (the list comes from the log: never followed out).
 */
export async function removeEmptyFolders(root: string, dirs: readonly string[]): Promise<void> {
  const ordered = [...dirs].sort((a, b) => b.split('/').length - a.split('/').length);
  for (const dir of ordered) {
    try {
      if (!(await checkParentChain(root, dir)).ok) continue;
      const info = await lstat(join(root, dir));
      if (!info.isDirectory()) continue;
      await rmdir(join(root, dir));
    } catch {
      // ENOTEMPTY / ENOENT: someone's files live there, or it is already gone
    }
  }
}
