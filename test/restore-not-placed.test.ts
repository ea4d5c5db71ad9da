// A restore that cannot place a path (here an immutable folder; a read-only folder of another user
// does the same) skips it and says so — and ckpt must then know the path is as it was, not at the
// tag: a filesystem probe found the next restore calling it "unchanged" and a later one refusing
// with DRIFT although nothing had changed it.
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { makeWorld } from './fixtures/restore-world.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeWorld);
const chattr = (flag: string, path: string) => spawnSync('chattr', [flag, path]).status === 0;

describe('a path the restore could not place', () => {
  it('is recorded as it is: the next restore of the tag it has changes nothing, a restore to the tag runs without drift once it can', async (ctx) => {
    const w = await world();
    await w.write('ro/a', 'a1\n');
    await w.session.turn();
    await w.tool(['ro/a'], () => w.write('ro/a', 'a2\n'), 'Edit');
    await w.session.turn();
    if (!chattr('+i', w.at('ro'))) ctx.skip(); // needs root on a file system with attributes
    try {
      const r = await w.session.restore('1');
      expect(r.skipped.map((s) => s.path)).toEqual(['ro/a']);
    } finally {
      chattr('-i', w.at('ro'));
    }
    expect(await readFile(w.at('ro/a'), 'utf8')).toBe('a2\n');
    expect((await w.session.restore('2', { dryRun: true })).restored).toEqual([]);
    const again = await w.session.restore('1');
    expect(again.drift).toEqual([]);
    expect(await readFile(w.at('ro/a'), 'utf8')).toBe('a1\n');
  });
});
