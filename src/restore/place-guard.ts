// What a restore's recovery capture read at each path it is about to replace or remove, to tell a
// write made meanwhile (the user's, while the restore runs: it has no recovery image) from the file
// the capture recorded. A file is the same while its inode, size and mtime are (not its ctime: the
// restore's own second name for a file it replaces changes that of every hard link of it); nothing
// there when read is the same while nothing is there. A file read before its lstat could change
// unseen, so the lstat comes first: a change after it is a difference, never missed.
import type { Stats } from 'node:fs';

export interface SeenFile {
  ino: number;
  size: number;
  mtimeMs: number;
}

/** Why a path changed since the recovery capture read it is left as it is. */
export const CHANGED_DURING_RESTORE = 'changed-during-restore';

/** What to remember of an lstat taken before the read: a file's identity, null for nothing there, undefined for anything else (not guarded). */
export function seenOf(info: Stats | undefined): SeenFile | null | undefined {
  if (info === undefined) return null;
  return info.isFile() ? { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs } : undefined;
}

/** True when `now` (an lstat of the path right before acting) is no longer what was seen. */
export function changedSinceSeen(now: Stats | undefined, seen: SeenFile | null): boolean {
  if (seen === null) return now !== undefined;
  return now === undefined || !now.isFile() || now.ino !== seen.ino || now.size !== seen.size || now.mtimeMs !== seen.mtimeMs;
}
