// Applying a GC plan (DESIGN §5): everything is checked before anything is deleted, and deleting
// happens last. Under the store's `gc` lock (one collector at a time) it
//   1. re-reads every log (an unreadable one aborts: nothing deleted) and drops from the plan any
//      blob that became referenced since it was made;
//   2. deletes loose candidates, checking each one's mtime after moving it aside (sweep-loose.ts): a
//      copy whose mtime moved since the plan (a put freshened it: a capture is about to reference
//      it) or that is now younger than the grace period is put back;
//   3. rewrites packs without their dead blobs, unless the pack was freshened since the plan (the
//      rewrite itself also gives up when the pack is freshened while it copies);
//   4. removes leftovers (temp files, staging, partial packs) still older than the grace period.
// Concurrent captures are safe because a put of existing content freshens it *before* the capture
// event references it, and nothing fresher than the grace period is deleted.
import type { StoreContext } from '../context.js';
import { looseKey } from '../storage/blob-store.js';
import { indexKey, packKey } from '../storage/pack/pack-set.js';
import { collectLiveSet } from './live-set.js';
import { removeOrphan } from './orphans.js';
import { quarantinedId, quarantinedPack, sweepLoose } from './sweep-loose.js';
import { planGc, takeInventory, type GcOptions, type GcPlan } from './plan-gc.js';

export type GcPhase = 'read' | 'loose' | 'packs' | 'orphans';

export interface GcProgress {
  phase: GcPhase;
  done: number;
  total: number;
}

export interface ApplyGcOptions {
  onProgress?: (p: GcProgress) => void;
  /** How long to wait for another collector's lock (default: the backend's). */
  lockTimeoutMs?: number;
}

/** DESIGN §9 `ckpt gc` result, plus details. */
export interface GcResult {
  /** Blob copies deleted (loose files and packed entries). */
  deleted: number;
  bytesFreed: number;
  /** Blob copies left in the store. */
  kept: number;
  /** Candidates kept because they were reused (freshened or referenced) after the plan. */
  rescued: number;
  packsRewritten: number;
  orphansRemoved: number;
  dryRun?: true;
}

export const GC_LOCK = 'gc';

export async function applyGc(ctx: Pick<StoreContext, 'backend' | 'blobs' | 'dir'>, plan: GcPlan, options: ApplyGcOptions = {}): Promise<GcResult> {
  const progress = options.onProgress ?? (() => {});
  return ctx.backend.withLock(
    GC_LOCK,
    async () => {
      // 1. Fail closed before any deletion; learn references made since the plan.
      const live = (await collectLiveSet(ctx, { onProgress: (p) => progress({ phase: 'read', done: p.done, total: p.total }) })).ids;
      const result: GcResult = { deleted: 0, bytesFreed: 0, kept: plan.kept, rescued: 0, packsRewritten: 0, orphansRemoved: 0 };
      const rescue = (n: number): void => {
        result.rescued += n;
        result.kept += n;
      };
      const stillOld = (mtimeMs: number, planned: number): boolean => mtimeMs === planned && mtimeMs < Date.now() - plan.graceMs;

      // 2. Loose blobs: each is moved aside and its mtime checked then (sweep-loose.ts).
      let done = 0;
      for (const c of plan.loose) {
        progress({ phase: 'loose', done: done++, total: plan.loose.length });
        if (live.has(c.id)) {
          rescue(1);
          continue;
        }
        const r = await sweepLoose(ctx, c.id, c.mtimeMs, plan.graceMs);
        if (r.rescued) rescue(1);
        if (r.removed) {
          result.deleted++;
          result.bytesFreed += r.bytes;
        }
      }
      progress({ phase: 'loose', done, total: plan.loose.length });

      // 3. Packs.
      done = 0;
      for (const p of plan.packs) {
        progress({ phase: 'packs', done: done++, total: plan.packs.length });
        const dead = new Set(p.dead.filter((id) => !live.has(id)));
        rescue(p.dead.length - dead.size);
        const st = await ctx.backend.stat(packKey(p.pack));
        if (!st) continue;
        if (dead.size === 0 || !stillOld(st.mtimeMs, p.mtimeMs)) {
          rescue(dead.size);
          continue;
        }
        // The planned mtime, not one read now: a put between this check and the rewrite's own stat must count as a freshen.
        const r = await ctx.blobs.rewritePack(p.pack, (id) => !dead.has(id), p.mtimeMs);
        if (r.skipped) {
          rescue(dead.size);
          continue;
        }
        result.deleted += r.dropped;
        result.bytesFreed += r.bytesFreed;
        result.packsRewritten++;
        rescue(dead.size - r.dropped);
      }
      progress({ phase: 'packs', done, total: plan.packs.length });

      // 4. Leftovers. A quarantined blob (a collector crashed mid-sweep) that is live goes back first.
      done = 0;
      for (const o of plan.orphans) {
        progress({ phase: 'orphans', done: done++, total: plan.orphans.length });
        const id = quarantinedId(o.quarantineOf);
        if (id && live.has(id)) {
          await ctx.backend.release(o.key, looseKey(id));
          continue;
        }
        // A pack a crashed rewrite took out of its name while its index stayed: back where it was
        // (the rewrite's copy of its kept blobs stays too; a later GC drops what is dead).
        const pack = quarantinedPack(o.quarantineOf);
        if (pack && (await ctx.backend.stat(indexKey(pack)))) {
          await ctx.backend.release(o.key, packKey(pack));
          continue;
        }
        // Not touched since the plan, and still older than the grace period.
        const freed = await removeOrphan(ctx, o, Math.min(o.mtimeMs + 1, Date.now() - plan.graceMs));
        if (freed > 0) {
          result.orphansRemoved++;
          result.bytesFreed += freed;
        }
      }
      progress({ phase: 'orphans', done, total: plan.orphans.length });
      return result;
    },
    options.lockTimeoutMs === undefined ? undefined : { timeoutMs: options.lockTimeoutMs },
  );
}

export interface RunGcOptions extends GcOptions, ApplyGcOptions {
  dryRun?: boolean;
}

/** Plans and (unless dry-run) applies a GC; returns the plan and the result. */
export async function runGc(ctx: Pick<StoreContext, 'backend' | 'blobs' | 'dir'>, options: RunGcOptions = {}): Promise<{ plan: GcPlan; result: GcResult }> {
  const progress = options.onProgress;
  const inventory = await takeInventory(ctx, { onProgress: progress && ((p) => progress({ phase: 'read', done: p.done, total: p.total })) });
  const plan = planGc(inventory, options);
  if (options.dryRun) {
    return {
      plan,
      result: { deleted: plan.deleteCount, bytesFreed: plan.bytesToFree, kept: plan.kept, rescued: 0, packsRewritten: plan.packs.length, orphansRemoved: plan.orphans.length, dryRun: true },
    };
  }
  return { plan, result: await applyGc(ctx, plan, options) };
}
