// Placing a staged restore (DESIGN §4 step 4), after the point of no return, in plan order (deletes
// deepest first, then folders, files and symlinks shallowest first): unlink deleted paths and remove
// emptied folders, create folders (replacing a file or symlink), rename each staged file or link over
// its target (replacing an emptied folder), and fsync every touched folder. Idempotent, so recovery after a crash runs
// exactly this again: an already-renamed entry is simply re-placed, an already-absent path is fine.
// The checks and every other act are synchronous, in plan order. A rename whose staged file lies in
// the target's own folder, and the unlink of a deleted file moved aside in its own folder, run on the
// thread pool, several at once (DESIGN §10 "Restore speed"): freeing a replaced or deleted file waits
// on the file system's journal, and those waits overlap.
import { constants, lstatSync, mkdirSync, renameSync, rmdirSync, unlinkSync } from 'node:fs';
import { chmod, lstat, open, rename, unlink } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { PlannedEntry, SkippedPath } from './plan-restore.js';
import { WHY } from './plan-restore.js';
import { ancestorsOf, checkParentChain, checkParentChainSync, fsyncDir, mapLimit } from './present.js';
import { ensureParents, stagePath, unlinkIfPresent } from './stage.js';

/** Touched folders fsynced at once (each holds a descriptor while its fsync is in flight). */
const DIR_FLUSH_PARALLELISM = 64;
/** Renames (and unlinks of deleted files) in flight on the thread pool at once. */
const RENAME_PARALLELISM = 16;

export interface PlaceOutcome {
  restored: string[];
  deleted: string[];
  /** Entries whose parent chain became a symlink/file since the plan: not touched. */
  skipped: SkippedPath[];
}

/**
 * Places `entries` of restore `id`; `staged[i]` is the staging path of entry i (undefined for
 * deletes, or when the entry could not be staged — it is then reported as skipped).
 */
export async function placeEntries(root: string, id: string, entries: readonly PlannedEntry[], staged: readonly (string | undefined)[]): Promise<PlaceOutcome> {
  // Outcomes by entry, reported in plan order whatever order the renames finish in.
  const outcomes: Outcome[] = new Array<Outcome>(entries.length);
  const touched = new Set<string>();
  const emptied: string[] = [];
  const folderModes: { path: string; mode: number }[] = [];
  const renames = new Renames();
  /** Past the point of no return an I/O failure on one path must not strand the others: it is
   * reported, and the recovery capture still holds what was there. */
  const failed = (i: number, err: unknown): Outcome => {
    if (staged[i]) quietUnlink(staged[i]!);
    return { skipped: { path: entries[i]!.path, why: `io: ${(err as NodeJS.ErrnoException).code ?? String(err)}` } };
  };
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    // An entry beneath a path whose rename is still in flight waits for it: it must see what the
    // earlier entries placed (a file there blocks it, as it would have in sequence). So does an
    // entry that may remove a folder a deleted file's unlink is still emptying.
    if (renames.pendingAround(entry.path)) await renames.drain();
    try {
      const placed = placeOne(root, entry, staged[i], touched, emptied, () => stagePath(root, entry.path, id, `d${i}`));
      if (placed instanceof Promise) {
        await renames.add(
          entry.path,
          placed.then(
            (o) => void (outcomes[i] = o),
            (err: unknown) => void (outcomes[i] = failed(i, err)),
          ),
        );
        continue;
      }
      outcomes[i] = placed;
      if (entry.action === 'mkdir' && entry.mode !== undefined && 'restored' in placed) folderModes.push({ path: entry.path, mode: entry.mode });
    } catch (err) {
      outcomes[i] = failed(i, err);
    }
  }
  await renames.drain();
  const out: PlaceOutcome = { restored: [], deleted: [], skipped: [] };
  for (const o of outcomes) {
    if ('restored' in o) out.restored.push(o.restored);
    else if ('deleted' in o) out.deleted.push(o.deleted);
    else out.skipped.push(o.skipped);
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

type Outcome = { restored: string } | { deleted: string } | { skipped: SkippedPath };

/** Renames and unlinks in flight (bounded), by target path (a deleted file's: its temporary name). */
class Renames {
  private readonly inFlight = new Map<string, Promise<void>>();

  /** Adds one (it never rejects); waits while the bound is reached. */
  async add(path: string, done: Promise<void>): Promise<void> {
    this.inFlight.set(path, done);
    void done.then(() => this.inFlight.delete(path));
    while (this.inFlight.size >= RENAME_PARALLELISM) await Promise.race(this.inFlight.values());
  }

  /** True when a rename or unlink of an ancestor of `path`, or of a path inside it, is still in flight. */
  pendingAround(path: string): boolean {
    if (this.inFlight.size === 0) return false;
    const inside = `${path}/`;
    for (const p of this.inFlight.keys()) if (p.startsWith(inside)) return true;
    return ancestorsOf(path).some((a) => this.inFlight.has(a));
  }

  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight.values());
  }
}

/**
 * Places one entry. Everything runs synchronously except a rename whose staged file lies in the
 * target's own folder and the unlink of a deleted file (first renamed, synchronously, to a staging
 * name beside it: `deletedName`): they are returned as a promise (run on the thread pool). Neither
 * can be turned outside the workspace by a folder swapped for a symlink after the check: both names
 * resolve through the same folder, so a swapped folder holds no such file (ENOENT) unless whoever
 * can write there put one. A rename into a folder made here (staged higher up) stays synchronous,
 * right after its checks.
 */
function placeOne(
  root: string,
  entry: PlannedEntry,
  stagedPath: string | undefined,
  touched: Set<string>,
  emptied: string[],
  deletedName: () => string,
): Outcome | Promise<Outcome> {
  const abs = join(root, entry.path);
  // lstat the real parent chain right before acting: a symlink that replaced a folder since the
  // plan is never written through (a symlink that replaced the target itself is just replaced).
  // Entries run in plan order, so a file or symlink the plan replaces by a folder is gone by now.
  const chain = checkParentChainSync(root, entry.path);
  if (!chain.ok) {
    if (stagedPath) unlinkIfPresent(stagedPath);
    return { skipped: { path: entry.path, why: chain.why } };
  }
  if (entry.action === 'delete') {
    let removed: ReturnType<typeof removeEntry> = 'removed';
    if (chain.missing.length === 0) {
      removed = removeEntry(abs, deletedName);
      if (removed === 'not-empty') {
        // Something no capture recorded lives there (ignored or unscanned files): left alone.
        return { skipped: { path: entry.path, why: 'present-unrecoverable: directory not empty' } };
      }
    }
    touched.add(dirname(abs));
    for (let d = dirname(entry.path), n = entry.newDirs ?? 0; n > 0 && d !== '.'; d = dirname(d), n--) emptied.push(d);
    return removed === 'removed' ? { deleted: entry.path } : removed.then(() => ({ deleted: entry.path }));
  }
  if (entry.action !== 'mkdir' && !stagedPath) return { skipped: { path: entry.path, why: 'not-staged' } };
  // The chain was just checked: folders are created only when some are missing.
  if (chain.missing.length > 0 && !ensureParents(root, entry.path, touched)) {
    if (stagedPath) unlinkIfPresent(stagedPath);
    return { skipped: { path: entry.path, why: WHY.parentNotDirectory } };
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
    return { restored: entry.path };
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
      return { skipped: { path: entry.path, why: 'present-unrecoverable: directory not empty' } };
    }
  }
  touched.add(dirname(abs));
  touched.add(dirname(stagedPath!));
  if (chain.missing.length === 0 && dirname(stagedPath!) === dirname(abs)) return rename(stagedPath!, abs).then(() => ({ restored: entry.path }));
  renameSync(stagedPath!, abs);
  return { restored: entry.path };
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

/**
 * Removes an empty folder, or a file or symlink (never followed); a missing path is fine. A file or
 * symlink is renamed to `deletedName()` in its own folder right away and unlinked from there on the
 * thread pool (the promise; a failure rejects): freeing a file's blocks waits on the file system's
 * journal, and those waits overlap (87 deletes: 65–170 ms one after the other, 18–28 ms this way).
 * Its name is a staging name of this restore: scans ignore it, and recovery removes a leftover.
 */
function removeEntry(abs: string, deletedName: () => string): 'removed' | 'not-empty' | Promise<void> {
  let info;
  try {
    info = lstatSync(abs, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return 'removed';
    throw err;
  }
  if (!info) return 'removed';
  let moved: string | undefined;
  try {
    if (info.isDirectory()) rmdirSync(abs);
    else renameSync(abs, (moved = deletedName()));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'removed';
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return 'not-empty';
    throw err;
  }
  if (moved === undefined) return 'removed';
  const aside = moved;
  // A failed unlink puts the file back (the path is reported skipped, as it was): no staging name is
  // left behind a committed restore.
  return unlink(aside).catch((err: unknown) => {
    try {
      renameSync(aside, abs);
    } catch {
      // the same I/O failure: the path is reported, recovery's leftover sweep cannot run any more
    }
    throw err;
  });
}

function quietUnlink(abs: string): void {
  try {
    unlinkIfPresent(abs);
  } catch {
    // the entry is reported as failed already; this is the same I/O failure
  }
}
