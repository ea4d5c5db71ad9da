// `ckpt gc|prune|verify|stats` and the size fields of `ckpt session show` through the CLI (in
// process, with the maintenance commands registered): JSON shapes of DESIGN §9 and exit codes.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../src/store.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';
import { ageStore, runCliInProcess } from './fixtures/gc-helpers.js';

let dirs: TempDirs;
const ckpt = (...args: string[]) => runCliInProcess(['--store', dirs.store, ...args], { cwd: dirs.workspace, env: { CKPT_RETENTION: 'off' } });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-gc-cli-');
});
afterEach(() => dirs.cleanup());

async function turnWithEdit(n: number, file = 'a.txt'): Promise<void> {
  expect((await ckpt('turn', '--json')).code).toBe(0);
  await writeFile(join(dirs.workspace, file), `content ${n}`);
  expect((await ckpt('capture', file, '--json')).code).toBe(0);
  await writeFile(join(dirs.workspace, file), `content ${n + 1}`);
  expect((await ckpt('settle', file, '--json')).code).toBe(0);
}

describe('maintenance commands', () => {
  it('gc [--dry-run] [--grace] prints {deleted, bytesFreed, kept}; a bad duration is exit 2', async () => {
    await ckpt('session', 'new', '--id', 'gone');
    await turnWithEdit(1);
    await ckpt('session', 'new', '--id', 'stays');
    expect((await ckpt('session', 'rm', 'gone', '--json')).code).toBe(0);
    await ageStore(dirs.store);
    const dry = await ckpt('gc', '--dry-run', '--json');
    expect(dry.code).toBe(0);
    // 'content 1' was only captured by the removed session; 'content 2' stays: the owner index names it.
    expect(dry.json()).toMatchObject({ deleted: 1, kept: 1, dryRun: true, candidates: { loose: [expect.any(String)] } });
    const young = await ckpt('gc', '--grace', '2h', '--json');
    expect(young.json()).toMatchObject({ deleted: 0, bytesFreed: 0, kept: 2 });
    const real = await ckpt('gc', '--json');
    expect(real.json()).toMatchObject({ deleted: 1, kept: 1 });
    expect(real.json().bytesFreed).toBeGreaterThan(0);
    expect((await ckpt('gc', '--json')).json()).toMatchObject({ deleted: 0, bytesFreed: 0, kept: 1 });
    const human = await ckpt('gc');
    expect(human.stdout).toMatch(/deleted 0 blob copies/);
    for (const bad of ['15', '1.5h', 'soon', '-5m']) {
      const r = await ckpt('gc', '--grace', bad, '--json');
      expect(r.code, bad).toBe(2);
      expect(JSON.parse(r.stderr).error.code).toBe('INVALID_ARGUMENT');
    }
  });

  it('prune retires old turns; restoring one is TAG_PRUNED (exit 3); a kept one works', async () => {
    await ckpt('session', 'new', '--id', 's');
    for (let t = 1; t <= 3; t++) await turnWithEdit(t);
    const pruned = await ckpt('prune', '--keep-turns', '1', '--json');
    expect(pruned.code).toBe(0);
    // Turn 1's capture is preceded by the user's (the file was made during the turn), turn 2's is not.
    expect(pruned.json()).toMatchObject({ session: 's', pruned: true, retiredCaptures: 3 });
    const retired = await ckpt('restore', '2', '--yes', '--json');
    expect(retired.code).toBe(3);
    expect(JSON.parse(retired.stderr).error.code).toBe('TAG_PRUNED');
    // It names what still restores, as `log` does.
    expect(JSON.parse(retired.stderr).error.data.earliestTag).toBe('3');
    expect((await ckpt('restore', '2', '--yes')).stderr).toContain('tag 2 is no longer restorable (the earliest tag that is: 3)');
    const kept = await ckpt('restore', '3', '--yes', '--json');
    expect(kept.code).toBe(0);
    expect(kept.json().restored).toEqual(['a.txt']);
    expect((await ckpt('prune', '--keep-turns', '0', '--json')).code).toBe(2);
    expect((await ckpt('prune', '--older-than', 'yesterday', '--json')).code).toBe(2);
    const none = await ckpt('prune', '--older-than', '30d', '--json');
    expect(none.json()).toMatchObject({ pruned: false });
  });

  it('stats and session show report recorded vs stored bytes', async () => {
    const big = 'same line of text\n'.repeat(2000);
    // There before the session (made during the turn, the capture would record them as the user's new files first).
    for (const f of ['x.txt', 'y.txt']) await writeFile(join(dirs.workspace, f), big);
    await ckpt('session', 'new', '--id', 's');
    await ckpt('turn');
    await ckpt('capture', 'x.txt', 'y.txt');
    await ckpt('settle', 'x.txt', 'y.txt');
    const stats = await ckpt('stats', '--json');
    expect(stats.code).toBe(0);
    const w = stats.json().workspaces[0];
    expect(w.sessions[0]).toMatchObject({ id: 's', logicalBytes: 4 * big.length, uniqueBytes: big.length, blobs: 1, missing: 0 });
    expect(w.storedBytes).toBeLessThan(big.length / 10); // compressed
    expect(stats.json().store).toMatchObject({ blobs: 1 });
    const show = await ckpt('session', 'show', '--json');
    expect(show.json().size).toMatchObject({ logicalBytes: 4 * big.length, uniqueBytes: big.length, blobs: 1 });
    expect((await ckpt('stats')).stdout).toMatch(/recorded in 1 capture/);
    const store = await openStore({ dir: dirs.store });
    expect((await store.listWorkspaces()).length).toBe(1);
  });
});
