// Scan progress: the read-and-store phase reports how many of the files to read are done.
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
  session = await ws.create();
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
