// restore-1000: 1,000 files spread over the tree are rewritten (as a shell command would) and a
// scan records them — or, without a scan baseline, they are captured before and settled after — then
// ckpt restores them (force; includes its recovery capture of the present content) — vs 1,000 atomic
// fsynced writes of the same original bytes (temp + fsync + rename, then folder fsyncs).
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { need, NotImplementedError, type CkptSession } from '../ckpt-api.js';
import type { BenchContext } from '../context.js';
import { atomicWrites, type FileWrite } from '../baselines/atomic-writes.js';
import { measureInterleaved } from '../measure.js';
import { captureBefore, restoreTo, scanAfter } from '../ops/restore-1000.js';
import { settle } from '../ops/capture-one.js';
import { makeEntry, type Entry } from '../report.js';
import { anySession, fmtMs, writeRel } from './shared.js';

export async function restore1000Figure(ctx: BenchContext): Promise<Entry> {
  const rels = ctx.mutable.restore.map((i) => ctx.tree.relPath(i));
  const originals = ctx.mutable.restore.map((i) => ctx.tree.content(i));
  const floorRoot = path.join(ctx.runDir, 'floor-restore');
  const floorWrites: FileWrite[] = rels.map((rel, k) => ({ file: path.join(floorRoot, rel), data: originals[k] as Buffer }));
  for (const w of floorWrites) {
    await fsp.mkdir(path.dirname(w.file), { recursive: true });
    await fsp.writeFile(w.file, 'x');
  }
  let restored: number | null = null;
  let drift: number | null = null;
  let setupError: Error | undefined;
  let session: CkptSession | undefined;
  try {
    session = (await anySession(ctx)).session;
    need(session, 'restore', 'session'); // fail fast, before the setup of every run
  } catch (err) {
    setupError = err instanceof Error ? err : new Error(String(err));
    session = undefined;
  }
  // The shell path needs a scan baseline; the tool path works without one.
  const viaScan = ctx.shared.firstScan !== undefined && session === ctx.shared.firstScan.session;
  let canSettle = true;
  const record = (i: number, run: Awaited<ReturnType<typeof restoreTo>>): number => {
    restored = run.result.restored.length;
    drift = run.result.drift.length;
    ctx.log(`  restore-1000 ckpt #${i}: ${fmtMs(run.ms)} (${restored} restored)`);
    return run.ms;
  };
  const r = await measureInterleaved(ctx.heavy, {
    ckpt: session
      ? async (i) => {
          if (!session) throw new Error('no session');
          const before = viaScan ? undefined : await captureBefore(session, rels);
          const edit = Buffer.from(`// restore-bench run ${i}\n`);
          for (let k = 0; k < rels.length; k++) await writeRel(ctx, rels[k] as string, Buffer.concat([originals[k] as Buffer, edit]));
          if (viaScan) {
            const tag = await scanAfter(session, rels).catch((err: Error) => {
              throw new Error(`run ${i}: ${err.message}`);
            });
            return record(i, await restoreTo(session, tag));
          }
          if (canSettle) {
            try {
              await settle(session, rels);
            } catch (err) {
              if (!(err instanceof NotImplementedError)) throw err;
              canSettle = false;
            }
          }
          return record(i, await restoreTo(session, before as string));
        }
      : undefined,
    floor: () => atomicWrites(floorWrites),
  });
  return makeEntry({
    name: 'restore-1000',
    unit: 'ms',
    ckpt: setupError ?? r.ckpt,
    baseline: '1,000 atomic fsynced writes (floor)',
    base: r.floor,
    goal: 'ratio ≤ 1.1 (issue 31)',
    extra: { files_restored: restored, drift_reported: drift, recorded_by: viaScan ? 'scan' : 'capture+settle' },
  });
}
