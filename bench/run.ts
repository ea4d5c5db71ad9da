// `npm run bench`: generates (or reuses) the benchmark tree, measures every figure against its
// baseline in one run, prints a table (or one JSON document with --json) and cleans up.
// Progress always goes to stderr; stdout carries only the result.
import { existsSync, mkdtempSync, promises as fsp, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseBenchArgs, USAGE, type BenchArgs } from './args.js';
import { closeStore, loadCkpt } from './ckpt-api.js';
import { allMutable, pickMutable, type BenchContext } from './context.js';
import { ensureTree, resetFiles, type Tree } from './gen/tree.js';
import { machine } from './machine.js';
import { errorText, toJson, toMarkdown, toTable, type Entry, type Report } from './report.js';
import { captureOneFigure } from './figures/capture-one.js';
import { diskFirstFigure } from './figures/disk-first.js';
import { openSessionFigure } from './figures/open-session.js';
import { restore1000Figure } from './figures/restore-1000.js';
import { scanFirstFigure } from './figures/scan-first.js';
import { leaveGit, scanFirstGitFigure } from './figures/scan-first-git.js';
import { scanIncrementalFigure } from './figures/scan-incremental.js';
import { restore580GitFigure, scanCheckoutGitFigure } from './figures/history-git.js';
import { hookCaptureFigure, hookScanDaemonFigure, hookScanFigure } from './figures/hook.js';
import { daemonScanIncrementalFigure } from './figures/daemon-scan-incremental.js';
import { httpHookCaptureFigure } from './figures/http-hook-capture.js';
import { agentToolCallFigure } from './figures/agent-tool-call.js';
import { cliScanFigure } from './figures/cli-scan.js';

/** Figures in the order they run (later ones reuse the store and shadow repo of scan-first). */
const FIGURES: { name: string; run: (ctx: BenchContext, cached: boolean) => Promise<Entry> }[] = [
  { name: 'scan-first', run: scanFirstFigure },
  { name: 'disk-first', run: diskFirstFigure },
  { name: 'scan-incremental', run: scanIncrementalFigure },
  { name: 'capture-one', run: captureOneFigure },
  { name: 'restore-1000', run: restore1000Figure },
  { name: 'open-session', run: openSessionFigure },
  { name: 'hook-capture', run: hookCaptureFigure },
  { name: 'hook-scan', run: hookScanFigure },
  { name: 'hook-scan-daemon', run: hookScanDaemonFigure },
  { name: 'cli-scan', run: cliScanFigure },
  { name: 'scan-first-git', run: scanFirstGitFigure },
  { name: 'scan-checkout-git', run: scanCheckoutGitFigure },
  { name: 'restore-580-git', run: restore580GitFigure },
  { name: 'daemon-scan-incremental', run: daemonScanIncrementalFigure },
  { name: 'http-hook-capture', run: httpHookCaptureFigure },
  { name: 'agent-tool-call', run: agentToolCallFigure },
];

const log = (msg: string): void => void process.stderr.write(`[bench] ${msg}\n`);

async function main(): Promise<number> {
  let args: BenchArgs;
  try {
    args = parseBenchArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${errorText(err)}\n\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (args.from) {
    const saved = JSON.parse(await fsp.readFile(args.from, 'utf8')) as Report;
    process.stdout.write(`${args.markdown ? toMarkdown(saved) : toTable(saved, process.stdout.isTTY === true)}\n`);
    return 0;
  }
  const unknown = (args.only ?? []).filter((n) => !FIGURES.some((f) => f.name === n));
  if (unknown.length) {
    process.stderr.write(`unknown figure(s): ${unknown.join(', ')}\n`);
    return 2;
  }
  const started = Date.now();
  const warmup = args.warmup ?? 1;
  const runs = args.runs ?? (args.quick ? 3 : 5);
  const cacheDir = args.dir ? path.resolve(args.dir) : os.tmpdir();
  await fsp.mkdir(cacheDir, { recursive: true });
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'ckpt-bench-run-'));
  let tree: Tree | undefined;
  let ctx: BenchContext | undefined;
  // A cached tree (kept now, or by an earlier --keep run) stays; one generated just for this run goes.
  let cached = args.keep;
  const mutable = pickMutable(args.files);

  // Leave nothing behind on Ctrl-C: the scratch folder, a git repo inside the tree, an uncached tree.
  const onSignal = (sig: NodeJS.Signals): void => {
    log(`${sig}: cleaning up`);
    rmSync(runDir, { recursive: true, force: true });
    if (tree) {
      rmSync(path.join(tree.root, '.git'), { recursive: true, force: true });
      if (!cached) rmSync(tree.base, { recursive: true, force: true });
    }
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    const got = await ensureTree({ files: args.files, seed: args.seed }, cacheDir, log);
    tree = got.tree;
    cached ||= got.reused;
    log(`${got.reused ? 'reusing' : 'using'} tree ${tree.root} (${tree.files} files, ${(tree.bytes / 1e9).toFixed(3)} GB)`);
    ctx = {
      tree,
      runDir,
      heavy: { warmup, runs, flush: true },
      light: { warmup: Math.max(warmup, 3), runs: Math.max(runs, args.quick ? 10 : 30) },
      gitLight: { warmup, runs, flush: true },
      quick: args.quick,
      log,
      mutable,
      shared: {},
      stores: [],
    };
    if (got.reused) {
      await leaveGit(ctx, cached); // a repo left in the tree by an interrupted run
      await resetFiles(tree, allMutable(mutable));
    }
    await loadCkpt().then(
      () => log(`ckpt library loaded from ${process.env.CKPT_BENCH_LIB ?? 'src/index.ts'}`),
      (err: unknown) => log(`ckpt library unavailable: ${errorText(err)} (baselines still run)`),
    );
    const results: Entry[] = [];
    for (const fig of FIGURES) {
      if (args.only && !args.only.includes(fig.name)) continue;
      log(`${fig.name} …`);
      const t0 = Date.now();
      try {
        results.push(await fig.run(ctx, cached));
      } catch (err) {
        log(`${fig.name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        results.push({ name: fig.name, ckpt_ms: null, baseline: null, baseline_ms: null, ratio: null, error: `harness: ${errorText(err)}` });
      }
      const e = results[results.length - 1];
      log(`${fig.name} done in ${((Date.now() - t0) / 1000).toFixed(1)} s${e?.error ? ` — ${String(e.error)}` : ''}`);
    }
    const report = {
      machine: machine(),
      tree: { files: tree.files, bytes: tree.bytes, seed: tree.seed, quick: args.quick, total_s: Math.round((Date.now() - started) / 100) / 10 },
      results,
    };
    const render = (color: boolean): string => (args.json ? toJson(report) : args.markdown ? toMarkdown(report) : toTable(report, color));
    process.stdout.write(`${render(process.stdout.isTTY === true)}\n`);
    if (args.out) await fsp.writeFile(args.out, `${render(false)}\n`);
    log(`finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return 0;
  } finally {
    for (const s of ctx?.stores ?? []) await closeStore(s).catch(() => undefined);
    await fsp.rm(runDir, { recursive: true, force: true });
    if (tree) {
      if (cached) {
        await leaveGit(ctx ?? ({ tree } as BenchContext), true);
        await resetFiles(tree, allMutable(mutable));
        log(`kept tree at ${tree.base} (reused by runs with the same --files/--seed${args.dir ? '/--dir' : ''})`);
      } else if (existsSync(tree.base)) await fsp.rm(tree.base, { recursive: true, force: true });
    }
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
