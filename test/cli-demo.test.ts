// `ckpt demo` end to end: the scripted session runs, checks itself, and reports its steps as JSON;
// it leaves no scratch folder (nor its session) behind unless --keep; its log is the `ckpt log` text.
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let tmp: string;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-demo-test-');
  tmp = join(dirs.base, 'tmp'); // the demo's scratch folders go here (TMPDIR)
  await mkdir(tmp);
});
afterEach(() => dirs.cleanup());

const env = () => ({ CKPT_HOME: dirs.store, TMPDIR: tmp });

it('with --keep runs on the default store ($CKPT_HOME), shows capture, scan, diff, restore and its undo, and keeps the folder', async () => {
  const r = await runCli(['demo', '--keep', '--json'], { cwd: dirs.base, env: env() });
  expect(r.code, r.stderr).toBe(0);
  const report = r.json();
  try {
    expect(report.store).toBe(dirs.store);
    expect(report.kept).toBe(true);
    const steps = report.steps.map((s: { step: string }) => s.step);
    for (const step of ['capture', 'scan', 'diff', 'refused', 'restore', 'undo']) expect(steps).toContain(step);
    const restore = report.steps.find((s: { step: string }) => s.step === 'restore').detail;
    expect(restore.deleted).toEqual(['build/out.js', 'src/greet.ts', 'build', 'notes.txt']); // the folder the build made goes too, and the hand-written notes
    expect(restore.undo).toMatch(/^\d+\.\d+$/);
    // From inside the kept folder the workspace is found: the printed hint works as is.
    const list = await runCli(['log', '--json'], { cwd: join(report.workspace, 'src'), env: env() });
    expect(list.json().checkpoints.length).toBeGreaterThanOrEqual(4);
  } finally {
    await rm(report.workspace, { recursive: true, force: true });
  }
});

it('without --keep leaves no scratch folder, no session and no workspace behind; its log is the ckpt log text', async () => {
  const r = await runCli(['demo'], { cwd: dirs.base, env: env() });
  expect(r.code, r.stderr).toBe(0);
  // Node's own compile cache (bin/ckpt.js enables it on Node >= 22.1, in node's default folder under
  // TMPDIR, shared by every program that enables it) is not the demo's scratch.
  expect((await readdir(tmp)).filter((n) => n !== 'node-compile-cache')).toEqual([]);
  const workspace = /^workspace (.+)$/m.exec(r.stdout)![1]!;
  expect(r.stdout).toMatch(/^ {2}turn 1 {2}"add a greeting" {2}· just now$/m);
  expect(r.stdout).toMatch(/^ {4}2\.2 +user +notes\.txt \(new\)/m);
  expect(r.stdout).toMatch(/^ {4}2\.3 +restore +to 1 \(restore 2\.3 undoes it\)/m);
  expect(r.stdout).toContain('--keep');
  expect(workspace.startsWith(tmp)).toBe(true);
  // Not even its workspace: `workspace list` (and so `stats` and the web page) show nothing of it.
  expect(await readdir(join(dirs.store, 'workspaces')).catch(() => [])).toEqual([]);
  expect((await runCli(['--store', dirs.store, 'workspace', 'list', '--json'], { cwd: dirs.base, env: env() })).json().workspaces).toEqual([]);
});
