// The daemon's touch tracker builds a large tree's watches in slices (a real-Claude probe: a 30,000-
// folder tree's SessionStart took 1.85 s with the loop blocked, and every other hook the daemon served
// waited). Until the last folder has its watch the set is not whole: takes ask for a full scan, and so
// does the first take after (a folder watched late may have changed after the full scan passed it).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createTouchTracker } from '../src/daemon/touch-tracker.js';
import { makeTempDirs } from './helpers/temp.js';

const settle = () => new Promise((r) => setTimeout(r, 100));
const FOLDERS = 200;

it("a tree's watches are made in slices, the loop served between them; the set is trusted once built and taken whole", async () => {
  const dirs = await makeTempDirs('ckpt-touch-slices-');
  const root = dirs.workspace;
  for (let i = 0; i < FOLDERS; i++) mkdirSync(join(root, `d${i % 10}`, `e${i}`), { recursive: true });
  const total = 1 + 10 + FOLDERS;
  // A slice of 0 ms makes one folder per slice.
  const tracker = createTouchTracker({ root, sliceMs: 0 });
  try {
    expect(tracker.watchedDirs).toBeLessThan(total);
    // The loop runs between slices: a timer fires before the build is done.
    await new Promise((r) => setTimeout(r, 0));
    expect(tracker.watchedDirs).toBeLessThan(total);
    expect(await tracker.take()).toBeUndefined(); // before the watches: unknown
    writeFileSync(join(root, 'd9', `e${FOLDERS - 1}`, 'during.txt'), 'while the watches were being made');
    expect(await tracker.take()).toBeUndefined(); // still building
    for (let i = 0; i < 10_000 && tracker.watchedDirs < total; i++) await new Promise((r) => setImmediate(r));
    expect(tracker.watchedDirs).toBe(total);
    expect(await tracker.take()).toBeUndefined(); // built over several slices: one more full scan
    writeFileSync(join(root, 'd3', 'e3', 'after.txt'), 'after');
    await settle();
    expect(await tracker.take()).toEqual(new Set(['d3/e3/after.txt']));
  } finally {
    tracker.close();
    await dirs.cleanup();
  }
});
