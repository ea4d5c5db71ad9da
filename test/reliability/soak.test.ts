// The soak (issue 16, item 4) at its short size inside `npm test` (4 processes x 8 s); with
// CKPT_RELIABILITY_FULL=1 at full size (8 x 60 s). Writes `soak.json` under CKPT_RELIABILITY_OUT.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { bySize, writeFigures } from './figures.js';
import { runSoak, soakFigures } from './soak-run.js';

it('processes racing every operation on one store leave it consistent', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ckpt-soak-'));
  try {
    const report = await runSoak({ dir, procs: bySize(4, 8), seconds: bySize(8, 60) });
    await writeFigures(soakFigures(report));
    expect(report.failures).toEqual([]);
    expect(Object.values(report.ops).reduce((a, b) => a + b, 0)).toBeGreaterThan(20);
    expect(report.checks['verify.problems']).toBe(0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 600_000);
