import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDirs, type TempDirs } from '../../test/helpers/temp.js';
import { openStore, type Workspace } from '../store.js';

let dirs: TempDirs;
let ws: Workspace;

beforeEach(async () => {
  dirs = await makeTempDirs();
  ws = await (await openStore({ dir: dirs.store })).openWorkspace(dirs.workspace);
});
afterEach(() => dirs.cleanup());

describe('session store', () => {
  it('creates sessions with generated or given ids and lists them newest first', async () => {
    const a = await ws.create({ title: 'first' });
    await new Promise((r) => setTimeout(r, 5));
    const b = await ws.create({ id: 'my-session', title: 'second' });
    expect(a.id).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]*$/);
    expect(b.id).toBe('my-session');
    expect((await ws.list()).map((m) => m.id)).toEqual(['my-session', a.id]);
    await new Promise((r) => setTimeout(r, 5));
    await a.append([{ type: 'message', role: 'user', text: 'hi' }]);
    expect((await ws.list()).map((m) => m.id)).toEqual([a.id, 'my-session']);
    expect((await ws.latest()).id).toBe(a.id);
  });

  it('refuses a duplicate id and an invalid id, and reports unknown sessions', async () => {
    await ws.create({ id: 'dup' });
    await expect(ws.create({ id: 'dup' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(ws.create({ id: '../escape' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(ws.get('nope')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    await expect(ws.latest()).resolves.toMatchObject({ id: 'dup' });
  });

  it('keeps metadata consistent with the log and stores agent events verbatim', async () => {
    const s = await ws.create({ title: 't' });
    const payload = { type: 'tool_call', name: 'Edit', input: { file: 'a.ts', nested: [1, { x: null }] } };
    await s.append([payload, { type: 'message', text: 'ünïcödé ✓' }]);
    await s.setTitle('renamed');
    const meta = await s.metadata();
    expect(meta).toMatchObject({ title: 'renamed', kind: 'root', eventCount: 4, lastEventType: 'title', workspace: ws.root });
    // Read back through the store's backend: the folder's file, or a shared store's row.
    const onDisk = JSON.parse((await ws.ctx.backend.read(`workspaces/${ws.id}/sessions/${s.id}/metadata.json`))!.toString('utf8'));
    expect(onDisk).toEqual(meta);
    const events = await s.events();
    expect(events[1]).toMatchObject({ ...payload, seq: 2, v: 1 });
    expect(events[2]).toMatchObject({ type: 'message', text: 'ünïcödé ✓' });
  });

  it('forks at a position copying events, and tracks children, lineage and tree', async () => {
    const root = await ws.create({ title: 'root' });
    await root.append([{ type: 'message', n: 1 }, { type: 'message', n: 2 }, { type: 'message', n: 3 }]);
    const fork = await ws.fork(root.id, { atSeq: 3 });
    const forkEvents = await fork.events();
    expect(forkEvents.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(forkEvents[0]).toMatchObject({ type: 'session', kind: 'fork', parent: root.id, forkedFrom: { session: root.id, seq: 3 } });
    expect(forkEvents[2]).toMatchObject({ type: 'message', n: 2 });
    expect(await fork.metadata()).toMatchObject({ kind: 'fork', parent: root.id, forkedFrom: { session: root.id, seq: 3 } });
    const child = await ws.create({ parent: fork.id, title: 'sub-agent' });
    expect((await child.metadata()).kind).toBe('child');
    expect((await ws.lineage(child.id)).map((m) => m.id)).toEqual([root.id, fork.id, child.id]);
    const tree = await ws.tree();
    expect(tree).toHaveLength(1);
    expect(tree[0]!.session.id).toBe(root.id);
    expect(tree[0]!.children[0]!.children[0]!.session.id).toBe(child.id);
    await expect(ws.fork(root.id, { atSeq: 99 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(ws.create({ kind: 'child' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('removes a session and its folder', async () => {
    const s = await ws.create();
    await ws.remove(s.id);
    await expect(ws.get(s.id)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    expect(await ws.ctx.backend.children(`workspaces/${ws.id}/sessions`)).toEqual([]);
    await expect(ws.remove(s.id)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  });

  it('rebuilds missing metadata from the log', async () => {
    const s = await ws.create({ title: 'x' });
    await s.append([{ type: 'message' }]);
    await ws.ctx.backend.remove(`workspaces/${ws.id}/sessions/${s.id}/metadata.json`);
    expect(await s.metadata()).toMatchObject({ title: 'x', eventCount: 2 });
    expect((await ws.list())[0]).toMatchObject({ id: s.id, eventCount: 2 });
  });
});
