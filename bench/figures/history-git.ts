// Figures on real history (issue 9 "Performance found"): the Git project's trees c18 → c19 of the
// history fixture, a change of 600 paths (85 added, 19 deleted, 493 modified, 3 mode-only) and 3
// folders (2 added, 1 removed: ckpt records those too), made by `git checkout -f`.
//
// scan-checkout-git: a scan after that checkout in a git work tree whose baseline references git's
//   blobs (each changed file's previous content is then read from git's pack) — vs the same scan of
//   the same change in a plain folder (the files' previous content already in ckpt's store); and vs
//   `git status` after the same checkout (git's index is fresh: git records no content).
// restore-580-git: ckpt's restore of those paths back to c18 (recovery capture, staging, journal,
//   placing, folder fsyncs) — vs `git checkout -f c18` of the same change in a second clone; and vs
//   git checkout followed by `sync`, which says how much of the gap is durability (ckpt fsyncs every
//   file and folder it writes; git fsyncs nothing on checkout). Each timed run starts with the
//   untimed setup's writes (the checkouts, the scan) written back, as a restore or checkout a minute
//   after the change does (the kernel writes dirty pages back within 30 s). `unflushed`: both right
//   after the setup, as this figure measured before the twelfth session. Then replacing a file
//   whose blocks were never allocated costs git little (no blocks freed, no discard on this VM's
//   ext4), while ckpt's flush must write the setup's pending data or flush its own files one by one.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { closeStore, need, scanStats, type ScanResult } from '../ckpt-api.js';
import type { BenchContext, OpenSession } from '../context.js';
import { measureInterleaved, timed } from '../measure.js';
import { flushIo } from '../proc.js';
import { changedFolders, changedPaths, cloneHistory, HISTORY_FROM, HISTORY_TO, type HistoryTree } from '../ops/history.js';
import { restoreTo } from '../ops/restore-1000.js';
import { startSession } from '../ops/session.js';
import { extraComparison, makeEntry, ratio, value, type Entry } from '../report.js';
import { fmtMs, newStoreDir } from './shared.js';

const CHANGE = `${HISTORY_FROM} → ${HISTORY_TO}`;
/** Files checked out this recently are racily clean for a scan: wait past ckpt's 2 s rule (setup). */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 2100));

/** A fresh store whose baseline scan of `tree` (at FROM) is done, then the checkout of TO (setup). */
async function baselineThenCheckout(ctx: BenchContext, tree: HistoryTree): Promise<OpenSession> {
  await tree.checkout(HISTORY_FROM);
  await settle();
  const open = await startSession(newStoreDir(ctx, 'history'), tree.dir, 'bench history');
  const base = await need(open.session, 'scan', 'session')({ tool: 'Bash' });
  if (base.tag !== null) throw new Error('the baseline scan recorded changes');
  await tree.checkout(HISTORY_TO);
  return open;
}

export async function scanCheckoutGitFigure(ctx: BenchContext): Promise<Entry> {
  const inGit = await cloneHistory(path.join(ctx.runDir, 'history-scan-git'), HISTORY_FROM);
  const plain = await cloneHistory(path.join(ctx.runDir, 'history-scan-plain'), HISTORY_FROM, { detach: true });
  const changed = (await changedPaths(inGit, HISTORY_FROM, HISTORY_TO)).length;
  // What the scan records: the changed files and the folders the change creates or removes.
  const recorded = changed + (await changedFolders(inGit, HISTORY_FROM, HISTORY_TO)).length;
  const last: Partial<Record<'git' | 'plain', ScanResult>> = {};
  const series = (kind: 'git' | 'plain', tree: HistoryTree) => async (i: number): Promise<number> => {
    const open = await baselineThenCheckout(ctx, tree);
    try {
      let result: ScanResult | undefined;
      const ms = await timed(async () => {
        result = await need(open.session, 'scan', 'session')({ tool: 'Bash' });
      });
      if (result!.files.length !== recorded) throw new Error(`the ${kind} scan recorded ${result!.files.length} of ${recorded} changed paths (files and folders)`);
      last[kind] = result;
      ctx.log(`  scan-checkout-git ${kind} #${i}: ${fmtMs(ms)}`);
      return ms;
    } finally {
      await closeStore(open.store);
      await fsp.rm(open.storeDir, { recursive: true, force: true });
    }
  };
  const r = await measureInterleaved(ctx.heavy, {
    git: series('git', inGit),
    plain: series('plain', plain),
    // What the issue asks to compare with: git's own look at the work tree after the same checkout
    // (its index written by the checkout, the files it wrote racily clean to it: git reads those).
    git_status: async () => {
      await inGit.checkout(HISTORY_FROM);
      await inGit.checkout(HISTORY_TO);
      return timed(() => inGit.git('status', '--porcelain'));
    },
  });
  return makeEntry({
    name: 'scan-checkout-git',
    unit: 'ms',
    ckpt: r.git,
    baseline: `the same scan in a plain folder (${CHANGE}, ${changed} paths)`,
    base: r.plain,
    goal: 'ratio ≤ 1.2 (issue 31; was 25× before the per-scan git object cache)',
    extra: { ...extraComparison('vs_git_status', 'ms', r.git, r.git_status), changed_paths: changed, scan: scanStats(last.git), scan_plain: scanStats(last.plain) },
  });
}

export async function restore580GitFigure(ctx: BenchContext): Promise<Entry> {
  const mine = await cloneHistory(path.join(ctx.runDir, 'history-restore-ckpt'), HISTORY_FROM);
  const theirs = await cloneHistory(path.join(ctx.runDir, 'history-restore-git'), HISTORY_FROM);
  const changed = (await changedPaths(mine, HISTORY_FROM, HISTORY_TO)).length;
  const recorded = changed + (await changedFolders(mine, HISTORY_FROM, HISTORY_TO)).length;
  const open = await baselineThenCheckout(ctx, mine);
  ctx.stores.push(open.store);
  let counts: Record<string, number> = {};
  const restoreRun = (kind: 'ckpt' | 'unflushed') => async (i: number): Promise<number> => {
    // Untimed: the checkout (files now at TO) recorded by a scan; the restore goes back to FROM.
    // Via FROM: git's index still says TO after the last restore, and only a checkout from FROM
    // deletes the files TO does not have (to git they are untracked now).
    await mine.checkout(HISTORY_FROM);
    await mine.checkout(HISTORY_TO);
    const scan = await need(open.session, 'scan', 'session')({ tool: 'Bash' });
    if (!scan.tag || scan.files.length !== recorded) throw new Error(`run ${i}: the scan recorded ${scan.files.length} of ${recorded} changed paths (files and folders)`);
    if (kind === 'ckpt') await flushIo();
    const run = await restoreTo(open.session, scan.tag);
    counts = { restored: run.result.restored.length, deleted: run.result.deleted.length, skipped: run.result.skipped.length };
    if (counts.restored! + counts.deleted! !== recorded) throw new Error(`run ${i}: restored ${counts.restored} and deleted ${counts.deleted} of ${recorded} paths (files and folders)`);
    ctx.log(`  restore-580-git ${kind} #${i}: ${fmtMs(run.ms)}`);
    return run.ms;
  };
  const checkoutRun = (flushed: boolean) => async (): Promise<number> => {
    await theirs.checkout(HISTORY_TO);
    if (flushed) await flushIo();
    return timed(() => theirs.checkout(HISTORY_FROM));
  };
  const r = await measureInterleaved(ctx.heavy, {
    ckpt: restoreRun('ckpt'),
    git: checkoutRun(true),
    git_sync: async () => {
      await theirs.checkout(HISTORY_TO);
      await flushIo();
      return timed(async () => {
        await theirs.checkout(HISTORY_FROM);
        await flushIo();
      });
    },
    unflushed: restoreRun('unflushed'),
    git_unflushed: checkoutRun(false),
  });
  return makeEntry({
    name: 'restore-580-git',
    unit: 'ms',
    ckpt: r.ckpt,
    baseline: `git checkout -f of the same change (${CHANGE} back, ${changed} paths)`,
    base: r.git,
    goal: 'ratio ≤ 1.5 (issue 31; durable, where git is not)',
    extra: {
      ...extraComparison('vs_git_sync', 'ms', r.ckpt, r.git_sync),
      unflushed_ms: value(r.unflushed),
      unflushed_git_ms: value(r.git_unflushed),
      unflushed_ratio: ratio(value(r.unflushed), value(r.git_unflushed)),
      changed_paths: changed,
      ...counts,
    },
  });
}
