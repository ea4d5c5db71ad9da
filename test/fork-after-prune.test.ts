// Soak defect (issue 16): a fork copied the parent's events up to its fork point without the parent's
// prune point whenever the `prune` event itself lay after the fork point. The fork then held live
// captures whose blobs GC had already collected as retired in the parent: `verify` reported them
// missing and the fork's history could not be restored.
import { readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, prune, runGc, verify } from '../src/index.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs | undefined;
afterEach(() => dirs?.cleanup());

describe('fork of a pruned session', () => {
  it('carries the prune point, so what GC retired in the parent is retired in the fork', async () => {
    dirs = await makeTempDirs('ckpt-fork-prune-');
    const store = await openStore({ dir: dirs.store, retention: false });
    const ws = await store.openWorkspace(dirs.workspace);
    const s = await ws.create({ id: 'parent' });
    for (let turn = 1; turn <= 3; turn++) {
      await s.turn({ text: `turn ${turn}` });
      await s.capture(['a.txt'], { tool: 'Write' });
      await writeFile(join(dirs.workspace, 'a.txt'), `content of turn ${turn}\n`);
      await s.settle(['a.txt']);
    }
    const r = await prune(s, { keepTurns: 1 });
    expect(r.pruned).toBe(true);
    await runGc(store.ctx, { graceMs: 0 });
    // A fork point after the prune point but before the `prune` event.
    const fork = await ws.fork('parent', { atSeq: r.before + 1 });
    expect((await verify(store.ctx)).problems).toEqual([]);
    const cps = await fork.checkpoints();
    expect(cps.filter((c) => c.seq < r.before).every((c) => c.pruned)).toBe(true);
    await expect(fork.restore(cps[0]!.tag)).rejects.toMatchObject({ code: 'TAG_PRUNED' });
  });

  // Soak defect (issue 16): a fork references its parent's blobs without putting them, so a GC that
  // took its inventory after the parent was removed (or pruned) and before the fork's log existed could
  // collect them. The fork now freshens them first, as a capture's put does.
  it('a fork freshens the blobs its copied events reference', async () => {
    dirs = await makeTempDirs('ckpt-fork-fresh-');
    const store = await openStore({ dir: dirs.store, retention: false });
    const ws = await store.openWorkspace(dirs.workspace);
    const s = await ws.create({ id: 'parent' });
    await writeFile(join(dirs.workspace, 'a.txt'), 'old content\n');
    const c = await s.capture(['a.txt'], { tool: 'Write' });
    await store.ctx.afterCall.drain(); // the blob-store copy of the (inline) content follows the answer
    const blob = (await s.events()).find((e) => e.seq === c.seq)!.files as { blob: string }[];
    const file = join(dirs.store, 'blobs', blob[0]!.blob.slice(0, 2), blob[0]!.blob.slice(2));
    const hourAgo = new Date(Date.now() - 3_600_000);
    await utimes(file, hourAgo, hourAgo);
    await ws.fork('parent');
    expect((await stat(file)).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
  });

  // Soak defect (2026-12-07): a fork made at a point before the end of the workspace's history records
  // what the workspace held at that point (fork-record.ts) from the earliest later capture of each
  // path, also another session's. When that session's retention had retired the capture and GC had
  // collected its content, the fork's record named a blob that was not there: verify reported it
  // missing, and a restore to the fork point failed. It is recorded as not known now.
  it('a fork-point image whose content GC collected is recorded skipped, never as a missing blob', async () => {
    dirs = await makeTempDirs('ckpt-fork-collected-');
    const store = await openStore({ dir: dirs.store, retention: false });
    const ws = await store.openWorkspace(dirs.workspace);
    const x = join(dirs.workspace, 'x.txt');
    await writeFile(x, 'v0\n');
    const parent = await ws.create({ id: 'parent' });
    const point = await parent.turn({ text: 'turn 1' });
    // Another session records x (its before-image: v0), then x becomes v2; its retention retires that capture.
    const other = await ws.create({ id: 'other', baseline: false });
    await other.turn({ text: 'other 1' });
    await other.capture(['x.txt'], { tool: 'Write' });
    await writeFile(x, 'v2\n');
    await other.settle(['x.txt']);
    await other.turn({ text: 'other 2' });
    expect((await prune(other, { keepTurns: 1 })).pruned).toBe(true);
    await parent.scan({ rewriteIndex: 'always' }); // the index says v2 now: nothing else keeps v0
    await store.ctx.afterCall.drain();
    await runGc(store.ctx, { graceMs: 0 });
    const v0 = (await other.events()).flatMap((e) => (e.type === 'capture' ? (e.files as { blob?: string }[]) : [])).find((f) => f.blob)!.blob!;
    expect(await store.ctx.blobs.has(v0), 'GC collected v0').toBe(false);

    const fork = await ws.fork('parent', { atSeq: point.seq });
    expect((await verify(store.ctx)).problems).toEqual([]);
    const record = (await fork.events()).find((e) => e.type === 'capture' && e.tool === 'fork')!;
    expect(record.files).toEqual([{ path: 'x.txt', state: 'skipped', why: 'content-collected' }]);
    // The fork point is no longer kept whole (the other session retired what x held there): said, nothing changed.
    await expect(fork.restore('1', {})).rejects.toMatchObject({ code: 'TAG_PRUNED' });
    expect(await readFile(x, 'utf8')).toBe('v2\n');
  });
});

