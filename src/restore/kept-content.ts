// Present content kept from a restore's plan for its recovery capture (DESIGN §10 "Restore speed"):
// planning reads every candidate file to hash it, and the recovery capture needs the bytes of the
// planned ones — read once, not twice. The bytes are kept (up to a byte budget) with the lstat they
// were read after, and used only while an lstat right before the capture still says the same (inode,
// size, mode, mtime, ctime) and the file had not been changed just before it was read: a change in
// the same timestamp tick as the one before it could leave every field equal. Anything else is read
// again, as before.
import { lstatSync, type Stats } from 'node:fs';

/** Bytes kept at most (beyond it, files are read again by the capture). */
const KEEP_BYTES = 64 * 1024 * 1024;
/**
 * A file changed this recently before the read began is not kept: file timestamps advance in ticks
 * (a jiffy, up to 10 ms), so a write in the tick of the previous one may not change mtime or ctime.
 */
const RACY_MS = 50;

interface Kept {
  data: Buffer;
  info: Stats;
}

export interface KeptContent {
  /** The `onContent` hook of a read of `rel` (see workspace/read-image.ts). */
  keeper(rel: string): (data: Buffer, info: Stats) => void;
  /** The kept bytes (and mode) of `rel` when `abs` (lstat now) is still the file they were read from; else undefined. */
  take(rel: string, abs: string): { data: Buffer; mode: number; info: Stats } | undefined;
}

/** A keeper for reads that begin now. */
export function keepContent(budget: number = KEEP_BYTES): KeptContent {
  const since = Date.now();
  const files = new Map<string, Kept>();
  let bytes = 0;
  return {
    keeper: (rel) => (data, info) => {
      if (data.length !== info.size || bytes + data.length > budget || info.ctimeMs > since - RACY_MS || info.mtimeMs > since - RACY_MS) return;
      bytes += data.length;
      files.set(rel, { data, info });
    },
    take(rel, abs) {
      const kept = files.get(rel);
      if (!kept) return undefined;
      files.delete(rel);
      let now;
      try {
        now = lstatSync(abs, { throwIfNoEntry: false });
      } catch {
        return undefined;
      }
      const was = kept.info;
      const same =
        now !== undefined &&
        now.isFile() &&
        now.ino === was.ino &&
        now.dev === was.dev &&
        now.size === was.size &&
        now.mode === was.mode &&
        now.mtimeMs === was.mtimeMs &&
        now.ctimeMs === was.ctimeMs;
      return same ? { data: kept.data, mode: was.mode & 0o7777, info: was } : undefined;
    },
  };
}
