import { describe, expect, it } from 'vitest';
import { useLibWorld } from '../../test/helpers/lib-session.js';
import type { Workspace } from '../store.js';

let ws: Workspace;
useLibWorld('ckpt-test-', (world) => ({ ws } = world), { session: false });

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('session info (agent, external id, model, …)', () => {
  it('is set on create, changed and cleared later, and survives a metadata rebuild', async () => {
    const s = await ws.create({ title: 't', info: { agent: 'claude', externalId: 'abc-123', model: 'opus', cwd: '/x' } });
    expect(await s.metadata()).toMatchObject({ agent: 'claude', externalId: 'abc-123', model: 'opus', cwd: '/x', depth: 0 });
    await s.setInfo({ model: 'sonnet', cwd: null, taskId: 'T-1' });
    const meta = await s.metadata();
    expect(meta).toMatchObject({ agent: 'claude', model: 'sonnet', taskId: 'T-1' });
    expect(meta.cwd).toBeUndefined();
    const rebuilt = await s.saveMetadata();
    expect(rebuilt).toEqual(meta);
  });

  it('refuses unknown fields and non-strings, recording nothing', async () => {
    await expect(ws.create({ info: { nope: 'x' } as never })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(ws.create({ info: { agent: 42 } as never })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(await ws.list()).toEqual([]);
    const s = await ws.create({});
    await expect(s.setInfo({ agent: '' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((await s.events()).length).toBe(1);
  });

  it('filters the list and finds a session by the agent’s own id', async () => {
    const a = await ws.create({ info: { agent: 'claude', externalId: 'c1' } });
    await ws.create({ info: { agent: 'gemini', externalId: 'g1' } });
    const child = await ws.create({ parent: a.id, info: { agent: 'claude', spawnedFrom: 'toolu_1' } });
    expect((await ws.list({ agent: 'claude' })).map((m) => m.id).sort()).toEqual([a.id, child.id].sort());
    expect((await ws.list({ agent: 'claude', externalId: 'c1' })).map((m) => m.id)).toEqual([a.id]);
    expect((await ws.list({ parent: a.id })).map((m) => m.id)).toEqual([child.id]);
    expect((await ws.list({ kind: 'child' })).map((m) => m.id)).toEqual([child.id]);
    expect(await child.metadata()).toMatchObject({ depth: 1, parent: a.id, kind: 'child' });
  });

  it('a fork is one deeper, keeps the agent but not the agent’s session id, and is never updated before it was created', async () => {
    const s = await ws.create({ info: { agent: 'claude', externalId: 'c1', model: 'opus' } });
    await s.append([{ type: 'message', role: 'user', text: 'hi' }]);
    await tick();
    const fork = await ws.fork(s.id);
    const meta = await fork.metadata();
    expect(meta).toMatchObject({ agent: 'claude', model: 'opus', depth: 1 });
    expect(meta.externalId).toBeUndefined();
    expect(meta.updatedAt >= meta.createdAt).toBe(true);
    expect((await ws.latest()).id).toBe(fork.id);
  });

  it('retitling refuses a blank title and does not move the session in the list', async () => {
    const a = await ws.create({ title: 'a' });
    await tick();
    const b = await ws.create({ title: 'b' });
    await tick();
    await expect(a.setTitle('  ')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((await a.setTitle('renamed')).title).toBe('renamed');
    await a.setInfo({ model: 'x' });
    expect((await ws.list()).map((m) => m.id)).toEqual([b.id, a.id]);
  });
});
