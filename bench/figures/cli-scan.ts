// cli-scan (issue 31): `ckpt scan` as a user or a script runs it — a new process, no daemon — after one
// file changed in the bench tree, vs shadow git `add -A` + `commit` of the same change. The floor is
// Node's start plus a stat pass of the tree. Needs `npm run build` (the CLI runs the built bundle).
// CKPT_BENCH_OLD_BIN adds another build as a third series, interleaved round by round (built-cli.ts).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../ckpt-api.js';
import type { BenchContext } from '../context.js';
import { shadowCheckpoint } from '../baselines/shadow-git.js';
import { measureInterleaved } from '../measure.js';
import { makeEntry, type Entry } from '../report.js';
import { BIN, copyStore, oldBin, oldExtra, spawnNode } from './built-cli.js';
import { baselineSession, fmtMs, shadowRepo, writeRel } from './shared.js';

function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.CKPT_HOME;
  delete env.CKPT_STORE;
  return env;
}

export async function cliScanFigure(ctx: BenchContext): Promise<Entry> {
  const idx = ctx.mutable.incremental;
  const rel = ctx.tree.relPath(idx);
  const original = ctx.tree.content(idx);
  const old = oldBin();
  let store: { dir: string; session: string; oldDir?: string } | Error;
  try {
    if (!existsSync(path.join(REPO_ROOT, 'dist', 'bundle', 'main.js'))) throw new Error('run `npm run build` first (the CLI runs the built bundle)');
    const open = await baselineSession(ctx);
    const session = open.session.id;
    if (!session) throw new Error('the baseline session has no id');
    store = { dir: open.storeDir, session, ...(old ? { oldDir: await copyStore(ctx, open.storeDir, 'cli-scan-old') } : {}) };
  } catch (err) {
    store = err instanceof Error ? err : new Error(String(err));
  }
  const repo = await shadowRepo(ctx);
  // Each series writes its own version of the file first (untimed), so each sees exactly one change.
  const change = (key: string, i: number): Promise<void> => writeRel(ctx, rel, Buffer.concat([original, Buffer.from(`// cli scan ${key} ${i}\n`)]));
  const scanRun = (key: string, bin: string, dir: string, session: string) => async (i: number) => {
    await change(key, i);
    const { ms, out } = await spawnNode([bin, '--store', dir, '--workspace', ctx.tree.root, '--session', session, '--json', 'scan'], cliEnv(), ctx.tree.root);
    const files = (JSON.parse(out) as { files: { path: string }[] }).files;
    if (files.length !== 1 || files[0]?.path !== rel) throw new Error(`ckpt scan found ${files.length} changed paths, expected ${rel} alone: ${out.slice(0, 200)}`);
    ctx.log(`  cli-scan ${key} #${i}: ${fmtMs(ms)}`);
    return ms;
  };
  const s = typeof store === 'string' || store instanceof Error ? undefined : store;
  const r = await measureInterleaved(ctx.heavy, {
    ckpt: s ? scanRun('ckpt', BIN, s.dir, s.session) : undefined,
    old: s?.oldDir && old ? scanRun('old', old, s.oldDir, s.session) : undefined,
    git: async (i: number) => {
      await change('git', i);
      const ms = await shadowCheckpoint(repo);
      ctx.log(`  cli-scan shadow git #${i}: ${fmtMs(ms)}`);
      return ms;
    },
  });
  return makeEntry({
    name: 'cli-scan',
    unit: 'ms',
    ckpt: store instanceof Error ? store : r.ckpt,
    baseline: 'shadow git `add -A` + `commit` of the same change',
    base: r.git,
    goal: `ratio ≤ 2 (\`ckpt scan\` in a new process, no daemon, ${ctx.tree.files}-file tree, one file changed)`,
    extra: { tree_files: ctx.tree.files, ...(old ? oldExtra(old, r.old, r.git) : {}) },
  });
}
