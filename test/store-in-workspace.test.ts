// A store kept inside the workspace (DESIGN §10 "Probe findings (2026-12-05)"): its files are never
// recorded — by a scan, whatever path names the store (through a symlink, a name starting with `..`),
// nor by a tool's capture of a path inside it — so no restore ever writes over the store's own log.
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/index.js';
import { verify } from '../src/gc/verify.js';
import { makeTempDirs } from './helpers/temp.js';

async function storeInside(storePathOf: (ws: string) => Promise<string>) {
  const dirs = await makeTempDirs('ckpt-store-in-');
  await writeFile(join(dirs.workspace, 'a.txt'), 'a1\n');
  const store = await openStore({ dir: await storePathOf(dirs.workspace) });
  const ws = await store.openWorkspace(dirs.workspace);
  const session = await ws.create({ title: 'store inside' });
  return { dirs, store, ws, session };
}

describe('a store inside the workspace', () => {
  for (const [name, storePathOf] of [
    ['named through a symlink to the workspace', async (ws: string) => {
      await symlink(ws, join(ws, '..', 'alias'));
      return join(ws, '..', 'alias', '.ckpt', 'store');
    }],
    ['named `..ckpt-store`', async (ws: string) => join(ws, '..ckpt-store')],
  ] as const) {
    it(`${name}: a scan never records its files, restores leave them`, async () => {
      const { store, session } = await storeInside(storePathOf);
      try {
        await session.turn();
        await writeFile(join(session.workspaceRoot, 'a.txt'), 'a2\n');
        const scanned = await session.scan({ tool: 'Bash' });
        expect(scanned.files.map((f) => f.path)).toEqual(['a.txt']);
        await session.turn();
        await session.restore('1', { force: true });
        expect(await readFile(join(session.workspaceRoot, 'a.txt'), 'utf8')).toBe('a1\n');
        expect((await verify(store.ctx)).problems).toEqual([]);
      } finally {
        await store.close();
      }
    });
  }

  it('a tool capture of the store\'s own log records it as skipped, and a restore never writes it', async () => {
    const { dirs, store, ws, session } = await storeInside(async (w) => join(w, '.ckpt', 'store'));
    try {
      await session.turn();
      const log = join(dirs.workspace, '.ckpt', 'store', 'workspaces', ws.id, 'sessions', session.id, 'events.jsonl');
      const rel = log.slice(dirs.workspace.length + 1);
      const c = await session.capture([rel], { tool: 'Edit' });
      expect(c.files).toEqual([{ path: rel, state: 'skipped', why: 'ignored' }]);
      await session.settle([rel]);
      await mkdir(join(dirs.workspace, 'src'), { recursive: true });
      await session.turn();
      await session.restore('1', { force: true });
      expect((await verify(store.ctx)).problems).toEqual([]);
      expect((await session.events()).length).toBeGreaterThan(3);
    } finally {
      await store.close();
    }
  });
});
