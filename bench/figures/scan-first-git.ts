// scan-first-git: the same tree committed into a real git repository (`git init` + add + commit in
// the workspace: setup, not measured; cached beside the tree with --keep/--dir), then ckpt's first
// scan with a fresh store vs the find stat pass (the floor; `.git` pruned). The repository is moved
// out of the workspace afterwards so the other figures always see a plain folder.
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { closeStore, scanStats, type ScanResult } from '../ckpt-api.js';
import { allMutable, type BenchContext, type OpenSession } from '../context.js';
import { resetFiles } from '../gen/tree.js';
import { diskUsage } from '../baselines/disk-usage.js';
import { findStatPass, FIND_DESCRIPTION } from '../baselines/find-stat.js';
import { gitEnv, initShadow, shadowCheckpoint } from '../baselines/shadow-git.js';
import { measureInterleaved } from '../measure.js';
import { run } from '../proc.js';
import { scanFirstGit } from '../ops/scan-first-git.js';
import { extraComparison, makeEntry, type Entry } from '../report.js';
import { fmtMs, newStoreDir } from './shared.js';

export const cachedGitDir = (ctx: BenchContext): string => path.join(ctx.tree.base, 'git-aware.git');

/**
 * Puts a clean git repository of the tree at `<root>/.git` (setup): the cached one, else the shadow
 * repository of the earlier figures (the whole tree is committed there already; a final `add -A` +
 * commit catches the files the figures edited), else `git init` + `add -A` + commit.
 */
async function enterGit(ctx: BenchContext, keep: boolean): Promise<void> {
  const dotGit = path.join(ctx.tree.root, '.git');
  const env = gitEnv(dotGit, ctx.tree.root);
  const opts = { env, cwd: ctx.tree.root };
  // Files rewritten less than a second before git writes its index would be "racily clean" in it
  // (git then distrusts their stat data), so wait a little after putting them back.
  if ((await resetFiles(ctx.tree, allMutable(ctx.mutable))) > 0) await new Promise((r) => setTimeout(r, 1100));
  const cached = cachedGitDir(ctx);
  if (keep && existsSync(cached)) {
    await fsp.rename(cached, dotGit);
    await run('git', ['update-index', '-q', '--refresh'], opts).catch(() => undefined);
    return;
  }
  if (ctx.shared.shadow) {
    ctx.log('  (setup) the shadow repository becomes the workspace .git');
    await fsp.rename(ctx.shared.shadow.gitDir, dotGit);
    ctx.shared.shadow = undefined;
    await run('git', ['add', '-A'], opts);
    await run('git', ['commit', '-q', '--allow-empty', '-m', 'clean'], opts);
    return;
  }
  ctx.log('  (setup) git init + add -A + commit in the workspace');
  const repo = await initShadow(dotGit, ctx.tree.root);
  await shadowCheckpoint(repo);
}

/** Takes `<root>/.git` out of the workspace again: into the cache when kept, else deleted. */
export async function leaveGit(ctx: BenchContext, keep: boolean): Promise<void> {
  const dotGit = path.join(ctx.tree.root, '.git');
  if (!existsSync(dotGit)) return;
  if (keep && !existsSync(cachedGitDir(ctx))) await fsp.rename(dotGit, cachedGitDir(ctx));
  else await fsp.rm(dotGit, { recursive: true, force: true });
}

export async function scanFirstGitFigure(ctx: BenchContext, keep: boolean): Promise<Entry> {
  await enterGit(ctx, keep);
  let open: OpenSession | undefined;
  let last: ScanResult | undefined;
  let storeBytes: number | null = null;
  const stores: string[] = [];
  try {
    const drop = async (): Promise<void> => {
      if (open) await closeStore(open.store);
      open = undefined;
    };
    const r = await measureInterleaved(ctx.heavy, {
      ckpt: async (i) => {
        await drop();
        const res = await scanFirstGit(newStoreDir(ctx, 'git'), ctx.tree.root);
        open = res.open;
        stores.push(open.storeDir);
        last = res.result;
        ctx.log(`  scan-first-git ckpt #${i}: ${fmtMs(res.ms)}`);
        return res.ms;
      },
      find: () => findStatPass(ctx.tree.root),
    });
    if (open) storeBytes = (await diskUsage(open.storeDir)).allocated;
    await drop();
    return makeEntry({
      name: 'scan-first-git',
      unit: 'ms',
      ckpt: r.ckpt,
      baseline: `${FIND_DESCRIPTION} (floor)`,
      base: r.find,
      goal: 'about one stat pass (ratio ≈ 1)',
      extra: {
        ...extraComparison('vs_scan_first', 'ms', r.ckpt, ctx.shared.scanFirstMs),
        scan: scanStats(last),
        ckpt_store_bytes: storeBytes,
      },
    });
  } finally {
    for (const dir of stores) await fsp.rm(dir, { recursive: true, force: true });
    await leaveGit(ctx, keep);
  }
}
