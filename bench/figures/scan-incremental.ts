// scan-incremental: with the baseline in place, one file changes, then ckpt scans — vs the bare
// `find -printf` stat pass (the floor) and vs shadow git `add -A` + `commit` of the same change.
import { scanStats, type ScanResult } from '../ckpt-api.js';
import type { BenchContext } from '../context.js';
import { findStatPass, FIND_DESCRIPTION } from '../baselines/find-stat.js';
import { shadowCheckpoint } from '../baselines/shadow-git.js';
import { measureInterleaved } from '../measure.js';
import { scanIncremental } from '../ops/scan-incremental.js';
import { extraComparison, makeEntry, type Entry } from '../report.js';
import { baselineSession, fmtMs, shadowRepo, writeRel } from './shared.js';

export async function scanIncrementalFigure(ctx: BenchContext): Promise<Entry> {
  const idx = ctx.mutable.incremental;
  const rel = ctx.tree.relPath(idx);
  const original = ctx.tree.content(idx);
  let changed: number | null = null;
  let last: ScanResult | undefined;
  let setupError: Error | undefined;
  const session = await baselineSession(ctx).then(
    (o) => o.session,
    (err: Error) => void (setupError = err),
  );
  const repo = await shadowRepo(ctx);
  const r = await measureInterleaved(
    ctx.heavy,
    {
      ckpt: session
        ? async (i) => {
            const run = await scanIncremental(session);
            changed = run.result.files.length;
            last = run.result;
            ctx.log(`  scan-incremental ckpt #${i}: ${fmtMs(run.ms)} (${changed} changed)`);
            return run.ms;
          }
        : undefined,
      git: (i) =>
        shadowCheckpoint(repo).then((ms) => {
          ctx.log(`  scan-incremental shadow git #${i}: ${fmtMs(ms)}`);
          return ms;
        }),
      find: () => findStatPass(ctx.tree.root),
    },
    // One changed file per run: a different appended line each time (size and content change).
    (i) => writeRel(ctx, rel, Buffer.concat([original, Buffer.from(`// bench edit ${i}\n`)])),
  );
  return makeEntry({
    name: 'scan-incremental',
    unit: 'ms',
    ckpt: setupError ?? r.ckpt,
    baseline: `${FIND_DESCRIPTION} (floor)`,
    base: r.find,
    goal: 'ratio ≤ 1.3 (stat floor, issue 31) and vs_git_ratio ≤ 0.25',
    extra: { ...extraComparison('vs_git', 'ms', setupError ?? r.ckpt, r.git), changed_files: changed, scan: scanStats(last) },
  });
}
