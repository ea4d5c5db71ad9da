// knownForPaths (the backwards, per-path reading of what ckpt last recorded) must agree with replay's
// `known` on every history: checked on random histories of settles, captures and restores.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventBase, RestorePlanEntry, RestoreStartedEvent } from '../format/event.js';
import { knownForPaths, replay } from './replay.js';
import { planOf } from './restore-plans.js';

const PATHS = ['a', 'b', 'c/d', 'e'];
const path = fc.constantFrom(...PATHS);
const image = fc.oneof(
  fc.record({ path, state: fc.constant('file' as const), blob: fc.constantFrom('1'.repeat(64), '2'.repeat(64)), mode: fc.constantFrom(0o644, 0o755) }),
  fc.record({ path, state: fc.constant('absent' as const) }),
  fc.record({ path, state: fc.constant('symlink' as const), target: fc.constantFrom('x', 'y') }),
);
const entry: fc.Arbitrary<RestorePlanEntry> = fc.oneof(
  fc.record({ path, action: fc.constant('write' as const), blob: fc.constant('3'.repeat(64)), mode: fc.constant(0o600) }),
  fc.record({ path, action: fc.constant('delete' as const) }),
);
const step = fc.oneof(
  fc.record({ kind: fc.constant('settle' as const), files: fc.array(image, { maxLength: 4 }) }),
  fc.record({ kind: fc.constant('capture' as const), files: fc.array(image, { maxLength: 3 }), restore: fc.boolean() }),
  fc.record({ kind: fc.constant('restore' as const), plan: fc.uniqueArray(entry, { maxLength: 4, selector: (e) => e.path }), commit: fc.boolean() }),
);

type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

function history(steps: Step[]): EventBase[] {
  const events: EventBase[] = [];
  const push = (e: Record<string, unknown>): void => void events.push({ v: 1, seq: events.length + 1, at: '', ...e } as EventBase);
  push({ type: 'session', kind: 'root' });
  steps.forEach((s, i) => {
    if (s.kind === 'settle') push({ type: 'settle', tag: '0.1', files: s.files });
    else if (s.kind === 'capture') push({ type: 'capture', tag: `0.${i}`, turn: 0, k: i, tool: s.restore ? 'restore' : 'Bash', files: s.files });
    else {
      push({ type: 'restore_started', id: `r${i}`, to: '0', recovery: '0.1', plan: s.plan });
      if (s.commit) push({ type: 'restore_committed', id: `r${i}`, result: {} });
    }
  });
  return events;
}

describe('knownForPaths', () => {
  it('agrees with replay(events).known for every path', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 25 }), async (steps) => {
        const events = history(steps);
        const known = replay(events).known;
        const got = await knownForPaths(events, PATHS, async (s: RestoreStartedEvent) => planOf(s));
        for (const p of PATHS) expect(got.get(p)).toEqual(known.get(p));
      }),
      { numRuns: 300 },
    );
  });
});
