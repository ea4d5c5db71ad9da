// Issue 16, item 2: SIGKILL at every write step. As faults.test.ts, but the CLI child kills itself
// just before its k-th write of a side; the next command (a scan, which first finishes or abandons
// an interrupted restore) must work and leave the before- or after-state, verify must pass, and
// nothing may be left over (store temp files only until `gc`). For operations that write the
// workspace, the next command is also killed at each of its own steps (a kill during crash
// recovery) before one more command runs and the invariants are checked.
// `npm test` runs a sample; CKPT_RELIABILITY_FULL=1 every step (recovery kills: every step of the
// recovery after every workspace-side kill). Figures: $CKPT_RELIABILITY_OUT/kills.json.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FULL, killCase, measure, measureRecovery, pickStep, pool, recordSuite, sampleSteps, type Baseline, type CaseOutcome, type OperationRow } from './fault-harness.js';
import type { Side } from './fault-fs.js';
import { selectedScenarios } from './scenarios.js';

const base = mkdtempSync(join(tmpdir(), 'ckpt-kills-'));
const PARALLEL = 2;
/** Short version: the operations whose recovery is also killed (one kill each). */
const SHORT_RECOVERY_OPS = new Set(['restore']);

interface Row extends OperationRow {
  kills: number;
  recoveryKills: number;
}
const { rows, failuresSeen } = recordSuite<Row>('kills', base, (sum) => ({
  kills: sum((r) => r.kills),
  killsDuringRecovery: sum((r) => r.recoveryKills),
  killsNotReached: sum((r) => r.notReached),
}));

describe('SIGKILL at every write step, also during recovery (issue 16)', () => {
  for (const [index, scenario] of selectedScenarios().entries()) {
    it.concurrent(`${scenario.name}: killed at any write step, the next command recovers to the before- or after-state`, async () => {
      const b: Baseline = await measure(base, scenario);
      const plain: { side: Side; step: number }[] = [];
      for (const side of ['store', 'workspace'] as const) {
        if (b.counts[side] === 0) continue;
        const salt = index * 2 + (side === 'store' ? 0 : 1) + 1000;
        for (const step of FULL ? sampleSteps(b.counts[side], Infinity) : [pickStep(b.counts[side], salt)]) plain.push({ side, step });
      }
      const outcomes: (CaseOutcome & { recoveryFired?: boolean })[] = await pool(
        plain.map((c) => () => killCase(base, scenario, b, c.side, c.step)),
        PARALLEL,
      );

      // Kills during recovery: after a kill in the workspace phase (staging or placing) the next
      // command has a restore to abandon or finish; it is killed at each of its own steps in turn.
      // CKPT_RELIABILITY_RECOVERY_SEEDS=N: in a full run, recovery kills after N workspace kills (evenly spread), not all.
      const seeds = Number(process.env.CKPT_RELIABILITY_RECOVERY_SEEDS ?? Infinity);
      const recoverySeeds =
        b.counts.workspace === 0 ? [] : FULL ? sampleSteps(b.counts.workspace, seeds) : SHORT_RECOVERY_OPS.has(scenario.name) ? [pickStep(b.counts.workspace, index + 2000)] : [];
      const nested: (() => Promise<CaseOutcome & { recoveryFired?: boolean }>)[] = [];
      for (const step of recoverySeeds) {
        const counts = await measureRecovery(base, scenario, 'workspace', step);
        if (!counts) continue;
        for (const side of ['workspace', 'store'] as const) {
          if (counts[side] === 0 || (!FULL && side === 'store')) continue;
          for (const j of FULL ? sampleSteps(counts[side], Infinity) : [pickStep(counts[side], index + 3000)]) {
            nested.push(() => killCase(base, scenario, b, 'workspace', step, { side, step: j }));
          }
        }
      }
      const recovery = await pool(nested, PARALLEL);
      const failures = [...outcomes, ...recovery].flatMap((o) => o.failures);
      failuresSeen.push(...failures);
      rows.push({
        operation: scenario.name,
        stepsStore: b.counts.store,
        stepsWorkspace: b.counts.workspace,
        kills: outcomes.filter((o) => o.fired).length + recovery.filter((o) => o.fired).length,
        recoveryKills: recovery.filter((o) => o.recoveryFired).length,
        notReached: outcomes.filter((o) => !o.fired).length,
        failures: failures.length,
      });
      expect(failures).toEqual([]);
    }, FULL ? 3_600_000 : 120_000);
  }
});
