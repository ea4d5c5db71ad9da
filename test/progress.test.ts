// Progress reports of long operations: the scan's read-and-store phase and a restore's read and write phases.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openStore, type Session } from '../src/index.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let session: Session;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-scan-progress-');
  const ws = await (await openStore({ dir: dirs.store })).openWorkspace(dirs.workspace);
  session = await ws.create({ baseline: false });
});
afterEach(() => dirs.cleanup());

it('reports storing progress up to the number of files read', async () => {
  for (let i = 0; i < 30; i++) await writeFile(join(dirs.workspace, `f${i}.txt`), `file ${i}\n`);
  const seen: { phase: string; done: number; total: number }[] = [];
  const r = await session.scan({ onProgress: (p) => seen.push(p) });
  expect(r.baseline).toBe(true);
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.every((p) => p.phase === 'storing' && p.total === 30 && p.done <= p.total)).toBe(true);
  expect(seen.at(-1)!.done).toBe(30);
  // An incremental scan with nothing to read reports nothing (racyMs 0: the files are trusted by stat).
  const quiet: unknown[] = [];
  await session.scan({ racyMs: 0, onProgress: (p) => quiet.push(p) });
  expect(quiet).toEqual([]);
});

it('a restore reports reading, then writing progress up to the number of files written', async () => {
  for (let i = 0; i < 20; i++) await writeFile(join(dirs.workspace, `g${i}.txt`), `v1 ${i}\n`);
  const paths = Array.from({ length: 20 }, (_, i) => `g${i}.txt`);
  await session.turn();
  await session.capture(paths);
  for (const p of paths) await writeFile(join(dirs.workspace, p), 'v2\n');
  await session.settle(paths);
  const seen: { phase: string; done: number; total: number }[] = [];
  const r = await session.restore('1', { onProgress: (p) => seen.push(p) });
  expect(r.restored).toHaveLength(20);
  const upTo20 = Array.from({ length: 20 }, (_, i) => i + 1);
  expect(seen.filter((p) => p.phase === 'reading').map((p) => p.done)).toEqual(upTo20);
  expect(seen.filter((p) => p.phase === 'writing').map((p) => p.done)).toEqual(upTo20);
  expect(seen.every((p) => p.total === 20)).toBe(true);
  expect(seen.findIndex((p) => p.phase === 'writing')).toBe(20);
});
