// Deleting one loose blob without a window for a concurrent put (DESIGN §5). A put of existing
// content freshens it (touch, then stat to confirm it is still there) and then trusts it. A plain
// "stat, check the age, unlink" leaves a window: a put that touches and confirms between our stat and
// our unlink would trust a blob we then delete. So on the fs driver the blob is first *renamed* out
// of its name into a quarantine file beside it, and only then is its mtime checked:
//   - a put that touched it before the rename moved its mtime: we see that and link it back;
//   - a put that comes after the rename finds no blob (its touch is a no-op, its stat misses) and
//     writes the blob again — a link-back that finds it there already is fine (same content).
// A crash between the rename and the decision leaves a quarantine file (`.<name>.ckpt-tmp-gc-…`):
// the next GC links it back when the blob is live and missing, and otherwise removes it as a leftover.
// Other drivers (no rename in the backend contract yet) fall back to stat-then-remove.
import { randomBytes } from 'node:crypto';
import { link, lstat, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { StoreContext } from '../context.js';
import { toCkptError } from '../errors.js';
import { looseKey } from '../storage/blob-store.js';

export const QUARANTINE_MARK = '.ckpt-tmp-gc-';

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

export interface SweepOutcome {
  removed: boolean;
  /** Bytes freed when removed. */
  bytes: number;
  /** Present but kept: it was freshened after the plan, or is younger than the grace period. */
  rescued: boolean;
}

/** Removes loose blob `id` if its mtime is still `plannedMtime` and older than `now - graceMs`. */
export async function sweepLoose(ctx: Pick<StoreContext, 'backend' | 'blobs' | 'dir'>, id: string, plannedMtime: number, graceMs: number): Promise<SweepOutcome> {
  const ok = (mtimeMs: number): boolean => mtimeMs === plannedMtime && mtimeMs < Date.now() - graceMs;
  if (ctx.backend.kind !== 'fs') {
    const st = await ctx.backend.stat(looseKey(id));
    if (!st) return { removed: false, bytes: 0, rescued: false };
    if (!ok(st.mtimeMs)) return { removed: false, bytes: 0, rescued: true };
    await ctx.blobs.removeLoose(id);
    return { removed: true, bytes: st.size, rescued: false };
  }
  const abs = join(ctx.dir, ...looseKey(id).split('/'));
  const quarantine = join(dirname(abs), `.${id.slice(2)}${QUARANTINE_MARK}${randomBytes(4).toString('hex')}`);
  try {
    await rename(abs, quarantine);
  } catch (err) {
    if (errno(err) === 'ENOENT') return { removed: false, bytes: 0, rescued: false };
    throw toCkptError(err, `gc: quarantine blob ${id}`);
  }
  try {
    const st = await lstat(quarantine);
    if (st.isFile() && ok(st.mtimeMs)) {
      await unlink(quarantine);
      return { removed: true, bytes: st.size, rescued: false };
    }
    await restoreQuarantined(quarantine, abs);
    return { removed: false, bytes: 0, rescued: true };
  } catch (err) {
    throw toCkptError(err, `gc: sweep blob ${id}`);
  }
}

/** Puts a quarantined blob back under its name (a copy written there meanwhile has the same content). */
export async function restoreQuarantined(quarantine: string, abs: string): Promise<void> {
  try {
    await link(quarantine, abs);
  } catch (err) {
    if (errno(err) !== 'EEXIST') throw err;
  }
  await unlink(quarantine);
}

/** The blob id a quarantine file (store-relative key) holds, or undefined for any other temp file. */
export function quarantinedId(key: string): string | undefined {
  const m = /^blobs\/([0-9a-f]{2})\/\.([0-9a-f]{62})\.ckpt-tmp-gc-[0-9a-f]+$/.exec(key);
  return m ? `${m[1]}${m[2]}` : undefined;
}
