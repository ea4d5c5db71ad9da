// The engine of the reliability suites (issue 16): builds the fault-injecting preload, runs an
// operation's CLI command in a child process with a fault at one write step, and checks the
// invariants — the command failed with IO (exit 6) or succeeded; the workspace is exactly the before-
// or the after-state; the next command works (and finishes any interrupted restore); `ckpt verify`
// passes; no staging file is left in the workspace, and no temp file or lock in the store.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll } from 'vitest';
import { CKPT_BIN } from '../helpers/cli.js';
import { FIXED_DEFECTS } from './defects.js';
import { RELIABILITY_FULL, writeFigures } from './figures.js';
import type { FaultAction, FaultConfig, FaultReport, Side } from './fault-fs.js';
import { MAIN, OTHER, type Scenario, type ScenarioDirs } from './scenarios.js';
import { findNames, isLockName, isStagingName, isStoreTempName, snapshotTree, treeDiff, type Tree } from './tree.js';

/** The error codes injected (CKPT_RELIABILITY_ERRORS=EIO,… narrows them for a quicker full run). */
export const ERRORS: FaultAction[] = (process.env.CKPT_RELIABILITY_ERRORS?.split(',') as FaultAction[] | undefined) ?? ['ENOSPC', 'EIO', 'EACCES', 'EROFS'];
export const FULL = RELIABILITY_FULL;

const SEAM = fileURLToPath(new URL('./fault-fs.ts', import.meta.url));

/**
 * A fault seam (`entry`, a .ts file) compiled once to one ES module for `node --import` (esbuild, a
 * few ms), in `outDir` (default: a temp folder of its own).
 */
export function seamModule(entry: string, outDir?: string): () => Promise<string> {
  let preload: Promise<string> | undefined;
  return () => {
    preload ??= (async () => {
      const out = join(outDir ?? mkdtempSync(join(tmpdir(), 'ckpt-fault-seam-')), entry.replace(/^.*\//, '').replace(/\.ts$/, '.mjs'));
      await build({ entryPoints: [entry], outfile: out, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'error' });
      return out;
    })();
    return preload;
  };
}

/** The file-system seam compiled for `node --import`. */
export const preloadModule = seamModule(SEAM);

export interface Run<R = FaultReport> {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  report?: R;
}

/** Runs `ckpt --json --store S --workspace W --session main ARGS` in a child, with a fault if given. */
export async function runCkpt(dirs: ScenarioDirs, args: string[], fault?: Omit<FaultConfig, 'store' | 'workspace' | 'report'>): Promise<Run> {
  const module = await preloadModule();
  const report = join(dirs.store, '..', `report-${Math.random().toString(36).slice(2)}.json`);
  const config: FaultConfig = { store: dirs.store, workspace: dirs.workspace, report, ...fault };
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', CKPT_FAULT: JSON.stringify(config), NODE_OPTIONS: `--import=${module}` };
  delete env.CKPT_HOME;
  return runReporting<FaultReport>(dirs.store, dirs.workspace, args, env, report);
}

/**
 * Runs `ckpt --json --store STORE --workspace WS --session main ARGS` in a child with `env` (never the
 * caller's CKPT_STORE), then reads and removes the report its seam wrote at `report` (none: killed).
 */
export async function runReporting<R>(store: string, workspace: string, args: string[], env: NodeJS.ProcessEnv, report: string): Promise<Run<R>> {
  const childEnv = { ...env };
  delete childEnv.CKPT_STORE;
  const run = await new Promise<Run<R>>((resolve, reject) => {
    const child = spawn(process.execPath, [CKPT_BIN, '--json', '--store', store, '--workspace', workspace, '--session', MAIN, ...args], {
      cwd: workspace,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  try {
    run.report = JSON.parse(readFileSync(report, 'utf8')) as R;
    rmSync(report, { force: true });
  } catch {
    // killed: no report
  }
  return run;
}

/** A fresh store + workspace pair in its own temp folder, set up for `scenario`. */
export async function freshDirs(base: string, scenario: Scenario): Promise<ScenarioDirs & { dir: string }> {
  const dir = mkdtempSync(join(base, `${scenario.name}-`));
  const dirs = { dir, store: join(dir, 'store'), workspace: join(dir, 'ws') };
  mkdirSync(dirs.workspace);
  await scenario.setup(dirs);
  return dirs;
}

/** What one clean run of an operation does: its steps per side, the states around it, and the trace. */
export interface Baseline {
  before: Tree;
  after: Tree;
  counts: Record<Side, number>;
  trace: FaultReport['trace'];
}

export async function measure(base: string, scenario: Scenario): Promise<Baseline> {
  const dirs = await freshDirs(base, scenario);
  try {
    const before = snapshotTree(dirs.workspace);
    const run = await runCkpt(dirs, scenario.args);
    if (run.code !== 0 || !run.report) throw new Error(`${scenario.name}: the clean run failed (exit ${run.code}): ${run.stderr}`);
    return { before, after: snapshotTree(dirs.workspace), counts: run.report.counts, trace: run.report.trace };
  } finally {
    rmSync(dirs.dir, { recursive: true, force: true });
  }
}

/** Paths a result reports as left alone because of an I/O error past the point of no return. */
function ioSkipped(stdout: string): Set<string> {
  try {
    const r = JSON.parse(stdout) as { skipped?: { path: string; why: string }[] };
    return new Set((r.skipped ?? []).filter((s) => s.why.startsWith('io:')).map((s) => s.path));
  } catch {
    return new Set();
  }
}

/**
 * Whether the workspace is the before- or the after-state. A restore that reported a path skipped
 * for an I/O error after its point of no return (placing goes on with the others) may leave exactly
 * those paths in their before-state.
 */
export function checkState(now: Tree, b: Baseline, skippedIo: ReadonlySet<string> = new Set()): string | undefined {
  const fromBefore = treeDiff(now, b.before);
  const fromAfter = treeDiff(now, b.after);
  if (fromBefore.length === 0 || fromAfter.length === 0) return undefined;
  // …and the folders above them, which cannot go while the skipped path is still in them.
  const related = (p: string): boolean => [...skippedIo].some((s) => p === s || p.startsWith(`${s}/`) || s.startsWith(`${p}/`));
  if (skippedIo.size > 0 && fromAfter.every((p) => related(p) && now.get(p) === b.before.get(p))) return undefined;
  const show = (ps: string[]): string => ps.slice(0, 6).map((p) => `${p} [${now.get(p) ?? 'missing'}]`).join(', ');
  return `workspace is neither the before-state (differs at ${show(fromBefore)}) nor the after-state (differs at ${show(fromAfter)})`;
}

/** Lock folders a killed process left: their holder is dead, so time may pass for them (stale takeover). */
export function ageLocks(store: string): void {
  const old = new Date(Date.now() - 60_000);
  for (const rel of findNames(store, isLockName)) utimesSync(join(store, rel), old, old);
}

export interface CaseOutcome {
  /** False when the run ended before the chosen step (nothing injected). */
  fired: boolean;
  failures: string[];
}

/**
 * The invariants after a command that failed (or was killed): the next command (a scan of the main
 * session, which first finishes or abandons an interrupted restore) works, the workspace is the
 * before- or after-state, verify passes, nothing is left over. `killed` allows store temp files,
 * which only GC removes (by age: a live writer's temp file must never be taken), and checks that a
 * `gc --grace 0s` removes them.
 */
export async function checkAfter(
  dirs: ScenarioDirs,
  b: Baseline,
  label: string,
  killed: boolean,
  skippedIo: ReadonlySet<string>,
  tempsAllowed = killed,
  check?: Scenario['check'],
): Promise<string[]> {
  const failures: string[] = [];
  if (killed) ageLocks(dirs.store);
  const next = await runCkpt(dirs, ['scan']);
  if (next.code !== 0) failures.push(`${label}: the next command (scan) failed with exit ${next.code}: ${next.stderr.trim().slice(0, 300)}`);
  const state = checkState(snapshotTree(dirs.workspace), b, skippedIo);
  if (state) failures.push(`${label}: after the next command, ${state}`);
  const broken = await check?.(dirs);
  if (broken) failures.push(`${label}: after the next command, ${broken}`);
  const staging = findNames(dirs.workspace, isStagingName);
  if (staging.length) failures.push(`${label}: staging files left in the workspace: ${staging.join(', ')}`);
  // A lock whose holder died (or whose release failed) is left until the next command that needs it
  // takes it over as stale (its mtime is no longer refreshed): prove that with commands taking them.
  if (findNames(dirs.store, isLockName).length) {
    ageLocks(dirs.store);
    // A killed `session rm` leaves the removed session's own lock: the command that needs it is that
    // removal again, which takes the stale lock over (or finishes a removal past its commit point).
    const otherLocked = findNames(dirs.store, isLockName).some((k) => k.includes(`/sessions/${OTHER}/`));
    const otherRm = otherLocked ? [['session', 'rm', OTHER]] : [];
    for (const args of [['capture', 'a.txt'], ['settle', 'a.txt'], ['gc'], ...otherRm]) {
      const r = await runCkpt(dirs, args);
      const gone = args[0] === 'session' && r.code === 3; // SESSION_NOT_FOUND: it was removed already
      if (r.code !== 0 && !gone) failures.push(`${label}: ${args[0]} over a stale lock failed with exit ${r.code}: ${r.stderr.trim().slice(0, 300)}`);
    }
    const locks = findNames(dirs.store, isLockName);
    if (locks.length) failures.push(`${label}: lock folders left in the store: ${locks.join(', ')}`);
  }
  const verify = await runCkpt(dirs, ['verify']);
  if (verify.code !== 0) failures.push(`${label}: verify failed (exit ${verify.code}): ${(verify.stdout + verify.stderr).trim().slice(0, 400)}`);
  let temps = findNames(dirs.store, isStoreTempName);
  if (temps.length && tempsAllowed) {
    const gc = await runCkpt(dirs, ['gc', '--grace', '0s']);
    if (gc.code !== 0) failures.push(`${label}: gc failed (exit ${gc.code}): ${gc.stderr.trim().slice(0, 300)}`);
    temps = findNames(dirs.store, isStoreTempName);
    if (temps.length) failures.push(`${label}: temp files left in the store after gc: ${temps.join(', ')}`);
  } else if (temps.length) failures.push(`${label}: temp files left in the store: ${temps.join(', ')}`);
  return failures;
}

/** One error fault at step `step` of `side`. */
export async function errorCase(base: string, scenario: Scenario, b: Baseline, side: Side, step: number, action: FaultAction): Promise<CaseOutcome> {
  const dirs = await freshDirs(base, scenario);
  const label = `${scenario.name} ${side} step ${step} ${action}`;
  try {
    const run = await runCkpt(dirs, scenario.args, { side, step, action });
    if (!run.report?.fired) return { fired: false, failures: run.code === 0 ? [] : [`${label}: fault not reached, yet exit ${run.code}: ${run.stderr.trim()}`] };
    const at = `${label} (${run.report.fired.op} ${run.report.fired.path})`;
    const failures: string[] = [];
    if (run.code !== 0 && run.code !== 6) failures.push(`${at}: exit ${run.code} (expected 0 or IO = 6): ${run.stderr.trim().slice(0, 300)}`);
    if (run.code === 6 && !/"code":"IO"/.test(run.stderr)) failures.push(`${at}: exit 6 without an IO error: ${run.stderr.trim().slice(0, 300)}`);
    const skippedIo = run.code === 0 ? ioSkipped(run.stdout) : new Set<string>();
    const state = checkState(snapshotTree(dirs.workspace), b, skippedIo);
    // Past the point of no return a failed closing step is finished by the next command: judged there.
    if (state && run.code === 0) failures.push(`${at}: right after the command, ${state}`);
    // A temp file may stay only when the fault hit its own removal (cleanup): then it is GC's, by age.
    const cleanupFault = /(^|\.)(unlink|rm)(Sync)?$/.test(run.report.fired.op) && run.report.fired.path.includes('.ckpt-tmp-');
    failures.push(...(await checkAfter(dirs, b, at, false, skippedIo, cleanupFault, scenario.check)));
    return { fired: true, failures };
  } finally {
    rmSync(dirs.dir, { recursive: true, force: true });
  }
}

/**
 * SIGKILL at step `step` of `side`; then, when `recoveryStep` is given, the next command is killed
 * at that step of its own (the workspace side first, where recovery writes, else the store side),
 * before the invariants are checked after one more command.
 */
export async function killCase(
  base: string,
  scenario: Scenario,
  b: Baseline,
  side: Side,
  step: number,
  recovery?: { side: Side; step: number },
): Promise<CaseOutcome & { recoveryFired?: boolean }> {
  const dirs = await freshDirs(base, scenario);
  const label = `${scenario.name} ${side} step ${step} kill${recovery ? ` + next command killed at ${recovery.side} step ${recovery.step}` : ''}`;
  try {
    const run = await runCkpt(dirs, scenario.args, { side, step, action: 'kill' });
    if (run.signal !== 'SIGKILL') return { fired: false, failures: run.code === 0 ? [] : [`${label}: kill not reached, yet exit ${run.code}: ${run.stderr.trim()}`] };
    let recoveryFired: boolean | undefined;
    if (recovery) {
      ageLocks(dirs.store);
      const again = await runCkpt(dirs, ['scan'], { side: recovery.side, step: recovery.step, action: 'kill' });
      recoveryFired = again.signal === 'SIGKILL';
      if (!recoveryFired && again.code !== 0) return { fired: true, recoveryFired, failures: [`${label}: the next command failed with exit ${again.code}: ${again.stderr.trim().slice(0, 300)}`] };
    }
    return { fired: true, recoveryFired, failures: await checkAfter(dirs, b, label, true, new Set(), true, scenario.check) };
  } finally {
    rmSync(dirs.dir, { recursive: true, force: true });
  }
}

/** Counts the steps of the next command (scan) after a kill at `step`: where recovery kills go. */
export async function measureRecovery(base: string, scenario: Scenario, side: Side, step: number): Promise<Record<Side, number> | undefined> {
  const dirs = await freshDirs(base, scenario);
  try {
    const run = await runCkpt(dirs, scenario.args, { side, step, action: 'kill' });
    if (run.signal !== 'SIGKILL') return undefined;
    ageLocks(dirs.store);
    const next = await runCkpt(dirs, ['scan']);
    return next.report?.counts;
  } finally {
    rmSync(dirs.dir, { recursive: true, force: true });
  }
}

/** Runs `tasks` with at most `limit` in flight. */
export async function pool<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

/** The per-operation rows of a fault or kill suite; what every row has. */
export interface OperationRow {
  operation: string;
  stepsStore: number;
  stepsWorkspace: number;
  notReached: number;
  failures: number;
}

/**
 * Collects a suite's rows and the failures it saw; after the suite, publishes its figures (the sums
 * `figures` makes of the rows, with the fixed defects and any failure seen as an open one) and
 * removes its scratch folder.
 */
export function recordSuite<R extends OperationRow>(suite: string, base: string, figures: (sum: (f: (r: R) => number) => number) => Record<string, number>): { rows: R[]; failuresSeen: string[] } {
  const rows: R[] = [];
  const failuresSeen: string[] = [];
  afterAll(async () => {
    const sum = (f: (r: R) => number): number => rows.reduce((n, r) => n + f(r), 0);
    await writeFigures({
      suite,
      figures: { operations: rows.length, stepsStore: sum((r) => r.stepsStore), stepsWorkspace: sum((r) => r.stepsWorkspace), ...figures(sum), failures: sum((r) => r.failures), full: FULL ? 1 : 0, seed: SEED },
      details: rows.map((r) => ({ ...r })),
      defects: [...FIXED_DEFECTS, ...failuresSeen.map((f) => `open: ${f}`)],
    });
    rmSync(base, { recursive: true, force: true });
  });
  return { rows, failuresSeen };
}

/**
 * The short version's sample seed: a different sample every day (so CI covers more steps over time),
 * fixed by CKPT_RELIABILITY_SEED to repeat a run; every failure names its step.
 */
export const SEED = Number(process.env.CKPT_RELIABILITY_SEED ?? Math.floor(Date.now() / 86_400_000));

/** A step in 1..n picked by `seed` and `salt` (deterministic). */
export function pickStep(n: number, salt: number): number {
  let x = (SEED * 2654435761 + salt * 40503 + 12345) >>> 0;
  x = (x ^ (x >>> 13)) >>> 0;
  x = Math.imul(x, 0x5bd1e995) >>> 0;
  x = (x ^ (x >>> 15)) >>> 0;
  return 1 + (x % n);
}

/** Steps 1..n, or an even sample of at most `cap` of them (always the first and the last). */
export function sampleSteps(n: number, cap: number): number[] {
  if (n <= cap) return Array.from({ length: n }, (_, i) => i + 1);
  if (cap <= 1) return [Math.ceil(n / 2)];
  const out = new Set<number>();
  for (let i = 0; i < cap; i++) out.add(1 + Math.round(((n - 1) * i) / (cap - 1)));
  return [...out].sort((a, b) => a - b);
}
