// Placing a restore (DESIGN §4 step 4), after the point of no return, in plan order (deletes deepest
// first, then folders, files and symlinks shallowest first): unlink deleted paths and remove emptied
// folders, create folders (replacing a file or symlink), write each file or link to a staging name
// beside its target and rename it over the target at once (replacing an emptied folder), then fsync
// every written file and touched folder. Idempotent, so recovery after a crash runs exactly this
// again from the store: an already-placed entry is simply placed again, an already-absent path is fine.
// The checks and every act are synchronous, in plan order, except the unlink of a deleted file moved
// aside in its own folder (and of a replaced file's second name, made before the rename over it) and
// the fsyncs: they run on the thread pool, several at once (DESIGN §10 "Restore speed"), because they
// wait on the file system's journal and those waits overlap.
import { type Stats, chmodSync, closeSync, constants, fchmodSync, linkSync, lstatSync, mkdirSync, openSync, renameSync, rmdirSync, symlinkSync, unlinkSync, writeSync } from 'node:fs';
import { chmod, lstat, open, unlink } from 'node:fs/promises';
import { CkptError, isCkptError } from '../errors.js';
import { dirname, join, relative } from 'node:path';
import type { PlannedEntry, SkippedPath } from './plan-restore.js';
import { WHY } from './plan-restore.js';
import { ancestorsOf, checkParentChain, checkParentChainSync, fsyncDir, mapLimit } from './present.js';
import type { ContentSource } from './plan-content.js';
import { CHANGED_DURING_RESTORE, changedSinceSeen, type SeenFile } from './place-guard.js';
import { lstatQuiet } from '../workspace/changed-at.js';
import { createExclusive, ensureParents, flushAndClose, stagePath, unlinkIfPresent } from './stage.js';
import { syncFileSystem, worthSyncingFileSystem } from './sync-fs.js';

/** Touched folders fsynced at once (each holds a descriptor while its fsync is in flight). */
const DIR_FLUSH_PARALLELISM = 64;
/** Unlinks of deleted files in flight on the thread pool at once. */
const UNLINK_PARALLELISM = 16;
/** Written files whose fsyncs are issued together, while the next are written (bounds the open descriptors). */
const FLUSH_GROUP = 256;

export interface PlaceOutcome {
  restored: string[];
  deleted: string[];
  /** Entries whose parent chain became a symlink/file since the plan: not touched. */
  skipped: SkippedPath[];
}

/**
 * Places `entries` of restore `id`, taking each write's bytes from `content` (a failure to get them
 * skips that entry, as an I/O failure does). `onProgress` counts the entries placed.
 */
export async function placeEntries(
  root: string,
  id: string,
  entries: readonly PlannedEntry[],
  content: ContentSource,
  onProgress?: (progress: { phase: string; done: number; total: number }) => void,
  /** What the recovery capture read at each path (place-guard.ts): a path changed since is left as it is. */
  seen?: ReadonlyMap<string, SeenFile | null>,
): Promise<PlaceOutcome> {
  // Outcomes by entry, reported in plan order whatever order the unlinks and fsyncs finish in.
  const outcomes: Outcome[] = new Array<Outcome>(entries.length);
  const touched = new Set<string>();
  const emptied: string[] = [];
  const folderModes: { path: string; mode: number }[] = [];
  const unlinks = new Unlinks();
  /** Past the point of no return a failure on one path must not strand the others: it is reported,
   * and the recovery capture still holds what was there. */
  const failed = (i: number, err: unknown): Outcome => ({ skipped: { path: entries[i]!.path, why: whyFailed(err) } });
  const flushes = new Flushes((i, err) => (outcomes[i] = failed(i, err)));
  // Many files written: their descriptors close unflushed, and one flush of the file system follows.
  const writes = entries.filter((e) => e.action === 'write');
  const atOnce = worthSyncingFileSystem(writes.length, writes.reduce((n, e) => n + (e.bytes ?? 0), 0));
  /** Entries written with their fsync owed to the flush at once (or, should it fail, to their own). */
  const unflushed: number[] = [];
  // Folders the plan gives a mode get the write and search permission it needs to place in them first
  // (their deletes come before them); the planned mode, set last, takes back what it does not hold.
  const parents = new Set(entries.flatMap((e) => ancestorsOf(e.path)));
  for (const entry of entries) {
    if (entry.action === 'mkdir' && entry.mode !== undefined) openForPlacing(root, entry.path, parents.has(entry.path) ? 0o300 : entry.mode, seen?.get(entry.path));
  }
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    // An entry beneath a deleted path whose unlink is still in flight waits for it, and so does an
    // entry that may remove a folder such an unlink is still emptying: each sees what the earlier
    // entries did, as in sequence.
    if (unlinks.pendingAround(entry.path)) await unlinks.drain();
    try {
      // The bytes first: nothing waits between an entry's checks and its acts.
      const data = entry.action === 'write' ? await content(i) : undefined;
      const placed = placeOne(root, entry, data, stagePath(root, entry.path, id, i), touched, emptied, () => stagePath(root, entry.path, id, `d${i}`), seen?.get(entry.path));
      if (placed instanceof Promise) {
        await unlinks.add(
          entry.path,
          placed.then(
            (o) => void (outcomes[i] = o),
            (err: unknown) => void (outcomes[i] = failed(i, err)),
          ),
        );
      } else if ('fd' in placed) {
        outcomes[i] = { restored: entry.path };
        // A failed unlink of the replaced file's second name puts the old file back: reported, as a failed write is.
        if (placed.aside) await unlinks.add(entry.path, placed.aside.catch((err: unknown) => void (outcomes[i] = failed(i, err))));
        if (placed.fd !== undefined && atOnce) {
          closeSync(placed.fd);
          unflushed.push(i);
        } else if (placed.fd !== undefined) await flushes.add(i, placed.fd);
      } else {
        outcomes[i] = placed;
        if (entry.action === 'mkdir' && entry.mode !== undefined && 'restored' in placed) folderModes.push({ path: entry.path, mode: entry.mode });
      }
    } catch (err) {
      outcomes[i] = failed(i, err);
    }
    onProgress?.({ phase: 'writing', done: i + 1, total: entries.length });
  }
  await unlinks.drain();
  await flushes.drain();
  // Deepest first, so a parent emptied by removing its child goes too.
  for (const dir of [...new Set(emptied)].sort((a, b) => b.split('/').length - a.split('/').length)) {
    try {
      rmdirSync(join(root, dir));
      touched.add(dirname(join(root, dir)));
    } catch {
      // not empty (someone's files live there) or already gone: left alone
    }
  }
  // A touched folder that a later entry removed or replaced (by a file or a symlink) is not one any
  // more: its parent, touched by that change, is what must be durable; never open through a symlink.
  // Before the folder modes: a mode without read permission for the owner (a 0311 drop box) would
  // make the folder impossible to open for its fsync (setFolderMode flushes the mode change itself).
  // All at once (bounded): the file system folds concurrent fsyncs into shared journal commits.
  if (!(atOnce && (await flushedAtOnce(root, touched)))) {
    await mapLimit(unflushed, FLUSH_GROUP, (i) => fsyncWritten(root, entries[i]!.path).catch((err: unknown) => void (outcomes[i] = failed(i, err))));
    await mapLimit([...touched], DIR_FLUSH_PARALLELISM, async (dir) => {
      const rel = relative(root, dir);
      if (rel === '' || (await checkParentChain(root, `${rel}/x`)).ok) await fsyncDir(dir);
    });
  }
  const out: PlaceOutcome = { restored: [], deleted: [], skipped: [] };
  for (const o of outcomes) {
    if ('restored' in o) out.restored.push(o.restored);
    else if ('deleted' in o) out.deleted.push(o.deleted);
    else out.skipped.push(o.skipped);
  }
  // Folder modes last, deepest first: a folder made read-only is so once what goes into it is placed.
  for (const { path, mode } of folderModes.sort((a, b) => b.path.split('/').length - a.path.split('/').length)) {
    try {
      await setFolderMode(root, path, mode);
    } catch (err) {
      out.skipped.push({ path, why: `${whyFailed(err)} (folder mode)` });
    }
  }
  return out;
}

type Outcome = { restored: string } | { deleted: string } | { skipped: SkippedPath };

/** Why an entry was skipped: `io: <errno>`, or the store's error code (a blob that cannot be read any more). */
function whyFailed(err: unknown): string {
  return isCkptError(err) ? err.code.toLowerCase().replace(/_/g, '-') : `io: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
}

/** Unlinks of deleted files in flight (bounded), by the deleted path. */
class Unlinks {
  private readonly inFlight = new Map<string, Promise<void>>();

  /** Adds one (it never rejects); waits while the bound is reached. */
  async add(path: string, done: Promise<void>): Promise<void> {
    this.inFlight.set(path, done);
    void done.then(() => this.inFlight.delete(path));
    while (this.inFlight.size >= UNLINK_PARALLELISM) await Promise.race(this.inFlight.values());
  }

  /** True when an unlink of an ancestor of `path`, or of a path inside it, is still in flight. */
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
 * The fsyncs of written files, issued a group at a time while the next files are written (renamed
 * into place first: the rename over an existing file starts its write-back, so the fsync that
 * follows finds little left to do). A failed fsync reports its entry through `onFail`.
 */
class Flushes {
  private group: { i: number; fd: number }[] = [];
  private readonly inFlight: Promise<void>[] = [];

  constructor(private readonly onFail: (i: number, err: unknown) => void) {}

  async add(i: number, fd: number): Promise<void> {
    this.group.push({ i, fd });
    if (this.group.length < FLUSH_GROUP) return;
    this.issue();
    // At most two groups open at once: the descriptors stay bounded.
    if (this.inFlight.length > 1) await this.inFlight.shift();
  }

  async drain(): Promise<void> {
    this.issue();
    await Promise.all(this.inFlight.splice(0));
  }

  private issue(): void {
    const group = this.group;
    this.group = [];
    if (group.length === 0) return;
    this.inFlight.push(
      Promise.all(group.map(({ i, fd }) => flushAndClose(fd).catch((err: unknown) => this.onFail(i, err)))).then(() => {}),
    );
  }
}

/**
 * Places one entry. Everything runs synchronously except the unlink of a deleted file (first renamed,
 * synchronously, to a staging name beside it: `asideName`), returned as a promise (run on the
 * thread pool): it cannot be turned outside the workspace by a folder swapped for a symlink after
 * the check, since both names resolve through the same folder, so a swapped folder holds no such
 * file (ENOENT) unless whoever can write there put one. A written file is returned with its open
 * descriptor (its fsync is owed); a failure before its rename leaves the target as it was.
 */
function placeOne(
  root: string,
  entry: PlannedEntry,
  data: Buffer | undefined,
  stagedPath: string,
  touched: Set<string>,
  emptied: string[],
  asideName: () => string,
  seen?: SeenFile | null,
): Outcome | Written | Promise<Outcome> {
  const abs = join(root, entry.path);
  // lstat the real parent chain right before acting: a symlink that replaced a folder since the
  // plan is never written through (a symlink that replaced the target itself is just replaced).
  // Entries run in plan order, so a file or symlink the plan replaces by a folder is gone by now.
  const chain = checkParentChainSync(root, entry.path);
  if (!chain.ok) return { skipped: { path: entry.path, why: chain.why } };
  // Written since the recovery capture read it (the user, while this restore ran): it has no recovery
  // image, so it is left as it is and reported (a probe saw such a write overwritten). Checked on the
  // lstat each act takes right before it.
  const changedMeanwhile = (now: Stats | undefined) => seen !== undefined && changedSinceSeen(now, seen);
  const leftAsWritten: Outcome = { skipped: { path: entry.path, why: CHANGED_DURING_RESTORE } };
  if (entry.action === 'delete') {
    if (changedMeanwhile(lstatQuiet(abs))) return leftAsWritten;
    let removed: ReturnType<typeof removeEntry> = 'removed';
    if (chain.missing.length === 0) {
      removed = removeEntry(abs, asideName);
      if (removed === 'not-empty') return notEmpty(entry.path);
    }
    touched.add(dirname(abs));
    for (let d = dirname(entry.path), n = entry.newDirs ?? 0; n > 0 && d !== '.'; d = dirname(d), n--) emptied.push(d);
    return removed === 'removed' ? { deleted: entry.path } : removed.then(() => ({ deleted: entry.path }));
  }
  // The chain was just checked: folders are created only when some are missing.
  if (chain.missing.length > 0 && !ensureParents(root, entry.path, touched)) return { skipped: { path: entry.path, why: WHY.parentNotDirectory } };
  if (entry.action === 'mkdir') {
    const info = lstatSync(abs, { throwIfNoEntry: false });
    if (changedMeanwhile(info)) return leftAsWritten;
    if (!info?.isDirectory()) {
      // A file or symlink there is in the recovery capture: replaced by the folder.
      if (info) unlinkSync(abs);
      mkdirSync(abs);
      touched.add(dirname(abs));
    }
    return { restored: entry.path };
  }
  const fd = writeStaged(entry, data, stagedPath);
  let aside: string | undefined;
  try {
    const present = lstatSync(abs, { throwIfNoEntry: false });
    let kept: Outcome | undefined;
    if (changedMeanwhile(present)) kept = leftAsWritten;
    else if (present?.isDirectory() && !removeEmptiedFolder(abs)) kept = notEmpty(entry.path);
    if (kept) {
      if (fd !== undefined) closeSync(fd);
      unlinkIfPresent(stagedPath);
      return kept;
    }
    if (present?.isFile()) aside = linkAside(abs, asideName());
    renameSync(stagedPath, abs);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    quietUnlink(stagedPath);
    if (aside) quietUnlink(aside);
    throw err;
  }
  touched.add(dirname(abs));
  return { fd, aside: aside === undefined ? undefined : unlinkOrPutBack(aside, abs) };
}

/**
 * One flush of the workspace's file system makes every write, rename, unlink and folder of this
 * restore durable — when they all are on it: a touched folder on another file system (something
 * mounted inside the workspace) is not flushed by it, and neither is anything when the flush fails.
 * False then: the caller flushes each file and folder.
 */
async function flushedAtOnce(root: string, touched: ReadonlySet<string>): Promise<boolean> {
  try {
    const dev = lstatSync(root).dev;
    for (const dir of touched) if ((lstatQuiet(dir)?.dev ?? dev) !== dev) return false;
  } catch {
    return false;
  }
  return syncFileSystem(root);
}

/** fsyncs a file this restore wrote, found again by its path (its descriptor was closed unflushed). */
async function fsyncWritten(root: string, rel: string): Promise<void> {
  // Not through a symlink that replaced a folder since: a file that is not ours needs nothing of us.
  if (!checkParentChainSync(root, rel).ok) return;
  let handle;
  try {
    // O_NONBLOCK: a FIFO swapped in must not block the open (it is not ours: the type check below).
    handle = await open(join(root, rel), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP') return;
    throw err;
  }
  try {
    if (!(await handle.stat()).isFile()) return;
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Something no capture recorded lives in the folder (ignored or unscanned files): left alone. */
function notEmpty(path: string): Outcome {
  return { skipped: { path, why: 'present-unrecoverable: directory not empty' } };
}

/** A written entry: its staged file's descriptor (its fsync is owed), and the unlink of the file it replaced. */
interface Written {
  fd: number | undefined;
  aside: Promise<void> | undefined;
}

/**
 * Gives the file a rename is about to replace a second name beside it (its staging name `d<i>`), so
 * that the rename over it does not free its inode — a wait on the file system's journal, ~0.15 ms a
 * file here, in sequence — and the unlink that does runs on the thread pool, several at once, like a
 * deleted file's. The rename still replaces the target atomically. Undefined when the file system
 * refuses the link (the rename then frees the inode itself, as before).
 */
function linkAside(abs: string, aside: string): string | undefined {
  try {
    linkSync(abs, aside);
    return aside;
  } catch {
    return undefined;
  }
}

/**
 * Writes a file (exact mode, whatever the umask; a read-only mode is set after the bytes) or a
 * symlink at its staging name; returns the file's descriptor, still open for its fsync. A leftover
 * of the same name (an interrupted run of this restore) is replaced.
 */
function writeStaged(entry: PlannedEntry, data: Buffer | undefined, stagedPath: string): number | undefined {
  if (entry.action === 'symlink') {
    if (typeof entry.target !== 'string') throw new CkptError('INTERNAL', `plan entry ${entry.path} has no link target`);
    unlinkIfPresent(stagedPath);
    // A symlink is all metadata: its folder's fsync makes it durable.
    symlinkSync(entry.target, stagedPath);
    return undefined;
  }
  if (!data) throw new CkptError('INTERNAL', `plan entry ${entry.path} has no content`);
  const fd = createExclusive(stagedPath);
  try {
    for (let off = 0; off < data.length; ) off += writeSync(fd, data, off, data.length - off);
    fchmodSync(fd, (entry.mode ?? 0o644) & 0o7777);
  } catch (err) {
    closeSync(fd);
    quietUnlink(stagedPath);
    throw err;
  }
  return fd;
}

/**
 * Removes the folder a file or symlink replaces. Its recorded content was deleted before (plan
 * order); false when it still holds something no capture recorded: never removed wholesale.
 */
function removeEmptiedFolder(abs: string): boolean {
  try {
    rmdirSync(abs);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    return false;
  }
}

/**
 * A folder this restore gives a mode gets the owner write and search bits of `wanted` that it lacks
 * now before anything is placed in it — all of them when the plan places entries beneath it (a folder
 * read-only at the tag whose files the agent changed), else those its recorded mode holds (the agent's
 * `chmod -w`; fsedge probe, 2026-12-06: the files inside were skipped `io: EACCES`). Its planned mode is
 * set last, as for every folder (setFolderMode), so it ends exactly as recorded, also when recovery
 * finishes the restore. Never through a symlink (parent chain checked, the folder opened
 * O_NOFOLLOW|O_DIRECTORY; one its owner cannot read is re-checked by lstat), never a folder changed
 * since the recovery capture looked (it is left as it is). A failure here is no failure of the
 * restore: the entries inside report their own.
 */
function openForPlacing(root: string, path: string, wanted: number, seen: SeenFile | null | undefined): void {
  try {
    const chain = checkParentChainSync(root, path);
    if (!chain.ok || chain.missing.length > 0) return;
    const abs = join(root, path);
    const info = lstatSync(abs, { throwIfNoEntry: false });
    if (!info?.isDirectory() || (seen !== undefined && changedSinceSeen(info, seen))) return;
    const missing = wanted & 0o300 & ~info.mode;
    if (missing === 0) return;
    const mode = (info.mode | missing) & 0o7777;
    let fd;
    try {
      fd = openSync(abs, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EACCES') throw err;
      if (lstatSync(abs).isDirectory()) chmodSync(abs, mode);
      return;
    }
    try {
      fchmodSync(fd, mode);
    } finally {
      closeSync(fd);
    }
  } catch {
    // left as it is: the entries inside report what they could not do
  }
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
    if (((await handle.stat()).mode & 0o7777) !== (mode & 0o7777)) {
      await handle.chmod(mode & 0o7777);
      await handle.sync();
    }
  } finally {
    await handle.close();
  }
}

/**
 * Removes an empty folder, or a file or symlink (never followed); a missing path is fine. A file or
 * symlink is renamed to `asideName()` in its own folder right away and unlinked from there on the
 * thread pool (the promise; a failure rejects): freeing a file's blocks waits on the file system's
 * journal, and those waits overlap (87 deletes: 65–170 ms one after the other, 18–28 ms this way).
 * Its name is a staging name of this restore: scans ignore it, and recovery removes a leftover.
 */
function removeEntry(abs: string, asideName: () => string): 'removed' | 'not-empty' | Promise<void> {
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
    else renameSync(abs, (moved = asideName()));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'removed';
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return 'not-empty';
    throw err;
  }
  if (moved === undefined) return 'removed';
  return unlinkOrPutBack(moved, abs);
}

/**
 * Unlinks `aside` on the thread pool; a failure puts the file back at `abs` (the path is reported
 * skipped, in its before-state) and rejects: no staging name is left behind a committed restore.
 */
function unlinkOrPutBack(aside: string, abs: string): Promise<void> {
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
