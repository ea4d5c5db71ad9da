// scan-first: ckpt's first scan of the tree (fresh store each run) vs shadow git's first
// `add -A` + `commit` (fresh repository each run); the find stat pass as an extra reference.
// The last store and repository are kept for the figures after this one.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { closeStore, scanStats, type ScanResult } from '../ckpt-api.js';
import type { BenchContext, OpenSession } from '../context.js';
import { findStatPass } from '../baselines/find-stat.js';
import { initShadow, shadowCheckpoint, type ShadowRepo } from '../baselines/shadow-git.js';
import { measureInterleaved } from '../measure.js';
import { scanFirst } from '../ops/scan-first.js';
import { extraComparison, makeEntry, type Entry } from '../report.js';
import { fmtMs, newStoreDir } from './shared.js';

export async function scanFirstFigure(ctx: BenchContext): Promise<Entry> {
  let open: OpenSession | undefined;
  let result: ScanResult | undefined;
  let repo: ShadowRepo | undefined;
  // Earlier runs' stores and repos are deleted only after the loop: deleting (and the discards it
  // causes) must not overlap a measured run.
  const stale: string[] = [];
  const r = await measureInterleaved(
    ctx.heavy,
    {
      ckpt: async (i) => {
        if (open) {
          await closeStore(open.store);
          stale.push(open.storeDir);
        }
        open = undefined;
        const run = await scanFirst(newStoreDir(ctx, 'first'), ctx.tree.root);
        open = run.open;
        result = run.result;
        ctx.log(`  scan-first ckpt #${i}: ${fmtMs(run.ms)}`);
        return run.ms;
      },
      git: async (i) => {
        if (repo) stale.push(repo.gitDir);
        repo = await initShadow(path.join(ctx.runDir, `shadow-first-${i}.git`), ctx.tree.root);
        const ms = await shadowCheckpoint(repo);
        ctx.log(`  scan-first shadow git #${i}: ${fmtMs(ms)}`);
        return ms;
      },
      find: () => findStatPass(ctx.tree.root),
    },
    undefined,
    // In --quick, shadow git (the slowest series) relies on ckpt's warm-up run to warm the cache.
    ctx.quick ? ['git'] : [],
  );
  for (const dir of stale) await fsp.rm(dir, { recursive: true, force: true });
  if (open) {
    ctx.shared.firstScan = open;
    ctx.stores.push(open.store);
  }
  if (repo) ctx.shared.shadow = repo;
  if (r.ckpt && !(r.ckpt instanceof Error)) ctx.shared.scanFirstMs = r.ckpt.median;
  return makeEntry({
    name: 'scan-first',
    unit: 'ms',
    ckpt: r.ckpt,
    baseline: 'shadow git add -A + commit (first)',
    base: r.git,
    goal: 'ckpt ≤ 4 s on the 100k-file tree (shadow git ≈ 12 s)',
    extra: {
      ...extraComparison('vs_find', 'ms', r.ckpt, r.find),
      scan: scanStats(result),
    },
  });
}
