// Issue 27 item 7: no store operation follows a symlink planted anywhere below the store root. A link
// at `blobs/<xx>` made a blob write land outside the store; now every write, append, lock, removal and
// create refuses (FORBIDDEN) and the outside folder stays untouched. The store root itself may be a link.
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/index.js';
import { verify } from '../../src/gc/verify.js';
import { createFsBackend } from '../../src/storage/fs/fs-backend.js';
import { isCkptError } from '../../src/errors.js';

let base: string;
let store: string;
let outside: string;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'ckpt-sec-links-'));
  store = join(base, 'store');
  outside = join(base, 'outside');
  await mkdir(store);
  await mkdir(outside);
});
afterEach(() => rm(base, { recursive: true, force: true }));

async function refused(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return isCkptError(err) ? err.code : String(err);
  }
  return 'resolved';
}

describe('symlinks planted in a folder store', () => {
  const ops: Record<string, (b: ReturnType<typeof createFsBackend>, key: string) => Promise<unknown>> = {
    create: (b, key) => b.create(key, Buffer.from('data')),
    write: (b, key) => b.write(key, Buffer.from('data')),
    append: (b, key) => b.append(key, Buffer.from('line\n')),
    truncate: (b, key) => b.truncate(key, 0),
    remove: (b, key) => b.remove(key),
    lock: (b, key) => b.withLock(key, async () => 'ran'),
    removeTree: (b, key) => b.removeTree(key),
  };
  for (const [name, op] of Object.entries(ops)) {
    for (const depth of [1, 2, 3]) {
      it(`${name} through a linked folder at depth ${depth}`, async () => {
        const segs = ['a', 'b', 'c'].slice(0, depth);
        // Real folders above the link, the link at the last of them.
        if (depth > 1) await mkdir(join(store, ...segs.slice(0, -1)), { recursive: true });
        await symlink(outside, join(store, ...segs));
        await writeFile(join(outside, 'victim'), 'keep me');
        const backend = createFsBackend({ dir: store });
        const code = await refused(op(backend, [...segs, 'victim'].join('/')));
        expect(code).toBe('FORBIDDEN');
        expect((await readdir(outside)).sort()).toEqual(['victim']);
      });
    }
  }

  it('a capture whose blob folder was replaced by a link writes nothing outside the store', async () => {
    const ws = join(base, 'ws');
    await mkdir(ws);
    const content = 'z'.repeat(100_000); // over the inline limit: the blob goes to blobs/<xx>/ before the answer
    await writeFile(join(ws, 'f.txt'), content);
    const s = await openStore({ dir: store });
    const session = await (await s.openWorkspace(ws)).create({ id: 's1', baseline: false });
    const id = createHash('sha256').update(content).digest('hex');
    await mkdir(join(store, 'blobs'), { recursive: true });
    await symlink(outside, join(store, 'blobs', id.slice(0, 2)));
    const code = await refused(session.capture(['f.txt']));
    expect(code).toBe('FORBIDDEN');
    expect(await readdir(outside)).toEqual([]);
  });

  it('verify reports every symlink planted in the store (a pack, a blob folder), which reads may follow', async () => {
    const ws = join(base, 'ws');
    await mkdir(ws);
    await writeFile(join(ws, 'f.txt'), 'hello');
    const s = await openStore({ dir: store });
    const session = await (await s.openWorkspace(ws)).create({ id: 's1' });
    await session.capture(['f.txt']);
    expect(await verify(s.ctx)).toMatchObject({ ok: true, problems: [] });
    await writeFile(join(outside, 'file'), 'x');
    await mkdir(join(store, 'packs'), { recursive: true });
    await symlink(join(outside, 'file'), join(store, 'packs', 'planted.pack'));
    await mkdir(join(store, 'blobs'), { recursive: true });
    await symlink(outside, join(store, 'blobs', 'aa'));
    const r = await verify(s.ctx);
    expect(r.ok).toBe(false);
    expect(r.problems.filter((p) => p.kind === 'store_symlink').map((p) => (p as { key: string }).key)).toEqual(['blobs/aa', 'packs/planted.pack']);
    await s.close();
  });

  it('verify reports a session folder planted as a symlink and goes on, never FORBIDDEN', async () => {
    const ws = join(base, 'ws');
    await mkdir(ws);
    await writeFile(join(ws, 'f.txt'), 'hello');
    const s = await openStore({ dir: store });
    const w = await s.openWorkspace(ws);
    await (await w.create({ id: 's1' })).capture(['f.txt']);
    await (await w.create({ id: 's2' })).capture(['f.txt']);
    await s.close();
    const sessions = join(store, 'workspaces', w.id, 'sessions');
    await cp(join(sessions, 's1'), join(outside, 's1'), { recursive: true });
    await rm(join(sessions, 's1'), { recursive: true });
    await symlink(join(outside, 's1'), join(sessions, 's1'));
    const again = await openStore({ dir: store });
    const r = await verify(again.ctx);
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([expect.objectContaining({ kind: 'store_symlink', key: `workspaces/${w.id}/sessions/s1` })]);
    expect(r.checked.sessions).toBe(1); // s2 is still read
    await again.close();
  });

  it('the store root itself may be a symlink', async () => {
    const link = join(base, 'store-link');
    await symlink(store, link);
    const backend = createFsBackend({ dir: link });
    await backend.write('x/y', Buffer.from('ok'));
    await backend.append('x/log', Buffer.from('1\n'));
    expect((await backend.read('x/y'))?.toString()).toBe('ok');
  });
});
