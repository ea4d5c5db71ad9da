// Daemon watched scans against a probe of 2026-12-07 (a hostile tester with `ckpt serve`): a hard
// link inside the workspace — a write through one name changes the other, which no watcher event
// names — and a burst of events the daemon fell a little behind on, which overflowed the kernel's
// inotify queue without any stall: the watched scan recorded less than a full scan, and `restore N`
// was refused as drift or gave back old content.
import { linkSync, mkdirSync, readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTurn } from '../src/capture/turn.js';
import { createTouchTracker } from '../src/daemon/touch-tracker.js';
import { restore } from '../src/restore/index.js';
import { scan } from '../src/scan/index.js';
import { openStore } from '../src/store.js';
import { makeScanWorld, treeOf } from './fixtures/scan-world.js';
import { makeTempDirs } from './helpers/temp.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeScanWorld);

describe('a hard link inside the workspace', () => {
  it('a write through one recorded name: the watched scan leaves it to the full scan, which records both names', async () => {
    const w = await world();
    await w.write('a', 'one\n');
    await w.write('d/keep', 'k\n');
    linkSync(w.at('a'), w.at('d/b'));
    await scan(w.session);
    await startTurn(w.session);
    writeFileSync(w.at('d/b'), 'two\n');
    const r = await scan(w.session, { changedPaths: async () => new Set(['d/b']) });
    expect(r.watched, 'the full scan answered').toBeUndefined();
    expect(r.files.map((f) => [f.path, f.change])).toEqual([
      ['a', 'modified'],
      ['d/b', 'modified'],
    ]);
    const atTurn2 = await treeOf(w.root);
    await startTurn(w.session);
    const back = await restore(w.session, '2', {});
    expect(back.drift).toEqual([]);
    expect(await treeOf(w.root)).toEqual(atTurn2);
  });

  it('a write through an ignored name linked to a recorded file: the same', async () => {
    const w = await world();
    await w.write('.gitignore', 'build/\n');
    await w.write('src/out.js', 'v1\n');
    await w.write('build/.keep', '');
    linkSync(w.at('src/out.js'), w.at('build/out.js'));
    await scan(w.session);
    await startTurn(w.session);
    writeFileSync(w.at('build/out.js'), 'v2\n');
    const r = await scan(w.session, { changedPaths: async () => new Set(['build/out.js']) });
    expect(r.watched, 'the full scan answered').toBeUndefined();
    expect(r.files.map((f) => [f.path, f.change])).toEqual([['src/out.js', 'modified']]);
  });
});

describe("the touch tracker and the kernel's event queue", () => {
  it('a burst past the queue while the loop is busy (no stall): the set it hands over never misses a change', async () => {
    const dirs = await makeTempDirs('ckpt-touch-burst-');
    const root = dirs.workspace;
    for (let i = 0; i < 100; i++) writeFileSync(join(root, `f${i}`), '0');
    writeFileSync(join(root, 'g'), 'g0');
    const tracker = createTouchTracker({ root });
    try {
      expect(await tracker.take()).toBeUndefined(); // before the watches: unknown
      // Twice the kernel's queue, synchronously: the loop reads nothing meanwhile (well under the
      // 2 s stall rule), so the queue overflows; the write that matters comes last.
      const queue = Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim()) || 16384;
      const now = new Date();
      for (let round = 0; round * 100 < 2 * queue; round++) for (let i = 0; i < 100; i++) utimesSync(join(root, `f${i}`), now, new Date(now.getTime() - round));
      writeFileSync(join(root, 'g'), 'g1');
      // A folder made at the end of the burst: the overflow drops its creation (a second probe).
      mkdirSync(join(root, 'late'));
      writeFileSync(join(root, 'late', 'x'), 'one');
      await new Promise((r) => setTimeout(r, 100));
      const set = await tracker.take();
      expect(set === undefined || set.has('g'), `a set without g: ${set?.size} paths`).toBe(true);
      expect(set, 'a full scan is asked for').toBeUndefined();
      // That take watched it: an edit there is in the next set.
      writeFileSync(join(root, 'late', 'x'), 'two');
      await new Promise((r) => setTimeout(r, 50));
      expect([...((await tracker.take()) ?? ['(full scan)'])]).toEqual(['late/x']);
    } finally {
      tracker.close();
      await dirs.cleanup();
    }
  });
});

describe('folders made past the event cap (a probe: 6,000 files, then a folder, never watched)', () => {
  it('are watched all the same: after the full scan the cap asks for, an edit in one is in the set', async () => {
    const dirs = await makeTempDirs('ckpt-touch-cap-');
    const root = dirs.workspace;
    mkdirSync(join(root, 'gen'));
    const tracker = createTouchTracker({ root, maxEvents: 50 });
    try {
      expect(await tracker.take()).toBeUndefined();
      for (let i = 0; i < 200; i++) writeFileSync(join(root, 'gen', `f${i}`), '0');
      await new Promise((r) => setTimeout(r, 50)); // the burst's events delivered: past the cap
      mkdirSync(join(root, 'late'));
      await new Promise((r) => setTimeout(r, 50));
      writeFileSync(join(root, 'late', 'x'), 'one');
      await new Promise((r) => setTimeout(r, 50));
      expect(await tracker.take(), 'past the cap: a full scan').toBeUndefined();
      writeFileSync(join(root, 'late', 'x'), 'two');
      writeFileSync(join(root, 'gen', 'f7'), '1');
      await new Promise((r) => setTimeout(r, 50));
      expect([...((await tracker.take()) ?? ['(full scan)'])].sort()).toEqual(['gen/f7', 'late/x']);
    } finally {
      tracker.close();
      await dirs.cleanup();
    }
  });
});

// A real-Claude probe on a 20,000-file repo (2026-12-07): a Bash `mkdir -p gen/p1 && cp … gen/p1/` cost
// 0.5–1 s per call, since any folder among the touched paths handed over to the full scan.
describe('a folder made by a shell command', () => {
  it('is recorded by the watched scan, with what it holds, exactly as the full scan records it; the next touch there stays watched', async () => {
    const w = await world();
    await w.write('src/a.ts', 'a\n');
    await scan(w.session);
    await startTurn(w.session);
    const atTurn1 = await treeOf(w.root);
    mkdirSync(w.at('gen/p1/deep'), { recursive: true, mode: 0o750 });
    for (const f of ['gen/p1/x.ts', 'gen/p1/deep/y.ts']) writeFileSync(w.at(f), `${f}\n`);
    const r = await scan(w.session, { changedPaths: async () => new Set(['gen']) });
    expect(r.watched, 'the watched scan answered').toBeDefined();
    expect(r.files.map((f) => [f.path, f.change])).toEqual([
      ['gen', 'created'],
      ['gen/p1', 'created'],
      ['gen/p1/deep', 'created'],
      ['gen/p1/deep/y.ts', 'created'],
      ['gen/p1/x.ts', 'created'],
    ]);
    // A file added later in the folder only an owner record knows: still the watched scan.
    writeFileSync(w.at('gen/p1/z.ts'), 'z\n');
    const again = await scan(w.session, { changedPaths: async () => new Set(['gen/p1/z.ts']) });
    expect(again.watched).toBeDefined();
    expect(again.files.map((f) => [f.path, f.change])).toEqual([['gen/p1/z.ts', 'created']]);
    // The full scan of the same tree finds nothing more to record (the folders' modes included).
    expect((await scan(w.session)).files).toEqual([]);
    await startTurn(w.session);
    await restore(w.session, '1', {});
    expect(await treeOf(w.root)).toEqual(atTurn1);
  });
});

describe('an ignored folder holding a file a tool wrote by name, moved away by hand (a probe)', () => {
  it('the watched scan records that file deleted, as the full scan does', async () => {
    const dirs = await makeTempDirs('ckpt-watched-ignored-');
    const root = dirs.workspace;
    writeFileSync(join(root, '.gitignore'), 'build/\n');
    mkdirSync(join(root, 'build'));
    const store = await openStore({ dir: dirs.store });
    try {
      const session = await (await store.openWorkspace(root)).create();
      await session.scan();
      await session.capture(['build/x']);
      writeFileSync(join(root, 'build', 'x'), 'the agent wrote this\n');
      await session.settle(['build/x']);
      await store.ctx.afterCall.drain(); // its owner record follows the answer
      renameSync(join(root, 'build'), join(dirs.base, 'moved-away'));
      const r = await session.scan({ changedPaths: async () => new Set(['build']) });
      expect(r.files.map((f) => [f.path, f.change])).toEqual([['build/x', 'deleted']]);
    } finally {
      await store.close();
    }
  });
});

describe('a new folder whose rule file ignores everything in it, itself too', () => {
  it('gives way to the full scan: the rule file applies (else the index kept the old rules)', async () => {
    const dirs = await makeTempDirs('ckpt-watched-self-ignoring-');
    const root = dirs.workspace;
    writeFileSync(join(root, 'a.txt'), 'a\n');
    const store = await openStore({ dir: dirs.store });
    try {
      const session = await (await store.openWorkspace(root)).create();
      await session.scan();
      mkdirSync(join(root, 'g'));
      writeFileSync(join(root, 'g', '.gitignore'), '*\n');
      writeFileSync(join(root, 'g', 'x.txt'), 'x\n');
      // The watcher saw the folder made; its rule file was written before the folder had a watch.
      const r = await session.scan({ changedPaths: async () => new Set(['g']) });
      expect(r.watched, 'the full scan answered').toBeUndefined();
      expect(r.files.map((f) => [f.path, f.change])).toEqual([['g', 'created']]);
    } finally {
      await store.close();
    }
  });
});
