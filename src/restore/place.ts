// Placing a staged restore (DESIGN §4 step 4), after the point of no return, in plan order (deletes
// deepest first, then folders, files and symlinks shallowest first): unlink deleted paths and remove
// emptied folders, create folders (replacing a file or symlink), rename each staged file or link over
// its target (replacing an emptied folder), and fsync every touched folder. Idempotent, so recovery after a crash runs
// exactly this again: an already-renamed entry is simply re-placed, an already-absent path is fine.
import { constants, lstatSync, mkdirSync, renameSync, rmdirSync, unlinkSync } from 'node:fs';
import { chmod, lstat, open } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { PlannedEntry, SkippedPath } from './plan-restore.js';
import { WHY } from './plan-restore.js';
import { checkParentChain, checkParentChainSync, fsyncDir, mapLimit } from './present.js';
import { ensureParents, unlinkIfPresent } from './stage.js';

/** Touched folders fsynced at once (each holds a descriptor while its fsync is in flight). */
const DIR_FLUSH_PARALLELISM = 64;

export interface PlaceOutcome {
  restored: string[];
  deleted: string[];
  /** Entries whose parent chain became a symlink/file since the plan: not touched. */
  skipped: SkippedPath[];
}

/**
 * Places `entries`; `staged[i]` is the staging path of entry i (undefined for deletes, or when the
 * entry could not be staged — it is then reported as skipped).
 */
export async function placeEntries(root: string, entries: readonly PlannedEntry[], staged: readonly (string | undefined)[]): Promise<PlaceOutcome> {
  const out: PlaceOutcome = { restored: [], deleted: [], skipped: [] };
  const touched = new Set<string>();
  const emptied: string[] = [];
  const folderModes: { path: string; mode: number }[] = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    try {
      await placeOne(root, entry, staged[i], out, touched, emptied);
      if (entry.action === 'mkdir' && entry.mode !== undefined && out.restored.at(-1) === entry.path) folderModes.push({ path: entry.path, mode: entry.mode });
    } catch (err) {
      // Past the point of no return an I/O failure on one path must not strand the others: it is
      // reported, and the recovery capture still holds what was there.
      if (staged[i]) quietUnlink(staged[i]!);
      out.skipped.push({ path: entry.path, why: `io: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
    }
  }
  // Deepest first, so a parent emptied by removing its child goes too.
  for (const dir of [...new Set(emptied)].sort((a, b) => b.split('/').length - a.split('/').length)) {
    try {
      rmdirSync(join(root, dir));
      touched.add(dirname(join(root, dir)));
    } catch {
      // not empty (someone's files live there) or already gone: left alone
    }
  }
  // Folder modes last, deepest first: a folder made read-only is so once what goes into it is placed.
  for (const { path, mode } of folderModes.sort((a, b) => b.path.split('/').length - a.path.split('/').length)) {
    try {
      await setFolderMode(root, path, mode);
    } catch (err) {
      out.skipped.push({ path, why: `io: ${(err as NodeJS.ErrnoException).code ?? String(err)} (folder mode)` });
    }
  }
  // A touched folder that a later entry removed or replaced (by a file or a symlink) is not one any
  // more: its parent, touched by that change, is what must be durable; never open through a symlink.
  // All at once (bounded): the file system folds concurrent fsyncs into shared journal commits.
  await mapLimit([...touched], DIR_FLUSH_PARALLELISM, async (dir) => {
    const rel = relative(root, dir);
    if (rel === '' || (await checkParentChain(root, `${rel}/x`)).ok) await fsyncDir(dir);
  });
  return out;
}

async function placeOne(
  root: string,
  entry: PlannedEntry,
  stagedPath: string | undefined,
  out: PlaceOutcome,
  touched: Set<string>,
  emptied: string[],
): Promise<void> {
  const abs = join(root, entry.path);
  // lstat the real parent chain right before acting: a symlink that replaced a folder since the
  // plan is never written through (a symlink that replaced the target itself is just replaced).
  // Entries run in plan order, so a file or symlink the plan replaces by a folder is gone by now.
  const chain = checkParentChainSync(root, entry.path);
  if (!chain.ok) {
    if (stagedPath) unlinkIfPresent(stagedPath);
    out.skipped.push({ path: entry.path, why: chain.why });
    return;
  }
  if (entry.action === 'delete') {
    if (chain.missing.length === 0) {
      const removed = removeEntry(abs);
      if (removed === 'not-empty') {
        // Something no capture recorded lives there (ignored or unscanned files): left alone.
        out.skipped.push({ path: entry.path, why: 'present-unrecoverable: directory not empty' });
        return;
      }
    }
    touched.add(dirname(abs));
    out.deleted.push(entry.path);
    for (let d = dirname(entry.path), n = entry.newDirs ?? 0; n > 0 && d !== '.'; d = dirname(d), n--) emptied.push(d);
    return;
  }
  if (entry.action !== 'mkdir' && !stagedPath) {
    out.skipped.push({ path: entry.path, why: 'not-staged' });
    return;
  }
  // The chain was just checked: folders are created only when some are missing.
  if (chain.missing.length > 0 && !(await ensureParents(root, entry.path, touched))) {
    if (stagedPath) unlinkIfPresent(stagedPath);
    out.skipped.push({ path: entry.path, why: WHY.parentNotDirectory });
    return;
  }
  let info;
  try {
    info = lstatSync(abs, { throwIfNoEntry: false });
  } catch {
    info = undefined;
  }
  if (entry.action === 'mkdir') {
    if (!info?.isDirectory()) {
      // A file or symlink there is in the recovery capture: replaced by the folder.
      if (info) unlinkSync(abs);
      mkdirSync(abs);
      touched.add(dirname(abs));
    }
    out.restored.push(entry.path);
    return;
  }
  if (info?.isDirectory()) {
    // The folder's recorded content was deleted before (plan order); a folder still holding
    // something no capture recorded is never removed wholesale.
    try {
      rmdirSync(abs);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      unlinkIfPresent(stagedPath!);
      out.skipped.push({ path: entry.path, why: 'present-unrecoverable: directory not empty' });
      return;
    }
  }
  renameSync(stagedPath!, abs);
  touched.add(dirname(abs));
  touched.add(dirname(stagedPath!));
  out.restored.push(entry.path);
}

/**
 * Gives the folder at `path` its recorded mode (never through a symlink: the folder itself is opened
 * O_NOFOLLOW|O_DIRECTORY and chmodded by descriptor; one its owner cannot open is checked by lstat).
 */
async function setFolderMode(root: string, path: string, mode: number): Promise<void> {
  if (!(await checkParentChain(root, path)).ok) return;
  const abs = join(root, path);
  let handle;
  try {
    handle = await open(abs, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EACCES') throw err;
    if ((await lstat(abs)).isDirectory()) await chmod(abs, mode & 0o7777);
    return;
  }
  try {
    if (((await handle.stat()).mode & 0o7777) !== (mode & 0o7777)) await handle.chmod(mode & 0o7777);
  } finally {
    await handle.close();
  }
}

/** Unlinks a file or symlink (never followed) or removes an empty folder; a missing path is fine. */
function removeEntry(abs: string): 'removed' | 'not-empty' {
  let info;
  try {
    info = lstatSync(abs, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return 'removed';
    throw err;
  }
  if (!info) return 'removed';
  try {
    if (info.isDirectory()) rmdirSync(abs);
    else unlinkSync(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'removed';
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return 'not-empty';
    throw err;
  }
  return 'removed';
}

function quietUnlink(abs: string): void {
  try {
    unlinkIfPresent(abs);
  } catch {
    // the entry is reported as failed already; this is the same I/O failure
  }
}
