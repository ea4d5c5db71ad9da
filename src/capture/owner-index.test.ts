import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDirs, type TempDirs } from '../../test/helpers/temp.js';
import { openStore, type Store, type Workspace } from '../store.js';
import type { Session } from '../api/session.js';
import { readOwners, recordOwnership } from './owner-index.js';

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
