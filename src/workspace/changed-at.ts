// When a path last changed, as the file system says: a capture's and a restore's look judge "made
// since the turn / the tag" by it. A file's inode ctime (it cannot be set back); an absent path left
// no inode to ask, so its nearest remaining folder's (a removal changes it). A folder renamed or
// replaced by hand moves its files without touching their inodes: only the folders' own ctimes tell. An lstat here is quiet:
// undefined when nothing is there — the name is missing, or a folder on its way is now a file
// (ENOTDIR: a folder replaced by a file by hand).
import { lstatSync, type Stats } from 'node:fs';
import { join } from 'node:path';

/** How far a file's ctime may lag the clock that stamps events (the scan's racy window: coarse file clocks). */
export const CLOCK_SLACK_MS = 2_000;

export function lstatQuiet(abs: string): Stats | undefined {
  try {
    return lstatSync(abs, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
}

/**
 * `lstatQuiet`, and `'unknown'` for a path beneath a folder its owner may not search (`chmod -x`,
 * EACCES): nothing can be said of it, so a look takes it as changed and its read reports it skipped
 * (a restore failed IO on it: fsedge probe, 2026-12-06).
 */
function lstatKnown(abs: string): Stats | undefined | 'unknown' {
  try {
    return lstatQuiet(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EACCES') return 'unknown';
    throw err;
  }
}

/**
 * The folders above `rel` as they are now, root first, down to the first that is no folder: each one's
 * lstat is asked beneath folders only, so a folder replaced by a symlink (`rm -rf d; ln -s other d`)
 * is not followed — `d/x` is then not the path ckpt knew, whatever `other/x` holds. `'unknown'` ends
 * the list where a folder cannot be searched (EACCES).
 */
export function folderChain(root: string, rel: string): { dir: string; st: Stats | undefined | 'unknown' }[] {
  const out: { dir: string; st: Stats | undefined | 'unknown' }[] = [];
  const parts = rel.split('/').slice(0, -1);
  for (let i = 0; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    const st = lstatKnown(join(root, dir));
    out.push({ dir, st });
    if (st === 'unknown' || !st?.isDirectory()) break;
  }
  return out;
}

/** The ctime of `rel` (workspace-relative), or of its nearest existing folder when it is absent; Infinity when none answers or it cannot be asked. */
export function changedAt(root: string, rel: string): number {
  const chain = folderChain(root, rel);
  const last = chain.at(-1)!;
  if (last.st === 'unknown') return Infinity;
  // A folder on the way that is gone or no folder now: the change is there (its own ctime, else its parent's).
  if (last.st === undefined) return chain.length > 1 ? (chain.at(-2)!.st as Stats).ctimeMs : Infinity;
  if (!last.st.isDirectory()) return last.st.ctimeMs;
  const st = lstatKnown(join(root, rel));
  if (st === 'unknown') return Infinity;
  return st !== undefined ? st.ctimeMs : last.st.ctimeMs;
}

/**
 * The latest ctime of the folders above `rel`, the workspace root left out (0 for a path in the root):
 * a folder moved or replaced since carries files whose own ctimes are older. The root is left out
 * because it changes with any top-level entry, and a look is not for that.
 */
export function foldersChangedAt(root: string, rel: string): number {
  let latest = 0;
  for (const f of foldersAbove(root, rel)) if (f.dir !== '') latest = Math.max(latest, f.ctimeMs);
  return latest;
}

/**
 * The folders above `rel` that exist as folders, nearest first, with their ctimes ('' is the root),
 * down to the first that is gone or no folder (nothing beneath a symlink is followed); one that cannot
 * be asked (EACCES) ends it.
 */
export function foldersAbove(root: string, rel: string): { dir: string; ctimeMs: number }[] {
  const out: { dir: string; ctimeMs: number }[] = [];
  for (const { dir, st } of folderChain(root, rel)) if (st !== 'unknown' && st?.isDirectory()) out.push({ dir, ctimeMs: st.ctimeMs });
  return out.reverse();
}
