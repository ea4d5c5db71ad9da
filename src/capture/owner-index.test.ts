import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeTempDirs, type TempDirs } from '../../test/helpers/temp.js';
import { openStore, type Store, type Workspace } from '../store.js';
import type { Session } from '../api/session.js';
import type { FileImage } from '../format/event.js';
import { readOwners, recordOwnership, recordOwnershipAfter } from './owner-index.js';

let dirs: TempDirs;
let store: Store;
let ws: Workspace;
let session: Session;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-owners-');
  store = await openStore({ dir: dirs.store });
  ws = await store.openWorkspace(dirs.workspace);
  session = await ws.create({ title: 'owners', baseline: false });
});
afterEach(async () => {
  await store.close();
  await dirs.cleanup();
});

describe('owner index reads', () => {
  it('see a rewrite by another process, refuse a forged one, and give each caller its own map', async () => {
    const file = join(dirs.store, 'workspaces', ws.id, 'owners.json');
    await recordOwnership(session, [{ path: 'a.txt', state: 'absent' }]);
    expect(Object.keys(await readOwners(session))).toEqual(['a.txt']);
    const again = await readOwners(session);
    again['b.txt'] = { session: 'x', state: 'absent', at: 'now' };
    expect(Object.keys(await readOwners(session))).toEqual(['a.txt']);
    // Another process's write (same size, new content): seen.
    const text = await readFile(file, 'utf8');
    await new Promise((r) => setTimeout(r, 5));
    await writeFile(file, text.replace('a.txt', 'c.txt'));
    expect(Object.keys(await readOwners(session))).toEqual(['c.txt']);
    // A forged record is refused, not served from what was read before.
    await writeFile(file, JSON.stringify({ '../x': { session: 's', state: 'absent', at: 'now' } }));
    await expect(readOwners(session)).rejects.toMatchObject({ code: 'LOG_CORRUPT' });
  });
});

describe('owner index parses', () => {
  it('only bytes it has not parsed: the same bytes give a copy of the last map, changed bytes are parsed and checked', async () => {
    const file = join(dirs.store, 'workspaces', ws.id, 'owners.json');
    await recordOwnership(session, [{ path: 'a.txt', state: 'absent' }]);
    await readOwners(session);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const first = await readOwners(session);
      expect(parse).not.toHaveBeenCalled();
      first['b.txt'] = { session: 'x', state: 'absent', at: 'now' };
      expect(Object.keys(await readOwners(session))).toEqual(['a.txt']);
      // Written again by "another process" with the same bytes: still no parse; other bytes: parsed.
      const text = await readFile(file, 'utf8');
      await writeFile(file, text);
      await readOwners(session);
      expect(parse).not.toHaveBeenCalled();
      await writeFile(file, text.replace('a.txt', 'c.txt'));
      expect(Object.keys(await readOwners(session))).toEqual(['c.txt']);
      expect(parse).toHaveBeenCalledTimes(1);
      await writeFile(file, text.replace('a.txt', '../x'));
      await expect(readOwners(session)).rejects.toMatchObject({ code: 'LOG_CORRUPT' });
      // What this process writes is read back without a parse; another process's write after it is parsed.
      await writeFile(file, text);
      await recordOwnership(session, [{ path: 'd.txt', state: 'absent' }]);
      parse.mockClear();
      expect(Object.keys(await readOwners(session)).sort()).toEqual(['a.txt', 'd.txt']);
      expect(parse).not.toHaveBeenCalled();
      await writeFile(file, (await readFile(file, 'utf8')).replace('d.txt', 'e.txt'));
      expect(Object.keys(await readOwners(session)).sort()).toEqual(['a.txt', 'e.txt']);
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });
});

describe('owner index under a daemon (queued writes)', () => {
  it('a spilled read orders a write queued while it runs after itself: it never names a blob not yet stored', async () => {
    // Found by the model test (test/owner-index-model.ts): the spilled read took the batch queued
    // meanwhile into its result, a record whose content was still only inline (and whose copy may fail).
    const queue: (() => Promise<void>)[] = [];
    store.ctx.options.defer = (work) => void queue.push(work);
    const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
    const file = (path: string, s: string): FileImage => ({ path, state: 'file', blob: sha(s), bytes: s.length });
    const copy = (s: string) => async (): Promise<void> => void (await store.ctx.blobs.put(Buffer.from(s)));
    try {
      await recordOwnershipAfter(session, [file('a.txt', 'one')], undefined, copy('one'));
      const read = readOwners(session, { spilled: true });
      await recordOwnershipAfter(session, [file('b.txt', 'two')], undefined, copy('two'));
      expect(Object.keys(await read)).toEqual(['a.txt']);
      expect(await store.ctx.blobs.has(sha('one'))).toBe(true);
      // A plain read sees the queued write without running it; a spilled one runs it first.
      expect(Object.keys(await readOwners(session)).sort()).toEqual(['a.txt', 'b.txt']);
      expect(await store.ctx.blobs.has(sha('two'))).toBe(false);
      expect(Object.keys(await readOwners(session, { spilled: true })).sort()).toEqual(['a.txt', 'b.txt']);
      expect(await store.ctx.blobs.has(sha('two'))).toBe(true);
      while (queue.length > 0) await queue.shift()!();
    } finally {
      delete store.ctx.options.defer;
    }
  });
});
