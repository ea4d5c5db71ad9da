// Staging (DESIGN §4 step 2): every write or symlink of a restore is first materialized as a temp
// file beside its target — `.<name>.ckpt-stage-<restoreId>-<index>` — with its exact mode, fsynced,
// so that placing it is a single rename. Names derive from the restore id (random) and the entry
// index: a crashed restore's leftovers are found again and removed, and never collide with another
// restore's. Blob reads happen here, before the point of no return: a corrupt blob fails closed.
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rm, rmdir, symlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CkptError } from '../errors.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { PlannedEntry } from './plan-restore.js';
import { ancestorsOf, checkParentChain } from './present.js';

import { STAGE_MARK } from '../workspace/stage-name.js';

/**
 * The staging file of entry `index` of restore `id` (name kept short: NAME_MAX is 255 bytes), in
 * `folder` (workspace-relative; default: beside the target).
 */
export function stagePath(root: string, rel: string, id: string, index: number, folder: string = dirname(rel)): string {
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
    const info = await lstat(join(root, dir)).catch(() => undefined);
    if (!info?.isDirectory()) break;
    folder = dir;
  }
  return folder;
}


/**
 * Creates the missing parent folders of `rel`, one segment at a time, re-checking with lstat that no
 * symlink or file took a folder's place. Returns false (nothing written) when the chain is blocked.
 */
export async function ensureParents(root: string, rel: string, created?: Set<string>): Promise<boolean> {
  for (const dir of ancestorsOf(rel)) {
    const abs = join(root, dir);
    let info;
    try {
      info = await lstat(abs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      try {
        await mkdir(abs);
        created?.add(dirname(abs));
      } catch (mkErr) {
        if ((mkErr as NodeJS.ErrnoException).code !== 'EEXIST') throw mkErr;
      }
      info = await lstat(abs);
    }
    if (!info.isDirectory()) return false; // a symlink or file: never written through
  }
  return true;
}

export interface StageContext {
  root: string;
  blobs: BlobStore;
  id: string;
}

/**
 * Stages one write/symlink entry and returns the staging path (undefined for deletes and folders).
 * A leftover staging file of the same name is replaced. BLOB_CORRUPT / BLOB_NOT_FOUND propagate:
 * the caller fails closed.
 */
export async function stageEntry(ctx: StageContext, entry: PlannedEntry, index: number): Promise<string | undefined> {
  if (entry.action === 'delete' || entry.action === 'mkdir') return undefined;
  const staged = stagePath(ctx.root, entry.path, ctx.id, index, await stagingFolder(ctx.root, entry.path));
  await rm(staged, { force: true });
  if (entry.action === 'symlink') {
    if (typeof entry.target !== 'string') throw new CkptError('INTERNAL', `plan entry ${entry.path} has no link target`);
    await symlink(entry.target, staged);
    return staged;
  }
  if (typeof entry.blob !== 'string') throw new CkptError('INTERNAL', `plan entry ${entry.path} has no blob`);
  const data = await ctx.blobs.get(entry.blob);
  const mode = (entry.mode ?? 0o644) & 0o7777;
  const handle = await open(staged, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await handle.writeFile(data);
    // chmod on the handle: exact mode whatever the umask (and read-only modes still get written first).
    await handle.chmod(mode);
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => {});
    await rm(staged, { force: true });
    throw err;
  }
  await handle.close();
  return staged;
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
