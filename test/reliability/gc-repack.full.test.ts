// Issue 27 item 13, long tier: gc's pack rewrite (scenario gc-repack: a pack with 35 live and 35 dead
// blobs) killed at every one of its store write steps, and failed at every step with a rotating
// error code (ENOSPC, EIO, EACCES, EROFS; CKPT_RELIABILITY_FULL=1 in faults.test.ts runs all four at
// every step). Same invariants as faults/kills.test.ts: exit 0 or IO, the next command works, verify
// passes, no temp file left after gc, no lock left.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ERRORS, errorCase, killCase, measure, pool, sampleSteps } from './fault-harness.js';
import { SCENARIOS } from './scenarios.js';

const base = mkdtempSync(join(tmpdir(), 'ckpt-gc-repack-full-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const scenario = SCENARIOS.find((s) => s.name === 'gc-repack')!;

describe('gc pack rewrite at every write step', () => {
  it('killed or failed at any store write step: the next command recovers, verify passes, nothing left over', async () => {
    const b = await measure(base, scenario);
    expect(b.counts.store).toBeGreaterThan(10);
    const steps = sampleSteps(b.counts.store, Infinity);
    const outcomes = await pool(
      steps.flatMap((step) => [() => killCase(base, scenario, b, 'store', step), () => errorCase(base, scenario, b, 'store', step, ERRORS[step % ERRORS.length]!)]),
      2,
    );
    expect(outcomes.filter((o) => !o.fired)).toEqual([]);
    expect(outcomes.flatMap((o) => o.failures)).toEqual([]);
  }, 900_000);
});
