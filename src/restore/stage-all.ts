// Staging every entry of a plan at once in one of two modes: `strict` before the point of no return —
// the first failure removes every staged file and propagates, so nothing changed — and `lenient` when
// finishing an interrupted restore, where an entry that cannot be staged any more is reported and the
// rest goes ahead. Entries are written in chunks (bounded parallelism: each is a blob read and a
// write), and each chunk's files are then flushed together (`flushStaged`: all fsyncs at once, one
// group commit of the file system instead of one per file) — in strict mode while the next chunks
// are written, a bounded number of chunks at a time (so are the open handles). Every staged file is
// durable when this returns, as DESIGN §4 step 2 requires.
import { CkptError, isCkptError, toCkptError } from '../errors.js';
import type { PlannedEntry, SkippedPath } from './plan-restore.js';
import { mapLimit } from './present.js';
import { closeStaged, flushStaged, removeStaged, stageEntry, type StageContext, type StagedFile } from './stage.js';

const STAGE_PARALLELISM = 16;
/** Entries written before their files' fsyncs are issued together. */
const FLUSH_GROUP = 64;
/** Groups whose flush may still be running while the next is written (bounds the open handles: 512). */
const FLUSHES_IN_FLIGHT = 8;
/** Finishing an interrupted restore: entries written, then flushed, per chunk (one failure drops its entry only). */
const LENIENT_GROUP = 512;

export interface StagedPlan {
  /** The entries still to place (lenient mode drops those that failed). */
  entries: PlannedEntry[];
  /** Staging path per entry (undefined: a delete, or a parent chain that is blocked). */
  staged: (string | undefined)[];
  failed: SkippedPath[];
}

type Outcome = { ok: true; file: StagedFile | undefined } | { ok: false; why: string };

export async function stageAll(
  ctx: StageContext,
  entries: readonly PlannedEntry[],
  mode: 'strict' | 'lenient',
  onProgress?: (progress: { phase: string; done: number; total: number }) => void,
): Promise<StagedPlan> {
  if (mode === 'strict') {
    const groups: (StagedFile | undefined)[][] = [];
    const flushing: Promise<void>[] = [];
    const staged: (string | undefined)[] = [];
    try {
      let done = 0;
      for (let start = 0; start < entries.length; start += FLUSH_GROUP) {
        const files: (StagedFile | undefined)[] = [];
        groups.push(files);
        await mapLimit(entries.slice(start, start + FLUSH_GROUP), STAGE_PARALLELISM, async (e, k) => {
          files[k] = await stageEntry(ctx, e, start + k);
          onProgress?.({ phase: 'staging', done: ++done, total: entries.length });
        });
        for (let k = 0; k < Math.min(FLUSH_GROUP, entries.length - start); k++) staged.push(files[k]?.path);
        // Flushed while the next groups are written (the fsyncs wait on the thread pool, the writes
        // run on this thread); awaited below, handled now so that a failure is never unhandled.
        const flush = flushStaged(files);
        flush.catch(() => {});
        flushing.push(flush);
        while (flushing.length > FLUSHES_IN_FLIGHT) await flushing.shift();
      }
      await Promise.all(flushing);
      return { entries: [...entries], staged, failed: [] };
    } catch (err) {
      // No descriptor is closed while its fsync may still run on the pool.
      await Promise.allSettled(flushing);
      for (const files of groups) closeStaged(files);
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
  const results: Outcome[] = [];
  for (let start = 0; start < entries.length; start += LENIENT_GROUP) {
    const chunk = entries.slice(start, start + LENIENT_GROUP);
    const outcomes = await mapLimit(chunk, STAGE_PARALLELISM, async (e, k): Promise<Outcome> => {
      try {
        return { ok: true, file: await stageEntry(ctx, e, start + k) };
      } catch (err) {
        return { ok: false, why: whyFailed(err) };
      }
    });
    // Flushed one by one so that a failed fsync drops its own entry only (all still in flight at once).
    await Promise.all(
      outcomes.map(async (o, k) => {
        if (!o.ok || o.file?.fd === undefined) return;
        try {
          await flushStaged([o.file]);
        } catch (err) {
          closeStaged([o.file]);
          outcomes[k] = { ok: false, why: whyFailed(err) };
        }
      }),
    );
    results.push(...outcomes);
  }
  const out: StagedPlan = { entries: [], staged: [], failed: [] };
  results.forEach((r, i) => {
    const entry = entries[i]!;
    if (!r.ok) out.failed.push({ path: entry.path, why: r.why });
    else {
      out.entries.push(entry);
      out.staged.push(r.file?.path);
    }
  });
  return out;
}

function whyFailed(err: unknown): string {
  return isCkptError(err) ? err.code.toLowerCase().replace(/_/g, '-') : `io: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
}
