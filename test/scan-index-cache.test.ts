// The decoded scan index a process keeps between scans (scan-persist.ts loadIndexCached): a full scan
// reads the file every time but decodes it only when its bytes changed — so another writer's index,
// even one of the same size and mtime, is never mistaken for the one kept; a watched scan's stat key
// reuses it without a read.
import { readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { scan } from '../src/scan/index.js';
import { loadIndexCached } from '../src/scan/scan-persist.js';
import { makeWorld } from './fixtures/restore-world.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeWorld);

it('decoded once while the bytes stay; bytes of the same size and mtime are read as they are', async () => {
  const w = await world();
  // Enough new paths for the scan to rewrite the index (a few are left to owner records).
  for (let i = 0; i < 80; i++) await w.write(`f${String(i).padStart(2, '0')}.txt`, `${i}`);
  await scan(w.session);
  const wsDir = join(w.dirs.store, 'workspaces', (await readdir(join(w.dirs.store, 'workspaces')))[0]!);
  const file = join(wsDir, 'scan-index.bin');
  const t = Math.floor(Date.now() / 1000) - 10; // whole seconds: put back exactly below
  await utimes(file, t, t);
  const first = await loadIndexCached(w.session, 'bytes');
  expect(first.index?.paths.slice(0, first.index.count)).toContain('f01.txt');
  expect((await loadIndexCached(w.session, 'bytes')).index).toBe(first.index);
  expect((await loadIndexCached(w.session, 'stat')).index).toBe(first.index);
  // Another writer's bytes, same size, the same mtime put back: not the kept index.
  const raw = await readFile(file);
  const at = raw.indexOf('f01.txt');
  expect(at).toBeGreaterThan(0);
  const before = await stat(file);
  await writeFile(file, Buffer.concat([raw.subarray(0, at), Buffer.from('g01.txt'), raw.subarray(at + 7)]));
  await utimes(file, t, t);
  expect((await stat(file)).mtimeMs).toBe(before.mtimeMs);
  const again = await loadIndexCached(w.session, 'bytes');
  expect(again.index).not.toBe(first.index);
  if (again.index) expect(again.index.paths.slice(0, again.index.count)).not.toContain('f01.txt');
  else expect(again).toEqual({ corrupt: true });
  // A scan after that still sees the workspace as it is.
  await w.write('c.txt', 'c');
  expect((await scan(w.session)).files.map((f) => f.path)).toContain('c.txt');
});

it("a store's close drops its decoded indexes; another store's stay", async () => {
  const [a, b] = [await world(), await world()];
  for (const w of [a, b]) {
    for (let i = 0; i < 80; i++) await w.write(`f${i}.txt`, `${i}`);
    await scan(w.session);
  }
  const keptA = (await loadIndexCached(a.session, 'bytes')).index;
  const keptB = (await loadIndexCached(b.session, 'bytes')).index;
  expect(keptA).toBeDefined();
  expect((await loadIndexCached(a.session, 'bytes')).index).toBe(keptA);
  await a.store.close();
  // Decoded again: the closed store's copy was let go (read here through its handle, which still works on files).
  const after = (await loadIndexCached(a.session, 'bytes')).index;
  expect(after).not.toBe(keptA);
  expect(after?.count).toBe(keptA?.count);
  expect((await loadIndexCached(b.session, 'bytes')).index).toBe(keptB);
});
