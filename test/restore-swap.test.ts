// A folder swapped for a symlink between planning and applying a restore (issue 10 item 1, the
// on-disk half): the recovery capture does not read through it — the outside content never enters
// the store — and nothing is written there; the path is skipped.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyRestore } from '../src/restore/apply-restore.js';
import { planAgainstWorkspace } from '../src/restore/restore.js';
import { makeWorld } from './fixtures/restore-world.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeWorld);
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('restore with a folder swapped after planning', () => {
  it('skips the path, reads nothing through the symlink, writes nothing outside', async () => {
    const w = await world();
    const outside = join(w.dirs.base, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'f.txt'), 'outside secret');
    await w.write('d/f.txt', 'v0');
    await w.turn();
    await w.tool(['d/f.txt'], () => w.write('d/f.txt', 'v1'));
    const events = await w.session.events();
    const { plan, present } = await planAgainstWorkspace(w.session, events, '1');
    expect(plan.entries.map((e) => e.path)).toEqual(['d/f.txt']);
    // The swap, after the plan and before the apply.
    await rm(w.at('d'), { recursive: true });
    await symlink(outside, w.at('d'));
    const r = await w.session.transaction((tx) => applyRestore(w.session, tx, { to: '1', plan, present, force: true, reason: 'test' }));
    expect(r.skipped).toEqual([{ path: 'd/f.txt', why: 'symlinked-parent' }]);
    expect(await readFile(join(outside, 'f.txt'), 'utf8')).toBe('outside secret');
    expect(await w.store.ctx.blobs.has(sha('outside secret'))).toBe(false);
  });
});
