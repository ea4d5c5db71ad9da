// disk-first: bytes on disk (allocated blocks) of ckpt's store after the first scan vs the shadow
// repository's .git after its first commit — both left by the scan-first figure.
import { diskUsage } from '../baselines/disk-usage.js';
import type { BenchContext } from '../context.js';
import { makeEntry, type Entry } from '../report.js';
import { baselineSession, shadowRepo } from './shared.js';

export async function diskFirstFigure(ctx: BenchContext): Promise<Entry> {
  let ckpt: number | Error;
  let ckptApparent: number | null = null;
  let ckptFiles: number | null = null;
  try {
    const open = await baselineSession(ctx);
    const du = await diskUsage(open.storeDir);
    ckpt = du.allocated;
    ckptApparent = du.apparent;
    ckptFiles = du.files;
  } catch (err) {
    ckpt = err instanceof Error ? err : new Error(String(err));
  }
  let base: number | Error;
  let baseApparent: number | null = null;
  let baseFiles: number | null = null;
  try {
    const du = await diskUsage((await shadowRepo(ctx)).gitDir);
    base = du.allocated;
    baseApparent = du.apparent;
    baseFiles = du.files;
  } catch (err) {
    base = err instanceof Error ? err : new Error(String(err));
  }
  return makeEntry({
    name: 'disk-first',
    unit: 'bytes',
    ckpt,
    baseline: 'shadow git .git after first commit',
    base,
    goal: 'ratio ≤ 0.6',
    extra: {
      ckpt_apparent_bytes: ckptApparent,
      ckpt_store_files: ckptFiles,
      baseline_apparent_bytes: baseApparent,
      baseline_files: baseFiles,
      tree_bytes: ctx.tree.bytes,
    },
  });
}
