// The resident daemon through a long session under a small heap (issue 28): a real `ckpt serve`
// (the built CLI) under --max-old-space-size=40 receives Claude Code's Edit capture+settle pairs and
// prompts over HTTP while its session's log grows to 30,000 events (the history appended through the
// library between its hook calls, as other hook processes would: bench/daemon-long-session.ts). It
// must not die of heap exhaustion, and what it holds must not grow with the history. (Before: every
// event of the log stayed decoded in the live feed; the issue measured death between 16,000 and 32,000
// events under a 40 MB heap.) Memory is compared, never time: the machine's load makes time meaningless.
import { expect, it } from 'vitest';
import { longSession } from '../bench/daemon-long-session.js';

it('runs through 30,000 events under a 40 MB heap, its memory flat (RSS within 20 MB, heap within 10 MB)', async () => {
  const [r] = await longSession({ events: 0, every: 100, stages: [1_000, 30_000], maxOldSpaceMb: 40 });
  expect(r!.died, r!.died).toBeUndefined();
  const [early, late] = r!.points;
  expect(late!.events).toBe(30_000);
  expect(late!.rssMb - early!.rssMb, JSON.stringify(r!.points)).toBeLessThanOrEqual(20);
  expect(late!.heapUsedMb - early!.heapUsedMb, JSON.stringify(r!.points)).toBeLessThanOrEqual(10);
}, 600_000);
