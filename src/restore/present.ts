// The present state of planned paths, as a restore sees it (DESIGN §6): a path is only ever reached
// through real folders. Every ancestor beneath the root is `lstat`ed: a symlink or a file where a
// folder should be blocks the path (it is skipped, never written through). Also the small filesystem
// helpers the restore steps share: bounded parallel map, directory fsync, parent-chain checks.
import { accessSync, constants, lstatSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { readImage } from '../workspace/read-image.js';
import type { KeptContent } from './kept-content.js';
import { comparePlanOrder, WHY, type PresentImage, type RestorePlan } from './plan-restore.js';

/** Workspace-relative ancestors of `rel`, outermost first (`a/b/c` -> `a`, `a/b`). */
export function ancestorsOf(rel: string): string[] {
  // Prefixes up to each separator (no split and join per level: this runs several times per planned path).
  const out: string[] = [];
  for (let i = rel.indexOf('/'); i !== -1; i = rel.indexOf('/', i + 1)) out.push(rel.slice(0, i));
  return out;
}

export type ParentChain =
  | { ok: true; /** Ancestors that do not exist (outermost first). */ missing: string[] }
  | { ok: false; why: typeof WHY.symlinkedParent | typeof WHY.parentNotDirectory; at: string };

/**
 * Checks the parent chain of `rel` with lstat only: nothing is followed. The lstats are synchronous,
 * back to back (a thread-pool round trip per ancestor cost more than the calls themselves).
 */
export function checkParentChainSync(root: string, rel: string): ParentChain {
  const ancestors = ancestorsOf(rel);
  for (let i = 0; i < ancestors.length; i++) {
    const dir = ancestors[i]!;
    const info = lstatSync(join(root, dir), { throwIfNoEntry: false });
    if (!info) return { ok: true, missing: ancestors.slice(i) };
    if (info.isSymbolicLink()) return { ok: false, why: WHY.symlinkedParent, at: dir };
    if (!info.isDirectory()) return { ok: false, why: WHY.parentNotDirectory, at: dir };
  }
  return { ok: true, missing: [] };
}

/**
 * checkParentChainSync of each of `rels`, in one synchronous run: a folder shared by several of them
 * is lstat-ed once. Nothing of this process runs between the first lstat and the last, so each
 * answer is what checking that path alone at that moment would say (a swap by another process in
 * between is a race either way: what acts on the answers checks again right before it acts).
 */
export function checkParentChainsSync(root: string, rels: readonly string[]): ParentChain[] {
  const seen = new Map<string, Stats | undefined>();
  const look = (dir: string): Stats | undefined => {
    if (seen.has(dir)) return seen.get(dir);
    const info = lstatSync(join(root, dir), { throwIfNoEntry: false });
    seen.set(dir, info);
    return info;
  };
  return rels.map((rel) => {
    const ancestors = ancestorsOf(rel);
    for (let i = 0; i < ancestors.length; i++) {
      const dir = ancestors[i]!;
      const info = look(dir);
      if (!info) return { ok: true, missing: ancestors.slice(i) };
      if (info.isSymbolicLink()) return { ok: false, why: WHY.symlinkedParent, at: dir };
      if (!info.isDirectory()) return { ok: false, why: WHY.parentNotDirectory, at: dir };
    }
    return { ok: true, missing: [] };
  });
}

/** The same, for callers that treat it as one more asynchronous step. */
export async function checkParentChain(root: string, rel: string): Promise<ParentChain> {
  return checkParentChainSync(root, rel);
}

/**
 * Hash-only present image of one path; a blocked parent chain makes it `skipped` with the reason (and
 * where). A file's bytes go to `kept` when given (a restore's recovery capture takes them from there).
 */
export async function readPresent(root: string, rel: string, maxBytes: number, kept?: KeptContent): Promise<PresentImage> {
  let chain: ParentChain;
  try {
    chain = await checkParentChain(root, rel);
  } catch (err) {
    return unreadableChain(rel, err);
  }
  return readChecked(root, rel, chain, maxBytes, kept);
}

function unreadableChain(rel: string, err: unknown): PresentImage {
  return { path: rel, state: 'skipped', why: `unreadable: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
}

/** readPresent once `rel`'s parent chain has been checked. */
function readChecked(root: string, rel: string, chain: ParentChain, maxBytes: number, kept?: KeptContent): Promise<PresentImage> | PresentImage {
  if (!chain.ok) return { path: rel, state: 'skipped', why: chain.why, at: chain.at };
  if (chain.missing.length > 0) return { path: rel, state: 'absent' };
  return readImage(join(root, rel), rel, { maxBytes, onContent: kept?.keeper(rel) });
}

/** Paths whose parent chains are checked in one run before their reads (readPresentImages). */
const PRESENT_SLICE = 32;

/**
 * readPresent of each of `paths`, 16 reads in flight. The chains of a slice of 32 paths are checked
 * in one synchronous run (checkParentChainsSync: a folder shared by several is lstat-ed once, not once
 * per path), right before that slice's reads; two slices are read at once. A folder swapped for a
 * symlink after its check can still be read through, as with one check per path right before each
 * read (a thread-pool round trip lay between them too): what is read here only plans, and every act
 * that follows checks again (the recovery capture's chains, its kept bytes used only for the same
 * inode, placing's chain before each act).
 */
export async function readPresentImages(root: string, paths: readonly string[], maxBytes: number, kept?: KeptContent): Promise<Map<string, PresentImage>> {
  const slices: string[][] = [];
  for (let i = 0; i < paths.length; i += PRESENT_SLICE) slices.push(paths.slice(i, i + PRESENT_SLICE));
  const read = await mapLimit(slices, 2, async (slice) => {
    let chains: ParentChain[] | undefined;
    try {
      chains = checkParentChainsSync(root, slice);
    } catch {
      // A folder that cannot be looked at (EACCES above it): each path on its own, as readPresent does.
    }
    return mapLimit(slice, 8, async (rel, k) => (chains ? readChecked(root, rel, chains[k]!, maxBytes, kept) : readPresent(root, rel, maxBytes, kept)));
  });
  return new Map(read.flat().map((i) => [i.path, i]));
}

/** Maps with at most `limit` calls in flight; results in input order; the first failure rejects. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (rejected) throw rejected.reason;
  return out;
}

/**
 * Makes a folder's entries durable (renames, unlinks, creations inside it). Missing folders are fine
 * (a restore may remove a folder it touched, or put a file in its place: its parent is fsynced too),
 * and so is a folder its owner may write in but not read (mode 0311, a drop box): it cannot be opened
 * to be flushed, and failing there, past a restore's point of no return, failed its recovery the same
 * way on every later open of the session (fsedge probe, 2026-12-06).
 */
export async function fsyncDir(abs: string): Promise<void> {
  let handle;
  try {
    handle = await open(abs, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') return;
    throw err;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Folders above planned entries that their owner may not write in or search now (a folder read-only at
 * the tag and now, whose files changed in between: `chmod 755; edit; chmod 555` in one step) and that
 * the plan does not give a mode: each gets an entry of its own that pins the mode it has, so placing
 * lends it the bits it lacks first and gives this mode back last — in recovery too (the plan is
 * journaled), and the recovery capture records it (its present image joins `present`). Only real
 * folders through real folders; the plan's order is kept.
 */
export async function pinLockedFolders(root: string, plan: RestorePlan, present: Map<string, PresentImage>, maxBytes: number): Promise<void> {
  const planned = new Set(plan.entries.map((e) => e.path));
  const folders = new Set<string>();
  for (const e of plan.entries) for (const a of ancestorsOf(e.path)) if (!planned.has(a)) folders.add(a);
  let pinned = false;
  for (const dir of folders) {
    const info = lstatSync(join(root, dir), { throwIfNoEntry: false });
    if (!info?.isDirectory() || (info.mode & 0o300) === 0o300 || canPlaceIn(join(root, dir))) continue;
    const image = await readPresent(root, dir, maxBytes);
    if (image.state !== 'dir' || image.mode === undefined) continue;
    present.set(dir, image);
    plan.entries.push({ path: dir, action: 'mkdir', mode: image.mode & 0o7777 });
    plan.unchanged = plan.unchanged.filter((p) => p !== dir);
    pinned = true;
  }
  if (pinned) plan.entries.sort(comparePlanOrder);
}

/** Whether this process may create and remove names in `abs` (root may in a 555 folder: nothing to pin). */
function canPlaceIn(abs: string): boolean {
  try {
    accessSync(abs, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
