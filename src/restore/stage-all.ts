// Staging every entry of a plan at once (bounded parallelism: each stage is a blob read, a write and
// an fsync) in one of two modes: `strict` before the point of no return — the first failure removes
// every staged file and propagates, so nothing changed — and `lenient` when finishing an interrupted
// restore, where an entry that cannot be staged any more is reported and the rest goes ahead.
import { CkptError, isCkptError, toCkptError } from '../errors.js';
import type { PlannedEntry, SkippedPath } from './plan-restore.js';
import { mapLimit } from './present.js';
import { removeStaged, stageEntry, type StageContext } from './stage.js';

const STAGE_PARALLELISM = 16;

export interface StagedPlan {
  /** The entries still to place (lenient mode drops those that failed). */
  entries: PlannedEntry[];
  /** Staging path per entry (undefined: a delete, or a parent chain that is blocked). */
  staged: (string | undefined)[];
  failed: SkippedPath[];
}

export async function stageAll(
  ctx: StageContext,
  entries: readonly PlannedEntry[],
  mode: 'strict' | 'lenient',
  onProgress?: (progress: { phase: string; done: number; total: number }) => void,
): Promise<StagedPlan> {
  if (mode === 'strict') {
    try {
      let done = 0;
      const staged = await mapLimit(entries, STAGE_PARALLELISM, async (e, i) => {
        const path = await stageEntry(ctx, e, i);
        onProgress?.({ phase: 'staging', done: ++done, total: entries.length });
        return path;
      });
      return { entries: [...entries], staged, failed: [] };
    } catch (err) {
      await removeStaged(ctx.root, entries.map((e) => e.path), ctx.id).catch(() => {});
      // A folder the plan stages in vanished or became a file: another process changed the workspace
      // since the plan (found by the soak). Nothing was changed; that is drift, not a disk failure.
      const errno = (err as NodeJS.ErrnoException)?.code;
      if (errno === 'ENOENT' || errno === 'ENOTDIR') {
        throw new CkptError('DRIFT', `the workspace changed while the restore was being staged (${(err as Error).message}); nothing was changed — run it again`, { drift: [], errno }, { cause: err });
      }
      throw toCkptError(err, 'staging the restore');
    }
  }
  const results = await mapLimit(entries, STAGE_PARALLELISM, async (e, i) => {
    try {
      return { ok: true as const, staged: await stageEntry(ctx, e, i) };
    } catch (err) {
      const why = isCkptError(err) ? err.code.toLowerCase().replace(/_/g, '-') : `io: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
      return { ok: false as const, why };
    }
  });
  const out: StagedPlan = { entries: [], staged: [], failed: [] };
  results.forEach((r, i) => {
    const entry = entries[i]!;
    if (!r.ok) out.failed.push({ path: entry.path, why: r.why });
    else {
      out.entries.push(entry);
      out.staged.push(r.staged);
    }
  });
  return out;
}
