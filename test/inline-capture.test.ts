// Inline before-images (DESIGN §3 "inline", §10 "Daemon"): a tool capture of small new content
// carries it in its event, durable with the log's one fsync; the blob-store copy follows. When that
// copy never happens (a crash right after the append — simulated by a `defer` that drops the work),
// everything that reads the content reads the log's copy, verified like a stored blob.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, verify, type Store, type Workspace } from '../src/index.js';
import type { Session } from '../src/api/session.js';
import type { CaptureEvent } from '../src/format/event.js';
import { INLINE_MAX_BYTES } from '../src/format/inline-blobs.js';
import { catchUpOwners } from '../src/capture/owner-index.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let ws: Workspace;
let session: Session;
const w = (rel: string) => join(dirs.workspace, rel);
const captures = async (): Promise<CaptureEvent[]> => (await session.events()).filter((e): e is CaptureEvent => e.type === 'capture');
const logFile = async (): Promise<string> => join(dirs.store, 'workspaces', ws.id, 'sessions', session.id, 'events.jsonl');

/** The store reopened with a `defer` that drops the work after the commit (the blob-store copies): as after a crash right after an append. */
async function reopenDroppingCopies(): Promise<void> {
  await store.close();
  store = await openStore({ dir: dirs.store, defer: () => {} });
  ws = await store.openWorkspace(dirs.workspace);
  session = await ws.get(session.id);
}

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-inline-');
  store = await openStore({ dir: dirs.store });
  ws = await store.openWorkspace(dirs.workspace);
  session = await ws.create({ title: 'inline', baseline: false });
});
afterEach(async () => {
  await store.close();
  await dirs.cleanup();
});

describe('inline before-images', () => {
  it('carries small new content in the capture event, copies it to the blob store after, and not content the store holds', async () => {
    await writeFile(w('small.txt'), 'small v1');
    await writeFile(w('big.bin'), Buffer.alloc(INLINE_MAX_BYTES + 1, 7));
    const r = await session.capture(['small.txt', 'big.bin'], { tool: 'Edit' });
    const [c] = await captures();
    const small = r.files.find((f) => f.path === 'small.txt')!.blob!;
    const big = r.files.find((f) => f.path === 'big.bin')!.blob!;
    expect(Object.keys(c!.inline ?? {})).toEqual([small]);
    await ws.ctx.afterCall.drain(); // the copy follows the answer (the store's queue without a daemon)
    expect(await ws.ctx.blobs.has(small)).toBe(true);
    expect((await ws.ctx.blobs.get(big)).length).toBe(INLINE_MAX_BYTES + 1);
    // The same content again: the store holds it, so nothing is carried.
    await session.capture(['small.txt'], { tool: 'Edit' });
    expect((await captures())[1]!.inline).toBeUndefined();
  });

  it('without the blob-store copy, file-at, diff, restore, undo and verify read the log copy', async () => {
    await reopenDroppingCopies();
    await writeFile(w('a.txt'), 'before the edit');
    const cap = await session.capture(['a.txt'], { tool: 'Edit' });
    const id = cap.files[0]!.blob!;
    await writeFile(w('a.txt'), 'after the edit');
    await session.settle(['a.txt']);
    expect(await ws.ctx.blobs.has(id)).toBe(false);

    expect((await session.readFile('0', 'a.txt')).content?.toString()).toBe('before the edit');
    const d = await session.diff(cap.tag!, undefined, { patch: true });
    expect(d.patch).toContain('-before the edit');
    expect(await verify(store.ctx)).toMatchObject({ ok: true, problems: [] });

    const r = await session.restore(cap.tag!);
    expect(r.restored).toEqual(['a.txt']);
    expect(await readFile(w('a.txt'), 'utf8')).toBe('before the edit');
    // A restore plan names the blob: it is in the store now (recovery after a crash reads it there).
    expect(await ws.ctx.blobs.has(id)).toBe(true);
    await session.undo(r.undo!, 'a.txt');
    expect(await readFile(w('a.txt'), 'utf8')).toBe('after the edit');
    expect(await verify(store.ctx)).toMatchObject({ ok: true });
  });

  it('a settle carries small new content too: a later scan (its before-image) and a restore read it from the log', async () => {
    await reopenDroppingCopies();
    await writeFile(w('a.txt'), 'v0');
    await session.scan();
    await session.capture(['a.txt'], { tool: 'Write' });
    await writeFile(w('a.txt'), 'written by the agent');
    const settled = await session.settle(['a.txt']);
    const id = settled.files[0]!.blob!;
    const event = (await session.events()).find((e) => e.type === 'settle')!;
    expect(Object.keys((event as { inline?: object }).inline ?? {})).toEqual([id]);
    expect(await ws.ctx.blobs.has(id)).toBe(false);
    // A hand edit: the scan's before-image is the settle's content, which only the settle's event holds.
    await writeFile(w('a.txt'), 'edited by hand');
    const scan = await session.scan();
    expect(scan.files.map((f) => f.path)).toEqual(['a.txt']);
    expect((await session.readFile(scan.tag!, 'a.txt')).content?.toString()).toBe('written by the agent');
    const r = await session.restore(scan.tag!);
    expect(r.restored).toEqual(['a.txt']);
    expect(await readFile(w('a.txt'), 'utf8')).toBe('written by the agent');
    expect(await verify(store.ctx)).toMatchObject({ ok: true, problems: [] });
  });

  it('under a daemon the owner index follows the answer, and a reader in the process runs a write still queued', async () => {
    const queued: (() => Promise<void>)[] = [];
    store.ctx.options.defer = (work) => void queued.push(work);
    const other = await ws.create({ title: 'other', baseline: false });
    await writeFile(w('p.txt'), 'p0');
    await session.capture(['p.txt'], { tool: 'Write' });
    await session.settle(['p.txt']);
    await other.capture(['p.txt'], { tool: 'Write' });
    await writeFile(w('p.txt'), 'by other');
    await other.settle(['p.txt']);
    expect(queued.length).toBeGreaterThan(0);
    // The first session's next capture reads the index: the queued writes run first, so the other session's write is its conflict.
    await writeFile(w('p.txt'), 'by other, then changed');
    const cap = await session.capture(['p.txt'], { tool: 'Edit' });
    expect(cap.conflicts).toEqual([{ path: 'p.txt', otherSession: other.id }]);
    // The index names only blobs the store holds: each write copied its settle's inline content first.
    expect(await verify(store.ctx)).toMatchObject({ ok: true, problems: [] });
    // The queue's own runs afterwards change nothing (each write runs once).
    for (const work of queued) await work();
    const owners = JSON.parse(await readFile(join(dirs.store, 'workspaces', ws.id, 'owners.json'), 'utf8'));
    expect(owners['p.txt'].session).toBe(other.id);
  });

  it('a scan that reads few files carries their small new content in its settle; without the copy, the next scan, a restore and verify read the log', async () => {
    await writeFile(w('a.txt'), 'v0');
    await session.scan();
    await reopenDroppingCopies();
    await writeFile(w('a.txt'), 'changed by a shell command');
    await writeFile(w('b.txt'), 'created by it');
    const scan = await session.scan();
    expect(scan.files.map((f) => f.path).sort()).toEqual(['a.txt', 'b.txt']);
    const settle = (await session.events()).filter((e) => e.type === 'settle').at(-1) as { inline?: Record<string, string> };
    const ids = scan.files.map((f) => f.blob!);
    expect(Object.keys(settle.inline ?? {}).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(await ws.ctx.blobs.has(id)).toBe(false);
    // The scan index names them (a later scan's before-images): verify counts the log's copy.
    expect(await verify(store.ctx)).toMatchObject({ ok: true, problems: [] });
    await writeFile(w('a.txt'), 'edited by hand');
    const next = await session.scan();
    expect((await session.readFile(next.tag!, 'a.txt')).content?.toString()).toBe('changed by a shell command');
    const r = await session.restore(next.tag!);
    expect(r.restored).toEqual(['a.txt']);
    expect(await readFile(w('a.txt'), 'utf8')).toBe('changed by a shell command');
    expect(await verify(store.ctx)).toMatchObject({ ok: true, problems: [] });
  });

  it('a scan settle whose carried content was forged: the next scan\'s before-image, verify and a restore refuse it (BLOB_CORRUPT), the workspace is untouched', async () => {
    await writeFile(w('a.txt'), 'v0');
    await session.scan();
    await reopenDroppingCopies();
    await writeFile(w('a.txt'), 'genuine, by a shell command');
    const scan = await session.scan();
    const id = scan.files[0]!.blob!;
    // Swap the settle's record for a well-formed record of other content, under the same id.
    await writeFile(w('other.txt'), 'forged!');
    const other = await session.capture(['other.txt'], { tool: 'Edit' });
    const lines = (await readFile(await logFile(), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    const settle = lines.filter((e) => e.type === 'settle').find((e) => e.inline?.[id]);
    const carrier = lines.filter((e) => e.type === 'capture').at(-1);
    settle.inline[id] = carrier.inline[other.files[0]!.blob!];
    await writeFile(await logFile(), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    // The process is gone (the content it read with it); the next daemon catches the index up.
    await reopenDroppingCopies();
    await catchUpOwners(ws.ctx, Date.now() - 60_000);

    const v = await verify(store.ctx);
    expect(v.ok).toBe(false);
    expect(v.problems).toContainEqual(expect.objectContaining({ kind: 'blob_corrupt', where: 'inline', blob: id }));
    await writeFile(w('a.txt'), 'edited by hand');
    const next = await session.scan();
    await expect(session.readFile(next.tag!, 'a.txt')).rejects.toMatchObject({ code: 'BLOB_CORRUPT' });
    await expect(session.restore(next.tag!, { paths: ['a.txt'] })).rejects.toMatchObject({ code: 'BLOB_CORRUPT' });
    expect(await readFile(w('a.txt'), 'utf8')).toBe('edited by hand');
  });

  it('a watched scan of a path the agent wrote reads it without storing the settle\'s content again; a later change restores to it', async () => {
    await writeFile(w('a.txt'), 'v0');
    await session.scan();
    await reopenDroppingCopies();
    await session.capture(['a.txt'], { tool: 'Write' });
    await writeFile(w('a.txt'), 'written by the agent');
    const id = (await session.settle(['a.txt'])).files[0]!.blob!;
    const watched = (paths: string[]) => session.scan({ tool: 'Bash', changedPaths: async () => new Set(paths), watchedOnly: true });
    const same = await watched(['a.txt']);
    expect(same?.files).toEqual([]);
    expect(await ws.ctx.blobs.has(id)).toBe(false); // held inline by the settle: not copied in the scan's answer
    expect(await verify(store.ctx)).toMatchObject({ ok: true, problems: [] });
    await writeFile(w('a.txt'), 'then a shell command');
    const changed = await watched(['a.txt']);
    expect(changed?.files.map((f) => f.path)).toEqual(['a.txt']);
    const r = await session.restore(changed!.tag!);
    expect(r.restored).toEqual(['a.txt']);
    expect(await readFile(w('a.txt'), 'utf8')).toBe('written by the agent');
    expect(await verify(store.ctx)).toMatchObject({ ok: true, problems: [] });
  });

  it('under a daemon, owner-index writes queued meanwhile become one rewrite, and readers see them before it', async () => {
    const queued: (() => Promise<void>)[] = [];
    store.ctx.options.defer = (work) => void queued.push(work);
    const other = await ws.create({ title: 'other', baseline: false });
    for (const name of ['x.txt', 'y.txt', 'z.txt']) {
      await other.capture([name], { tool: 'Write' });
      await writeFile(w(name), `${name} by other`);
      await other.settle([name]);
    }
    const ownersFile = join(dirs.store, 'workspaces', ws.id, 'owners.json');
    // One index write queued for the three settles (plus the captures' own copies, none here: new files).
    const ownerWrites = queued.length;
    expect(ownerWrites).toBe(1);
    await expect(readFile(ownersFile, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    // A capture in this session reads the index (conflicts): the other session's writes are in it.
    await session.capture(['x.txt'], { tool: 'Edit' });
    await writeFile(w('x.txt'), 'mine');
    await session.settle(['x.txt']);
    await writeFile(w('x.txt'), 'mine, then changed');
    for (const work of queued.splice(0)) await work();
    const owners = JSON.parse(await readFile(ownersFile, 'utf8'));
    expect(Object.keys(owners).sort()).toEqual(['x.txt', 'y.txt', 'z.txt']);
    expect([owners['x.txt'].session, owners['y.txt'].session, owners['z.txt'].session]).toEqual([session.id, other.id, other.id]);
    expect(await verify(store.ctx)).toMatchObject({ ok: true, problems: [] });
  });

  it('an owner record queued behind an answer never replaces a newer one another process wrote meanwhile', async () => {
    const queued: (() => Promise<void>)[] = [];
    store.ctx.options.defer = (work) => void queued.push(work);
    await session.capture(['q.txt'], { tool: 'Write' });
    await writeFile(w('q.txt'), 'by the agent');
    await session.settle(['q.txt']); // its owner record waits in the queue
    // Another process (a CLI restore) records the path anew, in place, before the queue runs.
    const other = await openStore({ dir: dirs.store });
    const otherSession = await (await other.openWorkspace(dirs.workspace)).create({ title: 'cli', baseline: false });
    await new Promise((r) => setTimeout(r, 5));
    await otherSession.capture(['q.txt'], { tool: 'Write' });
    await writeFile(w('q.txt'), 'by the other process');
    await otherSession.settle(['q.txt']);
    await other.close();
    for (const work of queued.splice(0)) await work();
    const owners = JSON.parse(await readFile(join(dirs.store, 'workspaces', ws.id, 'owners.json'), 'utf8'));
    expect(owners['q.txt'].session).toBe(otherSession.id);
  });

  it('a fork of a session whose inline content has no store copy yet (a daemon\'s quiet queue, or a kill) stores it from the log and restores it', async () => {
    await reopenDroppingCopies();
    await writeFile(w('a.txt'), 'by hand, never stored');
    const cap = await session.capture(['a.txt'], { tool: 'Edit' });
    await writeFile(w('a.txt'), 'by the agent');
    await session.settle(['a.txt']);
    const id = cap.files[0]!.blob!;
    expect(await ws.ctx.blobs.has(id)).toBe(false);
    const fork = await ws.fork(session.id);
    expect(await ws.ctx.blobs.has(id)).toBe(true);
    await fork.restore(cap.tag!, { force: true });
    expect(await readFile(w('a.txt'), 'utf8')).toBe('by hand, never stored');
  });

  it('checks the log copy against its id: a forged one is BLOB_CORRUPT for readers and verify, and a restore changes nothing', async () => {
    store.ctx.options.defer = () => {};
    await writeFile(w('a.txt'), 'genuine');
    const cap = await session.capture(['a.txt'], { tool: 'Edit' });
    await writeFile(w('a.txt'), 'now');
    // Swap the carried record for the (well-formed) record of other content, under the same id.
    await writeFile(w('other.txt'), 'forged!');
    const other = await session.capture(['other.txt'], { tool: 'Edit' });
    const lines = (await readFile(await logFile(), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    const [first, second] = lines.filter((e) => e.type === 'capture');
    first.inline[cap.files[0]!.blob!] = second.inline[other.files[0]!.blob!];
    await writeFile(await logFile(), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);

    await expect(session.readFile(cap.tag!, 'a.txt')).rejects.toMatchObject({ code: 'BLOB_CORRUPT' });
    const v = await verify(store.ctx);
    expect(v.ok).toBe(false);
    expect(v.problems).toContainEqual(expect.objectContaining({ kind: 'blob_corrupt', where: 'inline', blob: cap.files[0]!.blob }));
    await expect(session.restore(cap.tag!, { paths: ['a.txt'] })).rejects.toMatchObject({ code: 'BLOB_CORRUPT' });
    expect(await readFile(w('a.txt'), 'utf8')).toBe('now');
  });
});
