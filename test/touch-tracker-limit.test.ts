// The daemon's touch tracker at inotify's limits (a probe found both):
// - the watch limit: with it below the workspace's folder count, the take after next trusted a set
//   while most folders had no watch, and hand edits there were lost to `restore N`. The limit is
//   lowered in a user namespace of its own (`unshare -U -r`: /proc/sys/user/max_inotify_watches
//   there, nothing changed for the machine);
// - the event queue, one per process: a burst in another workspace may overflow it for this one too.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { createTouchTracker } from '../src/daemon/touch-tracker.js';
import { makeTempDirs } from './helpers/temp.js';

const TRACKER = resolve('dist/daemon/touch-tracker.js');
const canUnshare = spawnSync('unshare', ['-U', '-r', 'sh', '-c', 'test -w /proc/sys/user/max_inotify_watches'], { encoding: 'utf8' }).status === 0;

it.skipIf(!canUnshare)('with folders it cannot watch, every take asks for a full scan: never a set that misses an edit', async () => {
  const dirs = await makeTempDirs('ckpt-touch-limit-');
  const root = dirs.workspace;
  for (let i = 0; i < 60; i++) {
    mkdirSync(join(root, `d${i}`));
    writeFileSync(join(root, `d${i}`, 'f.txt'), 'old');
  }
  // Each round: an edit in every folder, then a take; a set must name every edit (or the take is undefined).
  const script = `
    import { writeFileSync } from 'node:fs';
    import { createTouchTracker } from ${JSON.stringify(TRACKER)};
    const root = ${JSON.stringify(root)};
    const t = createTouchTracker({ root });
    const answers = [];
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 60; i++) writeFileSync(root + '/d' + i + '/f.txt', 'round ' + round);
      await new Promise((r) => setTimeout(r, 50));
      const set = await t.take();
      answers.push(set === undefined ? 'full' : String([...Array(60).keys()].filter((i) => !set.has('d' + i + '/f.txt')).length) + ' missed');
    }
    t.close();
    console.log(JSON.stringify({ watched: t.watchedDirs, answers }));
  `;
  const out = spawnSync('unshare', ['-U', '-r', 'sh', '-c', 'echo 20 > /proc/sys/user/max_inotify_watches && exec node --input-type=module -e "$0"', script], { encoding: 'utf8' });
  expect(out.status, out.stderr).toBe(0);
  const { answers } = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { answers: string[] };
  expect(answers).toEqual(Array(6).fill('full'));
});

it("a burst of events in another workspace past half the queue: this workspace's next take asks for a full scan", async () => {
  const dirs = await makeTempDirs('ckpt-touch-queue-');
  const [a, b] = [join(dirs.base, 'a'), join(dirs.base, 'b')];
  await mkdir(a);
  await mkdir(b);
  const ta = createTouchTracker({ root: a, maxEvents: 200 });
  const tb = createTouchTracker({ root: b, maxEvents: 200 });
  const settle = () => new Promise((r) => setTimeout(r, 100));
  try {
    await ta.take();
    await tb.take();
    writeFileSync(join(a, 'x.txt'), 'x');
    await settle();
    expect(await ta.take()).toEqual(new Set(['x.txt']));
    for (let i = 0; i < 300; i++) writeFileSync(join(b, `f${i}`), 'y');
    writeFileSync(join(a, 'x.txt'), 'x2');
    await settle();
    expect(await ta.take()).toBeUndefined();
    writeFileSync(join(a, 'x.txt'), 'x3');
    await settle();
    expect(await ta.take()).toEqual(new Set(['x.txt']));
  } finally {
    ta.close();
    tb.close();
  }
});
