// The workspace caches in the store (scan index, owner index) are untrusted input like the logs
// (issue 10 item 1): a forged path there is never stat'ed, recorded or restored outside the root.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runGc, storeStats, verify } from '../src/gc/index.js';
import { openStore } from '../src/index.js';
import { restore } from '../src/restore/index.js';
import { scan } from '../src/scan/index.js';
import { ScanIndex, KIND_FILE, HASH_SHA256 } from '../src/scan/scan-index.js';
import { makeWorld } from './fixtures/restore-world.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeWorld);

async function setup() {
  const w = await world();
  const outside = join(w.dirs.base, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'victim.txt'), 'keep me');
  await w.write('a.txt', 'a');
  await scan(w.session);
  const wsDir = join(w.dirs.store, 'workspaces', (await readdir(join(w.dirs.store, 'workspaces')))[0]!);
  return { w, outside, wsDir };
}

describe('forged workspace caches', () => {
  it('a scan index naming ../outside is refused (rebuilt as a new baseline); nothing outside is recorded or restored', async () => {
    const { w, outside, wsDir } = await setup();
    const forged = new ScanIndex(4, Date.now() - 60_000);
    const i = forged.push('../outside/victim.txt', KIND_FILE, { size: 7, mtimeMs: 1, ctimeMs: 1, ino: 1, mode: 0o100644 });
    forged.setHash(i, HASH_SHA256, 'b'.repeat(64));
    await writeFile(join(wsDir, 'scan-index.bin'), forged.encode());
    await w.turn();
    const r = await scan(w.session);
    expect(r.files.map((f) => f.path)).not.toContain('../outside/victim.txt');
    await restore(w.session, '1', { force: true });
    expect(await readFile(join(outside, 'victim.txt'), 'utf8')).toBe('keep me');
    for (const e of await w.session.events()) expect(JSON.stringify(e)).not.toContain('outside');
  });

  it('an owner index naming ../outside is LOG_CORRUPT for the scan that would use it', async () => {
    const { w, outside, wsDir } = await setup();
    const owners = { '../outside/victim.txt': { session: 'x', state: 'absent', at: new Date(Date.now() + 60_000).toISOString() } };
    await writeFile(join(wsDir, 'owners.json'), JSON.stringify(owners));
    await w.turn();
    await expect(scan(w.session)).rejects.toMatchObject({ code: 'LOG_CORRUPT' });
    expect(await readFile(join(outside, 'victim.txt'), 'utf8')).toBe('keep me');
    for (const e of await w.session.events()) expect(JSON.stringify(e)).not.toContain('outside');
  });
});

// Fuzz defects (issue 16): metadata.json is a cache as untrusted as the log. `null` made verify throw
// a TypeError (INTERNAL); an object with the right eventCount and depth but wrong types (a numeric
// title, an object kind) was returned as the session's metadata.
describe('forged session metadata', () => {
  it('verify reports a metadata.json that is not an object; metadata() folds the log instead of passing wrong types on', async () => {
    const { w, wsDir } = await setup();
    const file = join(wsDir, 'sessions', w.session.id, 'metadata.json');
    const good = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, 'null');
    const v = await verify(w.session.ctx);
    expect(v.problems.map((p) => p.kind)).toContain('metadata_mismatch');
    await writeFile(file, JSON.stringify({ ...good, title: 5, kind: {}, createdAt: 7, forkedFrom: 'x' }));
    const meta = await w.session.metadata();
    expect(meta).toMatchObject({ title: good.title, kind: 'root', createdAt: good.createdAt });
    expect(meta.forkedFrom).toBeUndefined();
  });
});

// Fuzz defects (issue 16): a workspace.json holding `null` made listing workspaces throw a TypeError,
// and an unreadable scan index made GC and store stats fail INTERNAL instead of LOG_CORRUPT.
describe('forged workspace files', () => {
  it('workspace.json that is not an object, and a damaged scan index, are LOG_CORRUPT', async () => {
    const { w, wsDir } = await setup();
    const index = await readFile(join(wsDir, 'scan-index.bin'));
    await writeFile(join(wsDir, 'scan-index.bin'), Buffer.concat([index.subarray(0, 4), Buffer.from([0]), index.subarray(4)]));
    for (const run of [() => storeStats(w.session.ctx), () => runGc(w.session.ctx)]) {
      await expect(run()).rejects.toMatchObject({ code: 'LOG_CORRUPT' });
    }
    await writeFile(join(wsDir, 'workspace.json'), 'null');
    const store = await openStore({ dir: w.dirs.store });
    await expect(store.listWorkspaces()).rejects.toMatchObject({ code: 'LOG_CORRUPT' });
  });
});

