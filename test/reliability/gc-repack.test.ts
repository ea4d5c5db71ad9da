// Issue 27 item 13, fast sample: gc's pack rewrite (scenario gc-repack) failed and killed at its commit
// steps — the old pack taken out of its name (quarantine) and its index removed right after. A kill
// between the two leaves the pack in quarantine beside its index (the next gc puts it back); an error
// on the index removal puts it back at once. Every step with every error and a kill at every step:
// gc-repack.full.test.ts (long tier); faults/kills.test.ts sample one step per run among all operations.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { errorCase, killCase, measure } from './fault-harness.js';
import { SCENARIOS } from './scenarios.js';

const base = mkdtempSync(join(tmpdir(), 'ckpt-gc-repack-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const scenario = SCENARIOS.find((s) => s.name === 'gc-repack')!;

describe('gc pack rewrite at its commit steps (fast sample)', () => {
  it('an error or a kill where the old pack is quarantined and its index removed: verify passes, nothing lost or left over', async () => {
    const b = await measure(base, scenario);
    const quarantine = b.trace.find((t) => t.side === 'store' && /rename/i.test(t.op) && /^packs\/\.[^/]+\.pack\.ckpt-tmp-gc-/.test(t.path));
    expect(quarantine, JSON.stringify(b.trace.map((t) => `${t.step} ${t.op} ${t.path}`))).toBeDefined();
    const indexRemoval = b.trace.find((t) => t.side === 'store' && t.step === quarantine!.step + 1);
    expect(indexRemoval?.path).toMatch(/^packs\/[^/]+\.idx$/);
    const outcomes = await Promise.all([
      errorCase(base, scenario, b, 'store', indexRemoval!.step, 'EIO'),
      killCase(base, scenario, b, 'store', indexRemoval!.step),
    ]);
    expect(outcomes.map((o) => o.fired)).toEqual([true, true]);
    expect(outcomes.flatMap((o) => o.failures)).toEqual([]);
  }, 60_000);
});
