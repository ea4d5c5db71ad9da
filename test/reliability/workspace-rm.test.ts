// Issue 27 item 13: `ckpt workspace rm` (Store.removeWorkspace) killed and failed at its store write
// steps. The invariants differ from faults/kills.test.ts (whose next command works in the removed
// workspace): after a kill or an error, running the removal again finishes it (or finds nothing left:
// NOT_FOUND), nothing of the workspace stays in the store, another workspace of the store is intact,
// verify passes, and after gc no temp file or lock is left. `npm test` runs a sample (a kill and an
// error at steps picked by the day's seed); CKPT_RELIABILITY_FULL=1 every step, kills and all errors.
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/index.js';
import { ERRORS, FULL, ageLocks, pickStep, pool, runCkpt, sampleSteps } from './fault-harness.js';
import type { FaultAction } from './fault-fs.js';
import { SCENARIOS, type ScenarioDirs } from './scenarios.js';
import { findNames, isLockName, isStoreTempName } from './tree.js';

const base = mkdtempSync(join(tmpdir(), 'ckpt-ws-rm-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const ARGS = ['workspace', 'rm', '--yes'];

interface Dirs extends ScenarioDirs {
  dir: string;
  other: string;
  /** The removed workspace's store folder. */
  key: string;
}

/** Two sessions with history in the workspace to remove (the session-rm scenario), and another workspace. */
async function fresh(): Promise<Dirs> {
  const dir = mkdtempSync(join(base, 'case-'));
  const dirs = { dir, store: join(dir, 'store'), workspace: join(dir, 'ws'), other: join(dir, 'other') };
  mkdirSync(dirs.workspace);
  mkdirSync(dirs.other);
  await SCENARIOS.find((s) => s.name === 'session-rm')!.setup(dirs);
  writeFileSync(join(dirs.other, 'keep.txt'), 'keep\n');
  const store = await openStore({ dir: dirs.store });
  try {
    const s = await (await store.openWorkspace(dirs.other)).create({ id: 'stays' });
    await s.turn({ text: 'other workspace' });
    await s.capture(['keep.txt'], { tool: 'Edit' });
    const ws = await store.openWorkspace(dirs.workspace);
    return { ...dirs, key: join(dirs.store, 'workspaces', ws.id) };
  } finally {
    await store.close();
  }
}

async function check(d: Dirs, label: string): Promise<string[]> {
  const failures: string[] = [];
  ageLocks(d.store);
  const again = await runCkpt(d, ARGS);
  if (again.code !== 0 && again.code !== 3) failures.push(`${label}: workspace rm again failed with exit ${again.code}: ${again.stderr.trim().slice(0, 300)}`);
  // Empty folders may stay (a removal cut short after its last object); no file may.
  const files = existsSync(d.key) ? findNames(d.key, () => true).filter((rel) => statSync(join(d.key, rel)).isFile()) : [];
  if (files.length) failures.push(`${label}: the removed workspace's folder still holds ${files.join(', ')}`);
  const other = await runCkpt({ store: d.store, workspace: d.other }, ['--session', 'stays', 'log']);
  if (other.code !== 0 || !other.stdout.includes('other workspace')) failures.push(`${label}: the other workspace's log: exit ${other.code} ${other.stderr.trim().slice(0, 200)}`);
  const verify = await runCkpt(d, ['verify']);
  if (verify.code !== 0) failures.push(`${label}: verify failed (exit ${verify.code}): ${(verify.stdout + verify.stderr).trim().slice(0, 400)}`);
  const gc = await runCkpt(d, ['gc', '--grace', '0s']);
  if (gc.code !== 0) failures.push(`${label}: gc failed (exit ${gc.code}): ${gc.stderr.trim().slice(0, 300)}`);
  const left = [...findNames(d.store, isStoreTempName), ...findNames(d.store, isLockName)];
  if (left.length) failures.push(`${label}: left in the store after gc: ${left.join(', ')}`);
  return failures;
}

async function runCase(step: number, action: FaultAction): Promise<{ fired: boolean; failures: string[] }> {
  const d = await fresh();
  const label = `workspace rm, store step ${step} ${action}`;
  try {
    const run = await runCkpt(d, ARGS, { side: 'store', step, action });
    const fired = action === 'kill' ? run.signal === 'SIGKILL' : run.report?.fired !== undefined;
    if (!fired) return { fired, failures: [] };
    const failures: string[] = [];
    if (action !== 'kill' && run.code !== 0 && run.code !== 6) failures.push(`${label}: exit ${run.code} (expected 0 or IO = 6): ${run.stderr.trim().slice(0, 300)}`);
    return { fired, failures: [...failures, ...(await check(d, label))] };
  } finally {
    rmSync(d.dir, { recursive: true, force: true });
  }
}

describe('workspace rm under faults and kills (issue 27 item 13)', () => {
  it('killed or failed at a store write step, running it again finishes it; the other workspace and verify are fine', async () => {
    const d = await fresh();
    let steps: number;
    try {
      const clean = await runCkpt(d, ARGS);
      expect(clean.code, clean.stderr).toBe(0);
      steps = clean.report!.counts.store;
      expect(await check(d, 'clean run')).toEqual([]);
    } finally {
      rmSync(d.dir, { recursive: true, force: true });
    }
    expect(steps).toBeGreaterThan(3);
    const cases: { step: number; action: FaultAction }[] = FULL
      ? sampleSteps(steps, Infinity).flatMap((step) => (['kill', ...ERRORS] as FaultAction[]).map((action) => ({ step, action })))
      : [
          { step: pickStep(steps, 7001), action: 'kill' },
          { step: pickStep(steps, 7002), action: ERRORS[pickStep(ERRORS.length, 7003) - 1]! },
        ];
    const outcomes = await pool(cases.map((c) => () => runCase(c.step, c.action)), 2);
    expect(outcomes.flatMap((o) => o.failures)).toEqual([]);
  }, FULL ? 3_600_000 : 60_000);
});
