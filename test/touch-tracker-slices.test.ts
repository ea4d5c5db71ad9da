// The daemon's touch tracker builds a large tree's watches in slices (a real-Claude probe: a 30,000-
// folder tree's SessionStart took 1.85 s with the loop blocked, and every other hook the daemon served
// waited). A take waits until the last folder has its watch: a full scan run meanwhile could pass a
// folder before its watch, and what changed there in between would be in no set.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createTouchTracker } from '../src/daemon/touch-tracker.js';
import { makeTempDirs } from './helpers/temp.js';

const settle = () => new Promise((r) => setTimeout(r, 100));
const FOLDERS = 200;

it("a tree's watches are made in slices, the loop served between them; a take waits for the last", async () => {
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
    const first = tracker.take();
    writeFileSync(join(root, 'd9', `e${FOLDERS - 1}`, 'during.txt'), 'while the watches were being made');
    expect(await first).toBeUndefined(); // before the watches: unknown (a full scan)
    expect(tracker.watchedDirs).toBe(total);
    writeFileSync(join(root, 'd3', 'e3', 'after.txt'), 'after');
    await settle();
    expect(await tracker.take()).toEqual(new Set(['d3/e3/after.txt']));
  } finally {
    tracker.close();
    await dirs.cleanup();
  }
});
