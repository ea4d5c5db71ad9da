// capture-one: a durable capture of one 16 KiB file through the in-process API — vs one write +
// fsync of the same bytes (the floor) and vs shadow git `add <file>` + `commit` (index of the whole
// tree). Each run captures new bytes, so every capture stores a new blob.
import path from 'node:path';
import { promises as fsp } from 'node:fs';
import { NotImplementedError } from '../ckpt-api.js';
import type { BenchContext } from '../context.js';
import { writeFsync } from '../baselines/fsync-write.js';
import { shadowCheckpoint } from '../baselines/shadow-git.js';
import { sourceText } from '../gen/source-text.js';
import { measure, type Sample } from '../measure.js';
import { captureOne, settle } from '../ops/capture-one.js';
import { extraComparison, makeEntry, type Entry } from '../report.js';
import { anySession, drainQueued, shadowRepo, writeRel } from './shared.js';

const SIZE = 16 * 1024;

export async function captureOneFigure(ctx: BenchContext): Promise<Entry> {
  const rel = ctx.tree.relPath(ctx.mutable.capture);
  const before = (i: number): Buffer => sourceText(ctx.tree.seed, 1_000_000 + i, SIZE);
  const after = (i: number): Buffer => sourceText(ctx.tree.seed, 2_000_000 + i, SIZE);
  let ckpt: Sample | Error;
  let reported: number | null = null;
  try {
    const { store, session } = await anySession(ctx);
    let canSettle = true;
    ckpt = await measure(ctx.light, async (i) => {
      await writeRel(ctx, rel, before(i));
      const run = await captureOne(session, rel);
      reported = run.result.files.length;
      // What the agent's tool does next: write, then settle (untimed; optional while not implemented).
      await writeRel(ctx, rel, after(i));
      if (canSettle) {
        try {
          await settle(session, [rel]);
        } catch (err) {
          if (!(err instanceof NotImplementedError)) throw err;
          canSettle = false;
        }
      }
      return run.ms;
    });
    // Untimed: the copies queued after the answers run before the floor's series, not during it.
    await drainQueued(store);
  } catch (err) {
    ckpt = err instanceof Error ? err : new Error(String(err));
  }
  const floorDir = path.join(ctx.runDir, 'floor-capture');
  await fsp.mkdir(floorDir, { recursive: true });
  const floor = await measure(ctx.light, (i) => writeFsync(path.join(floorDir, `${i}.ts`), before(i)));
  let git: Sample | Error;
  try {
    const repo = await shadowRepo(ctx);
    git = await measure(ctx.gitLight, async (i) => {
      await writeRel(ctx, rel, sourceText(ctx.tree.seed, 3_000_000 + i, SIZE));
      return shadowCheckpoint(repo, [rel]);
    });
  } catch (err) {
    git = err instanceof Error ? err : new Error(String(err));
  }
  return makeEntry({
    name: 'capture-one',
    unit: 'ms',
    ckpt,
    baseline: 'write+fsync of the same 16 KiB (floor)',
    base: floor,
    goal: 'ratio ≤ 2 (issue 31)',
    extra: { ...extraComparison('vs_git', 'ms', ckpt, git), files_reported: reported },
  });
}
