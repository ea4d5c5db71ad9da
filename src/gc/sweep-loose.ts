// Deleting one loose blob without a window for a concurrent put (DESIGN §5). A put of existing
// content freshens it (touch, then stat to confirm it is still there) and then trusts it. A plain
// "stat, check the age, unlink" leaves a window: a put that touches and confirms between our stat and
// our unlink would trust a blob we then delete. So the blob is first taken out of its name into a
// quarantine (backend.quarantine), and only then is its mtime checked:
//   - a put that touched it before the quarantine moved its mtime: we see that and release it back;
//   - a put that comes after finds no blob (its touch is a no-op, its stat misses) and writes the
//     blob again — a release that finds it there already keeps that copy (same content).
// A crash between the quarantine and the decision leaves a quarantined leftover: the next GC releases
// it when the blob is live and missing, and otherwise removes it as a leftover.
import type { StoreContext } from '../context.js';
import { looseKey } from '../storage/blob-store.js';

export interface SweepOutcome {
  removed: boolean;
  /** Bytes freed when removed. */
  bytes: number;
  /** Present but kept: it was freshened after the plan, or is younger than the grace period. */
  rescued: boolean;
}

/** Removes loose blob `id` if its mtime is still `plannedMtime` and older than `now - graceMs`. */
export async function sweepLoose(ctx: Pick<StoreContext, 'backend'>, id: string, plannedMtime: number, graceMs: number): Promise<SweepOutcome> {
  const key = looseKey(id);
  const q = await ctx.backend.quarantine(key);
  if (!q) return { removed: false, bytes: 0, rescued: false };
  const { mtimeMs, size } = q.stat;
  if (mtimeMs === plannedMtime && mtimeMs < Date.now() - graceMs) {
    await ctx.backend.removeLeftover(q.key, Infinity);
    return { removed: true, bytes: size, rescued: false };
  }
  await ctx.backend.release(q.key, key);
  return { removed: false, bytes: 0, rescued: true };
}

/** The blob id a quarantined leftover holds (from the key it was taken from), or undefined. */
export function quarantinedId(quarantineOf: string | undefined): string | undefined {
  const m = quarantineOf ? /^blobs\/([0-9a-f]{2})\/([0-9a-f]{62})$/.exec(quarantineOf) : null;
  return m ? `${m[1]}${m[2]}` : undefined;
}

/**
 * The pack a quarantined leftover holds (`packs/<name>.pack` taken out of its name by a rewrite,
 * pack-rewrite.ts), or undefined. A collector that crashed before removing the pack's index leaves
 * it beside that index: the next GC puts it back.
 */
export function quarantinedPack(quarantineOf: string | undefined): string | undefined {
  const m = quarantineOf ? /^packs\/([^/]+)\.pack$/.exec(quarantineOf) : null;
  return m ? m[1] : undefined;
}
