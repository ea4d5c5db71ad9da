import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TempDirs } from '../../test/helpers/temp.js';
import { useAgentWorld } from '../../test/helpers/lib-session.js';
import type { Session } from '../api/session.js';

let dirs: TempDirs;
let session: Session;
const { w, agentWrite, versions } = useAgentWorld('ckpt-diff-', (world) => ({ dirs, session } = world));

describe('diff', () => {
  it('reports A/M/D with line counts between a tag and the present, and a unified patch', async () => {
    await writeFile(w('keep.txt'), 'one\ntwo\nthree\n');
    await writeFile(w('gone.txt'), 'bye\n');
    await session.turn();
    await agentWrite('keep.txt', 'one\nTWO\nthree\nfour\n');
    await agentWrite('new.txt', 'fresh\n');
    await agentWrite('gone.txt', null);
    const r = await session.diff('1', undefined, { patch: true });
    expect(r.changes).toEqual([
      { path: 'gone.txt', status: 'D', added: 0, removed: 1 },
      { path: 'keep.txt', status: 'M', added: 2, removed: 1 },
      { path: 'new.txt', status: 'A', added: 1, removed: 0 },
    ]);
    expect(r.patch).toContain('+TWO');
    expect(r.patch).toContain('-two');
    expect(r.patch).toContain('--- /dev/null');
  });

  it('a folder since replaced by a file: its files are D (nothing can be below a file), as the restore plans them back', async () => {
    // Found by a restore-promise probe: they were skipped as `parent-not-directory` and left out.
    await mkdir(w('d'));
    await writeFile(w('d/a.txt'), 'a\n');
    await writeFile(w('d/b.txt'), 'b\n');
    await session.scan();
    await session.turn();
    await rm(w('d'), { recursive: true });
    await writeFile(w('d'), 'file\n');
    await session.scan();
    const r = await session.diff('1');
    expect(r.skipped).toEqual([]);
    expect(r.changes.map((c) => `${c.path}:${c.status}`)).toEqual(['d:A', 'd/a.txt:D', 'd/b.txt:D']);
    const plan = (await session.restore('1', { dryRun: true })).plan!;
    expect(plan.entries.map((e) => `${e.path}:${e.action}`).sort()).toEqual(['d/a.txt:write', 'd/b.txt:write', 'd:mkdir']);
  });

  it("a folder's chmod is M with its mode, as the restore and its dry run put it back (round-6 probe)", async () => {
    await mkdir(w('lib'));
    await writeFile(w('lib/m.js'), 'm\n');
    await chmod(w('lib'), 0o755);
    await session.scan();
    await session.turn();
    await chmod(w('lib'), 0o700);
    await session.scan();
    const r = await session.diff('1');
    expect(r.changes).toEqual([{ path: 'lib', status: 'M', added: 0, removed: 0, dir: true, mode: { from: '755', to: '700' } }]);
    await session.turn();
    expect((await session.diff('2', '1')).changes).toEqual([{ path: 'lib', status: 'M', added: 0, removed: 0, dir: true, mode: { from: '700', to: '755' } }]);
    const plan = (await session.restore('1', { dryRun: true })).plan!;
    expect(plan.entries.map((e) => `${e.path}:${e.action}`)).toEqual(['lib:mkdir']);
    // A new folder is a change of its own (an empty one has no file to show it): the restore deletes it.
    await mkdir(w('fresh'));
    await session.scan();
    expect((await session.diff('1')).changes.map((c) => `${c.path}:${c.status}${c.dir ? ' dir' : ''}`)).toEqual(['fresh:A dir', 'lib:M dir']);
    expect((await session.restore('1', { dryRun: true })).plan!.entries.map((e) => `${e.path}:${e.action}`)).toEqual(['fresh:delete', 'lib:mkdir']);
  });

  it('diffs between two tags using the images recorded at each', async () => {
    await versions('a.txt', 'v1\n', 'v2\n', 'v3\n');
    await writeFile(w('a.txt'), 'v4 not captured\n');
    const r = await session.diff('1', '2');
    expect(r.changes).toEqual([{ path: 'a.txt', status: 'M', added: 1, removed: 1 }]);
    const between = await session.diff('1', '2', { patch: true });
    expect(between.patch).toContain('+v2');
    expect(between.patch).not.toContain('v3');
    // A turn with no captures in range shows no changes.
    expect((await session.diff('2', '2')).changes).toEqual([]);
  });

  it('between two past tags, an unrecorded hand change since is not read as either side (as cat answers; found by a preview probe)', async () => {
    await session.turn();
    await agentWrite('new.txt', 'new\n');
    await session.turn();
    const expected = [{ path: 'new.txt', status: 'A', added: 1, removed: 0 }];
    expect((await session.diff('1', '2')).changes).toEqual(expected);
    await rm(w('new.txt')); // by hand, nothing recorded it
    expect((await session.diff('1', '2')).changes).toEqual(expected);
    await session.turn();
    expect((await session.diff('2', '1')).changes).toEqual([{ path: 'new.txt', status: 'D', added: 0, removed: 1 }]);
    expect((await session.diff('1')).changes).toEqual([]); // the present side is the present
  });

  it('is symmetric: FROM after TO gives the reverse diff (issue 9 D), also against the present', async () => {
    await writeFile(w('a.txt'), 'v1\n');
    await writeFile(w('gone.txt'), 'bye\n');
    await session.turn();
    await agentWrite('a.txt', 'v2\nmore\n');
    await agentWrite('gone.txt', null);
    await agentWrite('new.txt', 'fresh\n');
    await session.turn();
    await agentWrite('a.txt', 'v3\n');
    const forward = await session.diff('1', '2', { patch: true });
    expect(forward.changes).toEqual([
      { path: 'a.txt', status: 'M', added: 2, removed: 1 },
      { path: 'gone.txt', status: 'D', added: 0, removed: 1 },
      { path: 'new.txt', status: 'A', added: 1, removed: 0 },
    ]);
    const back = await session.diff('2', '1', { patch: true });
    expect(back.changes).toEqual([
      { path: 'a.txt', status: 'M', added: 1, removed: 2 },
      { path: 'gone.txt', status: 'A', added: 1, removed: 0 },
      { path: 'new.txt', status: 'D', added: 0, removed: 1 },
    ]);
    expect(back.patch).toContain('-more');
    // From turn 2 to turn 1 while the present is later still: images, not the present, at both ends.
    await session.turn();
    expect((await session.diff('2', '1')).changes).toEqual(back.changes);
    expect((await session.diff('2')).changes).toEqual([{ path: 'a.txt', status: 'M', added: 1, removed: 2 }]);
  });

  it('reports binary files as binary', async () => {
    await session.turn();
    await agentWrite('img.bin', '\0\x01\x02binary');
    const r = await session.diff('1');
    expect(r.changes).toEqual([{ path: 'img.bin', status: 'A', added: 0, removed: 0, binary: true }]);
  });

  it('stays bounded on large inputs', async () => {
    const big = Array.from({ length: 60_000 }, (_, i) => `line ${i}`).join('\n');
    const shuffled = Array.from({ length: 60_000 }, (_, i) => `other ${(i * 7919) % 60_000}`).join('\n');
    await writeFile(w('big.txt'), big);
    await session.turn();
    await agentWrite('big.txt', shuffled);
    // Past the edit-length cap the line counts are given up on and said so, instead of running away.
    const r = await session.diff('1');
    expect(r.changes[0]).toEqual({ path: 'big.txt', status: 'M', added: 0, removed: 0, truncated: true });
  });

  it('rejects unknown and malformed tags', async () => {
    await expect(session.diff('7')).rejects.toMatchObject({ code: 'TAG_NOT_FOUND' });
    await expect(session.diff('x')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('never reads the present side through a captured folder replaced by a symlink (issue 10 item 2)', async () => {
    const outside = join(dirs.base, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'f.txt'), 'SECRET outside the workspace\n');
    await mkdir(w('d'));
    await versions('d/f.txt', 'inside\n', 'inside changed\n');
    await rm(w('d'), { recursive: true });
    await symlink(outside, w('d'));
    // The diff's look (DESIGN §10 "diff looks too") finds the link made since the last turn before any
    // scan records it: its files are D (nothing is below a link), as the restore plans them back.
    const r = await session.diff('1', undefined, { patch: true });
    expect(r.patch).not.toContain('SECRET');
    expect(r.skipped).toEqual([]);
    expect(r.changes.map((c) => `${c.path}:${c.status}:${c.unrecorded ?? false}`)).toEqual(['d:A:true', 'd/f.txt:D:true']);
    const looked = (await session.restore('1', { dryRun: true })).plan!;
    expect(looked.entries.map((e) => `${e.path}:${e.action}`).sort()).toEqual(['d/f.txt:write', 'd:mkdir']);
    // Once a scan recorded the link, the same.
    await session.scan();
    const recorded = await session.diff('1', undefined, { patch: true });
    expect(recorded.patch).not.toContain('SECRET');
    expect(recorded.skipped).toEqual([]);
    expect(recorded.changes.map((c) => `${c.path}:${c.status}`)).toEqual(['d:A', 'd/f.txt:D']);
    const plan = (await session.restore('1', { dryRun: true })).plan!;
    expect(plan.entries.map((e) => `${e.path}:${e.action}`).sort()).toEqual(['d/f.txt:write', 'd:mkdir']);
  });
});
