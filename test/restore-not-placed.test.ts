// A restore that cannot place a path (here an immutable folder; a read-only folder of another user
// does the same) skips it and says so — and ckpt must then know the path is as it was, not at the
// tag: a filesystem probe found the next restore calling it "unchanged" and a later one refusing
// with DRIFT although nothing had changed it.
import { spawnSync } from 'node:child_process';
import { linkSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/index.js';
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

  it('a file written by the user while the restore runs (after its recovery capture read it) is left as the user wrote it, and reported', async () => {
    // Found by a filesystem probe: such a write was overwritten, and no recovery image held it.
    const w = await world();
    await w.write('a.txt', 'a1\n');
    await w.write('b.txt', 'b1\n');
    await w.session.turn();
    await w.tool(['a.txt', 'b.txt'], async () => {
      await w.write('a.txt', 'a2\n');
      await w.write('b.txt', 'b2\n');
    });
    await w.session.turn();
    let meanwhile: string | undefined;
    const r = await w.session.restore('1', {
      onProgress: ({ phase }) => {
        if (phase !== 'writing' || meanwhile) return;
        // One entry is placed: the user writes the other before the restore gets to it.
        meanwhile = readFileSync(w.at('a.txt'), 'utf8') === 'a2\n' ? 'a.txt' : 'b.txt';
        writeFileSync(w.at(meanwhile), 'the user, meanwhile\n');
      },
    });
    expect(meanwhile).toBeDefined();
    expect(r.skipped).toEqual([{ path: meanwhile, why: 'changed-during-restore' }]);
    expect(await readFile(w.at(meanwhile!), 'utf8')).toBe('the user, meanwhile\n');
    // ckpt knows the path is not at the tag: the next restore to it sees the write as the user's own (drift).
    const again = await w.session.restore('1', { dryRun: true });
    expect(again.restored).toEqual([meanwhile]);
  });

  it('two names of one file (a hard link) are both placed: the restore\'s own replacing of one is not a change to the other', async () => {
    const w = await world();
    await w.write('one.txt', 'v1\n');
    linkSync(w.at('one.txt'), w.at('two.txt'));
    await w.session.turn();
    await w.tool(['one.txt', 'two.txt'], async () => writeFileSync(w.at('one.txt'), 'v2, through one name\n'));
    await w.session.turn();
    const r = await w.session.restore('1');
    expect(r.skipped).toEqual([]);
    expect([await readFile(w.at('one.txt'), 'utf8'), await readFile(w.at('two.txt'), 'utf8')]).toEqual(['v1\n', 'v1\n']);
  });

  it('recovery after a crash leaves a path the user wrote since (neither what the recovery capture read nor what the plan puts there), and places the rest', async () => {
    // Recovery used to place the whole plan again: a file written after the crash, before ckpt ran
    // again, was overwritten with no recovery image of it (the hostile-store probe's review).
    const w = await world();
    for (const f of ['a', 'b', 'c']) await w.write(`${f}.txt`, `${f}1\n`);
    await w.session.turn();
    await w.tool(['a.txt', 'b.txt', 'c.txt'], async () => {
      for (const f of ['a', 'b', 'c']) await w.write(`${f}.txt`, `${f}2\n`);
    });
    await w.session.turn();
    await w.session.restore('1');
    // The crash: the log ends at restore_started (placing was under way: a.txt placed, b.txt not yet).
    const log = join(w.dirs.store, w.session.key, 'events.jsonl');
    const text = readFileSync(log, 'utf8');
    await truncate(log, text.indexOf('\n', text.indexOf('"type":"restore_started"')) + 1);
    await w.write('b.txt', 'b2\n');
    await w.write('c.txt', 'the user, after the crash\n');
    const again = await (await openStore({ dir: w.dirs.store })).openWorkspace(w.root);
    const session = await again.get(w.session.id); // recovery finishes the restore
    expect(await Promise.all(['a', 'b', 'c'].map((f) => readFile(w.at(`${f}.txt`), 'utf8')))).toEqual(['a1\n', 'b1\n', 'the user, after the crash\n']);
    const committed = (await session.events()).filter((e) => e.type === 'restore_committed').at(-1) as unknown as { result: { skipped: unknown[]; recovered?: boolean } };
    expect(committed.result).toMatchObject({ recovered: true, skipped: [{ path: 'c.txt', why: 'changed-during-restore' }] });
    // ckpt knows c.txt is not at the tag: a restore to it sees the write as the user's own (drift).
    const preview = await session.restore('1', { dryRun: true });
    expect(preview.restored).toEqual(['c.txt']);
    expect(preview.drift).toEqual(['c.txt']);
  });
});
