// Staging (DESIGN §4 step 2): every write or symlink of a restore is first materialized as a temp
// file beside its target — `.<name>.ckpt-stage-<restoreId>-<index>` — with its exact mode, fsynced
// (in groups: stage-all.ts), so that placing it is a single rename. Names derive from the restore id (random) and the entry
// index: a crashed restore's leftovers are found again and removed, and never collide with another
// restore's. Blob reads happen here, before the point of no return: a corrupt blob fails closed.
import { closeSync, constants, fchmodSync, fsync, lstatSync, mkdirSync, openSync, symlinkSync, unlinkSync, writeSync } from 'node:fs';
import { lstat, readdir, rm, rmdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CkptError } from '../errors.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { PlannedEntry } from './plan-restore.js';
import { ancestorsOf, checkParentChain } from './present.js';

import { STAGE_MARK } from '../workspace/stage-name.js';

/**
 * The staging file of entry `index` of restore `id` (name kept short: NAME_MAX is 255 bytes), in
 * `folder` (workspace-relative; default: beside the target). Placing moves a deleted file to the
 * name of index `d<i>` before unlinking it (place.ts).
 */
export function stagePath(root: string, rel: string, id: string, index: number | string, folder: string = dirname(rel)): string {
  const name = basename(rel);
  const short = Buffer.byteLength(name) > 120 ? Buffer.from(name).subarray(0, 120).toString('utf8').replace(/\uFFFD+$/, '') : name;
  return join(root, folder, `.${short}${STAGE_MARK}${id}-${index}`);
}

/**
 * Where the staging file of `rel` goes: its parent when that is a real folder, else the deepest
 * ancestor that is one ('' = the root). A parent that is missing, or a file or symlink the restore
 * replaces by a folder, only comes into being after the point of no return; staging must not create
 * or write through anything, and a rename within the workspace moves the file there afterwards.
 */
export async function stagingFolder(root: string, rel: string): Promise<string> {
  let folder = '';
  for (const dir of ancestorsOf(rel)) {
    let info;
    try {
      info = lstatSync(join(root, dir), { throwIfNoEntry: false });
    } catch {
      break;
    }
    if (!info?.isDirectory()) break;
    folder = dir;
  }
  return folder;
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

export interface StageContext {
  root: string;
  blobs: BlobStore;
  id: string;
}

/** A staged entry: its staging path, and the open file whose flush is still owed (files only). */
export interface StagedFile {
  path: string;
  /** Descriptor of the staged file, written but not yet fsynced: `flushStaged` syncs and closes it. */
  fd?: number;
}

/**
 * Stages one write/symlink entry: writes it with its exact mode and returns the staging path and
 * the still-open descriptor (undefined for deletes and folders). The file is *not* fsynced here: the
 * caller flushes a whole group at once (`flushStaged`) before the point of no return, which lets the
 * file system commit many files in one journal transaction instead of one per file. The calls are
 * synchronous, back to back (only the blob read may wait): a thread-pool round trip per call cost a
 * restore more than the calls. A leftover staging file of the same name is replaced.
 * BLOB_CORRUPT / BLOB_NOT_FOUND propagate: the caller fails closed.
 */
export async function stageEntry(ctx: StageContext, entry: PlannedEntry, index: number): Promise<StagedFile | undefined> {
  if (entry.action === 'delete' || entry.action === 'mkdir') return undefined;
  if (entry.action === 'symlink') {
    if (typeof entry.target !== 'string') throw new CkptError('INTERNAL', `plan entry ${entry.path} has no link target`);
    const staged = stagePath(ctx.root, entry.path, ctx.id, index, await stagingFolder(ctx.root, entry.path));
    unlinkIfPresent(staged);
    // A symlink is all metadata: its folder's fsync after placing makes it durable.
    symlinkSync(entry.target, staged);
    return { path: staged };
  }
  if (typeof entry.blob !== 'string') throw new CkptError('INTERNAL', `plan entry ${entry.path} has no blob`);
  const data = await ctx.blobs.get(entry.blob);
  // The folder is looked at after the read, right before the writes (nothing waits in between).
  const staged = stagePath(ctx.root, entry.path, ctx.id, index, await stagingFolder(ctx.root, entry.path));
  const mode = (entry.mode ?? 0o644) & 0o7777;
  const fd = createExclusive(staged);
  try {
    for (let off = 0; off < data.length; ) off += writeSync(fd, data, off, data.length - off);
    // chmod on the descriptor: exact mode whatever the umask (and read-only modes still get written first).
    fchmodSync(fd, mode);
  } catch (err) {
    closeSync(fd);
    unlinkIfPresent(staged);
    throw err;
  }
  return { path: staged, fd };
}

/**
 * Creates `abs` (never following a symlink there) for writing. A leftover of the same name (a
 * staging file of an interrupted run of this restore) is replaced: unlinked, then created again.
 * The create comes first: a name that is almost never there costs no failed unlink per file.
 */
function createExclusive(abs: string): number {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  try {
    return openSync(abs, flags, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  unlinkIfPresent(abs);
  return openSync(abs, flags, 0o600);
}

const fsyncFd = (fd: number): Promise<void> => new Promise((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));

/**
 * Flushes staged files as one group: every fsync is issued at once (the thread pool runs them in
 * parallel and ext4 folds concurrent fsyncs into shared journal commits), then each descriptor is
 * closed. Settles every one (none is left open) and rejects with the first failure.
 */
export async function flushStaged(files: readonly (StagedFile | undefined)[]): Promise<void> {
  const results = await Promise.allSettled(
    files.map(async (f) => {
      if (f?.fd === undefined) return;
      const { fd } = f;
      f.fd = undefined;
      try {
        await fsyncFd(fd);
      } finally {
        closeSync(fd);
      }
    }),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Closes staged files without flushing them (after a failure: they are removed anyway). */
export function closeStaged(files: readonly (StagedFile | undefined)[]): void {
  for (const f of files) {
    if (f?.fd === undefined) continue;
    const { fd } = f;
    f.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // already closed or failed: nothing more to release
    }
  }
}

/** Removes every staging file of restore `id` beside `paths` and in their ancestors (see stagingFolder). Returns how many. */
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
