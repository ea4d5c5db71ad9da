// `ckpt demo` end to end: the scripted session runs, checks itself, and reports its steps as JSON.
import { rm } from 'node:fs/promises';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-demo-test-');
});
afterEach(() => dirs.cleanup());

it('runs the demo on the default store ($CKPT_HOME) and shows capture, scan, diff, restore and its undo', async () => {
  const r = await runCli(['demo', '--json'], { cwd: dirs.base, env: { CKPT_HOME: dirs.store } });
  expect(r.code, r.stderr).toBe(0);
  const report = r.json();
  try {
    expect(report.store).toBe(dirs.store);
    const steps = report.steps.map((s: { step: string }) => s.step);
    for (const step of ['capture', 'scan', 'diff', 'restore', 'undo']) expect(steps).toContain(step);
    const restore = report.steps.find((s: { step: string }) => s.step === 'restore').detail;
    expect(restore.deleted).toEqual(['build/out.js', 'src/greet.ts']);
    expect(restore.undo).toMatch(/^\d+\.\d+$/);
    const list = await runCli(['--workspace', report.workspace, 'log', '--json'], { cwd: dirs.base, env: { CKPT_HOME: dirs.store } });
    expect(list.json().checkpoints.length).toBeGreaterThanOrEqual(4);
  } finally {
    await rm(report.workspace, { recursive: true, force: true });
  }
});
