// cli-scan (issue 31): `ckpt scan` as a user or a script runs it — a new process, no daemon — after one
// file changed in the bench tree, vs shadow git `add -A` + `commit` of the same change. The floor is
// Node's start plus a stat pass of the tree. Needs `npm run build` (the CLI runs the built bundle).
// CKPT_BENCH_OLD_BIN=/path/to/other/bin/ckpt.js adds that build as a third series, interleaved round by
// round with the other two on a copy of the same store (before/after pairs of a CLI change).
import { spawn } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../ckpt-api.js';
import type { BenchContext } from '../context.js';
import { shadowCheckpoint } from '../baselines/shadow-git.js';
import { measureInterleaved, timed, type Sample } from '../measure.js';
import { errorText, makeEntry, ratio, type Entry } from '../report.js';
import { baselineSession, fmtMs, shadowRepo, writeRel } from './shared.js';

export const BIN = path.join(REPO_ROOT, 'bin', 'ckpt.js');

/** The other build's `bin/ckpt.js` named by CKPT_BENCH_OLD_BIN (must be built), else undefined. */
export function oldBin(): string | undefined {
  const bin = process.env.CKPT_BENCH_OLD_BIN;
  if (!bin) return undefined;
  const abs = path.resolve(bin);
  if (!existsSync(path.join(path.dirname(abs), '..', 'dist', 'bundle', 'main.js'))) throw new Error(`CKPT_BENCH_OLD_BIN=${bin}: no built bundle beside it (run \`npm run build\` there)`);
  return abs;
}

/** A copy of a store folder (setup), so that a second build works on the same history without sharing its scan index. */
export async function copyStore(ctx: BenchContext, storeDir: string, label: string): Promise<string> {
  const dir = path.join(ctx.runDir, `store-copy-${label}`);
  await fsp.rm(dir, { recursive: true, force: true });
  await fsp.cp(storeDir, dir, { recursive: true, verbatimSymlinks: true });
  return dir;
}

/** Spawns `node args…`; resolves to its wall time and stdout (rejects on a non-zero exit or output on stderr). */
export function spawnNode(args: string[], env: NodeJS.ProcessEnv, cwd: string, input = ''): Promise<{ ms: number; out: string }> {
  let out = '';
  return timed(
    () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
        let err = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (err += d));
        child.on('error', reject);
        child.on('close', (code) => (code === 0 && err === '' ? resolve() : reject(new Error(`${path.basename(args[0] ?? 'node')} exited ${code}: ${(err || out).slice(0, 300)}`))));
        child.stdin.end(input);
      }),
  ).then((ms) => ({ ms, out }));
}

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

/** `old_bin`, `old_ms` and `old_ratio` (the other build ÷ the baseline) of an entry. */
export function oldExtra(bin: string, old: Sample | Error | undefined, base: Sample | Error | undefined): Record<string, unknown> {
  if (old instanceof Error || old === undefined) return { old_bin: bin, old_ms: null, ...(old ? { old_error: errorText(old) } : {}) };
  return { old_bin: bin, old_ms: Math.round(old.median * 100) / 100, old_ratio: ratio(old.median, base instanceof Error || !base ? null : base.median) };
}
