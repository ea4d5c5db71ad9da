// Regression tests for the defects the reliability suites found (defects.ts), each at the exact
// write step that exposed it (located in a clean run's trace, so they follow the code if steps move).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { measure, runCkpt, freshDirs } from './fault-harness.js';
import { SCENARIOS, MAIN } from './scenarios.js';
import { findNames, isStoreTempName } from './tree.js';

const base = mkdtempSync(join(tmpdir(), 'ckpt-fault-regressions-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const scenario = (name: string) => SCENARIOS.find((s) => s.name === name)!;

describe('defects found by fault injection (issue 16)', () => {
  it('an append whose fsync fails leaves no event behind: the failed capture is not in the log', async () => {
    const capture = scenario('capture');
    const b = await measure(base, capture);
    const step = b.trace.find((e) => e.op === 'fsyncSync' && e.path.endsWith(`${MAIN}/events.jsonl`))!.step;
    const dirs = await freshDirs(base, capture);
    const run = await runCkpt(dirs, capture.args, { side: 'store', step, action: 'EIO' });
    expect(run.report?.fired?.op).toBe('fsyncSync');
    expect(run.code).toBe(6);
    const log = await runCkpt(dirs, ['log']);
    expect(JSON.parse(log.stdout).checkpoints).toEqual([]);
    expect((await runCkpt(dirs, ['verify'])).code).toBe(0);
  });

  it('a restore whose restore_started append fails (fsync) is not finished later: the command failed, nothing changes', async () => {
    const restore = scenario('restore');
    const b = await measure(base, restore);
    // The second append of the restore is restore_started (the first is its recovery capture).
    const syncs = b.trace.filter((e) => e.op === 'fsyncSync' && e.path.endsWith(`${MAIN}/events.jsonl`));
    const dirs = await freshDirs(base, restore);
    const run = await runCkpt(dirs, restore.args, { side: 'store', step: syncs[1]!.step, action: 'EIO' });
    expect(run.code).toBe(6);
    expect((await runCkpt(dirs, ['scan'])).code).toBe(0);
    expect(readFileSync(join(dirs.workspace, 'a.txt'), 'utf8')).toBe('alpha two\n');
    const log = readFileSync(findLog(dirs.store), 'utf8');
    expect(log).not.toContain('"restore_started"');
    expect((await runCkpt(dirs, ['verify'])).code).toBe(0);
  });

  it('a created object whose temp name cannot be removed is still created: the fork succeeds', async () => {
    const fork = scenario('fork');
    const b = await measure(base, fork);
    const step = b.trace.find((e) => e.op === 'rmSync' && e.path.includes('.events.jsonl.ckpt-tmp-'))!.step;
    const dirs = await freshDirs(base, fork);
    const run = await runCkpt(dirs, fork.args, { side: 'store', step, action: 'ENOSPC' });
    expect(run.report?.fired?.op).toBe('rmSync');
    expect(run.code, run.stderr).toBe(0);
    const forked = JSON.parse(run.stdout).session.id as string;
    expect((await runCkpt(dirs, ['--session', forked, 'log'])).code).toBe(0);
    // The stranded temp name is GC's (by age).
    expect(findNames(dirs.store, isStoreTempName)).toHaveLength(1);
    expect((await runCkpt(dirs, ['gc', '--grace', '0s'])).code).toBe(0);
    expect(findNames(dirs.store, isStoreTempName)).toEqual([]);
  });

  it('verify accepts metadata.json missing or behind its log (a cache rebuilt from it), not one that disagrees', async () => {
    const dirs = await freshDirs(base, scenario('restore'));
    const metaFile = findLog(dirs.store).replace(/events\.jsonl$/, 'metadata.json');
    const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
    expect((await runCkpt(dirs, ['turn'])).code).toBe(0);
    writeFileSync(metaFile, JSON.stringify(meta)); // behind by the turn event
    expect((await runCkpt(dirs, ['verify'])).code).toBe(0);
    rmSync(metaFile);
    expect((await runCkpt(dirs, ['verify'])).code).toBe(0);
    writeFileSync(metaFile, JSON.stringify({ ...meta, title: 'not what the log says' }));
    expect((await runCkpt(dirs, ['verify'])).code).toBe(5);
  });
});

function findLog(store: string): string {
  const rel = findNames(store, (n) => n === 'events.jsonl').find((p) => p.includes(`/${MAIN}/`))!;
  return join(store, rel);
}
