// Issue 16, item 1: every error at every write step. For each operation (scenarios.ts) one clean run
// counts its write steps per side (store, workspace); then the k-th write of a side fails with
// ENOSPC / EIO / EACCES / EROFS in a real CLI child process, and the invariants are checked
// (fault-harness.ts). `npm test` runs an even sample of steps with one error code each (rotating);
// CKPT_RELIABILITY_FULL=1 runs every step with every code. Figures go to
// $CKPT_RELIABILITY_OUT/faults.json when that folder is named (`npm run reliability`).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERRORS, FULL, SEED, errorCase, measure, pickStep, pool, recordSuite, sampleSteps, type Baseline, type OperationRow } from './fault-harness.js';
import type { FaultAction, Side } from './fault-fs.js';
import { selectedScenarios } from './scenarios.js';

const base = mkdtempSync(join(tmpdir(), 'ckpt-faults-'));
const PARALLEL = 2;

interface Row extends OperationRow {
  faults: number;
}
const { rows, failuresSeen } = recordSuite<Row>('faults', base, (sum) => ({
  faultsInjected: sum((r) => r.faults),
  faultsNotReached: sum((r) => r.notReached),
  errorCodes: FULL ? ERRORS.length : 1,
}));

describe('fault injection at every write step (issue 16)', () => {
  for (const [index, scenario] of selectedScenarios().entries()) {
    it.concurrent(`${scenario.name}: an error at any write step leaves before- or after-state, verify passes, nothing left over`, async () => {
      const b: Baseline = await measure(base, scenario);
      const cases: { side: Side; step: number; action: FaultAction }[] = [];
      for (const side of ['store', 'workspace'] as const) {
        if (b.counts[side] === 0) continue;
        // Short version: one step per side, picked by the day's seed, with a rotating error code.
        if (!FULL) cases.push({ side, step: pickStep(b.counts[side], index * 2 + (side === 'store' ? 0 : 1)), action: ERRORS[(index + SEED) % ERRORS.length]! });
        else for (const step of sampleSteps(b.counts[side], Infinity)) for (const action of ERRORS) cases.push({ side, step, action });
      }
      const outcomes = await pool(
        cases.map((c) => () => errorCase(base, scenario, b, c.side, c.step, c.action)),
        PARALLEL,
      );
      const failures = outcomes.flatMap((o) => o.failures);
      failuresSeen.push(...failures);
      rows.push({
        operation: scenario.name,
        stepsStore: b.counts.store,
        stepsWorkspace: b.counts.workspace,
        faults: outcomes.filter((o) => o.fired).length,
        notReached: outcomes.filter((o) => !o.fired).length,
        failures: failures.length,
      });
      expect(failures).toEqual([]);
    }, FULL ? 3_600_000 : 120_000);
  }
});
