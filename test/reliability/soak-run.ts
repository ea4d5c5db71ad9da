// The soak (issue 16, item 4): `procs` real child processes (soak-worker.ts) run random operations on
// one store and two workspaces for `seconds`; then the store is checked: `verify` passes, every log's
// seqs are dense from 1 (read from the raw lines), every restore recorded as committed can be
// replayed (its plan loads and every blob it writes is present and intact), every capture and settle
// after the session's prune point has its content readable, no staging file is left in a workspace
// and nothing is left in the store's tmp/. Returns the operations per kind, errors per code, checks.
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore, verify, type EventBase } from '../../src/index.js';
import { loadPlans, planOf } from '../../src/session/restore-plans.js';
import { replay } from '../../src/session/replay.js';
import type { WorkerArgs, WorkerSummary } from './soak-worker.js';
import type { SuiteFigures } from './figures.js';

const WORKER = fileURLToPath(new URL('./soak-worker.ts', import.meta.url));

export interface SoakOptions {
  dir: string;
  procs: number;
  seconds: number;
  seed?: number;
  gcGraceMs?: number;
}

export interface SoakReport {
  seed: number;
  procs: number;
  seconds: number;
  ops: Record<string, number>;
  errors: Record<string, number>;
  effects: Record<string, number>;
  checks: Record<string, number>;
  /** Everything that is not a legitimate outcome: unexpected errors, crashed or hung workers, failed checks. */
  failures: string[];
}

function runWorker(args: WorkerArgs, timeoutMs: number): Promise<WorkerSummary | string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return resolve(`worker ${args.worker} (seed ${args.seed}) exited ${code ?? signal}${signal === 'SIGKILL' ? ' (hung past its deadline)' : ''}: ${err.slice(-2000)}`);
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1)!) as WorkerSummary);
      } catch {
        resolve(`worker ${args.worker} printed no summary: ${out.slice(-500)} ${err.slice(-1000)}`);
      }
    });
  });
}

async function prepareWorkspace(root: string): Promise<void> {
  await mkdir(join(root, 'd0'), { recursive: true });
  for (let i = 0; i < 12; i++) await writeFile(join(root, `f${i}.txt`), `initial ${i}\n`);
  for (let i = 0; i < 4; i++) await writeFile(join(root, 'd0', `g${i * 3}.txt`), `initial g${i}\n`);
}

async function listAll(root: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(root, rel), { withFileTypes: true }).catch(() => [])) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    out.push(r);
    if (e.isDirectory()) out.push(...(await listAll(root, r)));
  }
  return out;
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const store = join(options.dir, 'store');
  const workspaces = [join(options.dir, 'ws-a'), join(options.dir, 'ws-b')];
  for (const ws of workspaces) await prepareWorkspace(ws);
  {
    const s = await openStore({ dir: store, retention: false });
    for (const root of workspaces) {
      const ws = await s.openWorkspace(root);
      const session = await ws.create({ title: 'soak' });
      await session.scan({ tool: 'Bash' });
    }
  }

  const report: SoakReport = { seed, procs: options.procs, seconds: options.seconds, ops: {}, errors: {}, effects: {}, checks: {}, failures: [] };
  const results = await Promise.all(
    Array.from({ length: options.procs }, (_, worker) =>
      runWorker({ store, workspaces, seconds: options.seconds, seed: seed + worker, worker, gcGraceMs: options.gcGraceMs ?? 20_000 }, options.seconds * 1000 + 120_000),
    ),
  );
  for (const r of results) {
    if (typeof r === 'string') {
      report.failures.push(r);
      continue;
    }
    for (const [k, n] of Object.entries(r.ops)) report.ops[k] = (report.ops[k] ?? 0) + n;
    for (const [k, n] of Object.entries(r.errors)) report.errors[k] = (report.errors[k] ?? 0) + n;
    for (const [k, n] of Object.entries(r.effects)) report.effects[k] = (report.effects[k] ?? 0) + n;
    report.failures.push(...r.unexpected.map((u) => `worker ${r.worker} (seed ${r.seed}): ${u}`));
  }
  await checkStore(store, workspaces, report);
  return report;
}

async function checkStore(dir: string, workspaces: string[], report: SoakReport): Promise<void> {
  const checks = report.checks;
  const count = (k: string, n = 1): void => void (checks[k] = (checks[k] ?? 0) + n);
  const fail = (what: string): void => void report.failures.push(what);
  const store = await openStore({ dir, retention: false });

  const v = await verify(store.ctx);
  count('verify.problems', v.problems.length);
  for (const p of v.problems.slice(0, 20)) fail(`verify: ${JSON.stringify(p)}`);

  for (const root of workspaces) {
    const ws = await store.openWorkspace(root);
    let metas: Awaited<ReturnType<typeof ws.list>> = [];
    try {
      metas = await ws.list();
    } catch (err) {
      fail(`${root}: listing the sessions failed: ${(err as Error).message}`);
    }
    for (const meta of metas) {
      count('sessions');
      const key = `workspaces/${ws.id}/sessions/${meta.id}/events.jsonl`;
      const raw = (await readFile(join(dir, key), 'utf8')).split('\n');
      if (raw.at(-1) !== '') fail(`${key}: torn last line after every process finished`);
      raw.slice(0, -1).forEach((line, i) => {
        if ((JSON.parse(line) as { seq: unknown }).seq !== i + 1) fail(`${key}: line ${i + 1} has seq ${(JSON.parse(line) as { seq: unknown }).seq}`);
      });
      count('log-lines', raw.length - 1);
      const session = await ws.get(meta.id);
      const events: EventBase[] = await session.events();
      const prunedBefore = replay(events).prunedBefore;
      const committed = new Set(events.filter((e) => e.type === 'restore_committed').map((e) => e.id));
      const restores = events.filter((e) => e.type === 'restore_started' && committed.has(e.id));
      try {
        await loadPlans(store.ctx.blobs, restores);
      } catch (err) {
        fail(`${key}: a committed restore's plan does not load: ${(err as Error).message}`);
        continue;
      }
      for (const e of restores) {
        count('restores-committed');
        if (e.seq < prunedBefore) continue;
        for (const entry of planOf(e)) {
          if (!entry.blob) continue;
          count('restore-blobs-checked');
          await store.ctx.blobs.get(entry.blob).catch((err: Error) => fail(`${key}: restore at seq ${e.seq}: blob of ${entry.path}: ${err.message}`));
        }
      }
      for (const e of events) {
        if (e.type !== 'capture' && e.type !== 'settle') continue;
        count(`${e.type}s`);
        if (e.seq < prunedBefore) continue;
        for (const f of (e.files as { path: string; blob?: string }[]) ?? []) {
          if (!f.blob) continue;
          count('content-blobs-checked');
          await store.ctx.blobs.get(f.blob).catch((err: Error) => fail(`${key}: ${e.type} at seq ${e.seq}: content of ${f.path}: ${err.message}`));
        }
      }
    }
    const staging = (await listAll(root)).filter((p) => p.includes('.ckpt-stage-'));
    count('staging-files-left', staging.length);
    for (const p of staging.slice(0, 5)) fail(`${root}: staging file left: ${p}`);
  }
  const tmp = await listAll(join(dir, 'tmp'));
  count('store-tmp-files-left', tmp.length);
  for (const p of tmp.slice(0, 5)) fail(`store tmp/ holds ${p} after every process finished`);
}

/** The soak's figures for `soak.json` (figures.ts). */
export function soakFigures(report: SoakReport): SuiteFigures {
  const figures: Record<string, number> = { procs: report.procs, seconds: report.seconds, seed: report.seed };
  let ops = 0;
  for (const [k, n] of Object.entries(report.ops).sort()) {
    figures[`ops.${k}`] = n;
    ops += n;
  }
  figures['ops.total'] = ops;
  let errors = 0;
  for (const [k, n] of Object.entries(report.errors).sort()) {
    figures[`errors.${k}`] = n;
    errors += n;
  }
  figures['errors.total'] = errors;
  for (const [k, n] of Object.entries(report.effects).sort()) figures[`effects.${k}`] = n;
  for (const [k, n] of Object.entries(report.checks).sort()) figures[`checks.${k}`] = n;
  figures.failures = report.failures.length;
  return { suite: 'soak', figures, defects: report.failures };
}
