import { describe, expect, it } from 'vitest';
import { useLibWorld } from '../../test/helpers/lib-session.js';
import fc from 'fast-check';
import type { Workspace } from '../store.js';
import { foldMetadata, METADATA_LAG } from './metadata.js';
import { createSessionStore } from './session-store.js';
import type { NewEvent } from '../format/event.js';

let ws: Workspace;
useLibWorld('ckpt-test-', (world) => ({ ws } = world), { session: false });

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
    const { pos, ...cached } = onDisk;
    expect(cached).toEqual(meta);
    expect(pos).toMatchObject({ seq: 4 });
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

  it('writes a fork-point record in the fork\'s own create, after the copied events, asked for only once the point is valid', async () => {
    const root = await ws.create({ title: 'root' });
    await root.append([{ type: 'message', n: 1 }, { type: 'message', n: 2 }]);
    const sessions = createSessionStore(ws.ctx);
    let asked = 0;
    const record = async (): Promise<NewEvent[]> => {
      asked++;
      return [{ type: 'note', k: 1 }, { type: 'note', k: 2 }];
    };
    await expect(sessions.fork(root.id, { atSeq: 99, record })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(asked).toBe(0);
    const fork = await sessions.fork(root.id, { atSeq: 2, record });
    expect(asked).toBe(1);
    const events = await fork.events();
    expect(events.map((e) => [e.seq, e.type])).toEqual([[1, 'session'], [2, 'message'], [3, 'note'], [4, 'note']]);
    expect(events[2]!.at).toBe(events[0]!.at);
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

  // Model: the metadata folded from the whole log. metadata.json lags behind work events and may be
  // removed, garbled or forged in between; metadata() must always equal the model.
  it('metadata() equals the fold of the whole log whatever state metadata.json is in (property)', async () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant('append' as const), types: fc.array(fc.constantFrom('capture', 'settle', 'scan', 'conflict', 'title', 'turn', 'end', 'message'), { minLength: 1, maxLength: 5 }) }),
      fc.record({ op: fc.constantFrom('remove' as const, 'garble' as const, 'forge-line' as const, 'forge-seq' as const, 'old-format' as const) }),
    );
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const s = await ws.create({ id: `p${n++}`, title: 't' });
        const file = `workspaces/${ws.id}/sessions/${s.id}/metadata.json`;
        let turn = 0;
        for (const st of steps) {
          if (st.op === 'append') {
            await s.append(st.types.map((type) => (type === 'title' ? { type, title: `t${turn}` } : type === 'turn' ? { type, turn: ++turn } : type === 'capture' ? { type, tag: `${turn}.1`, turn, k: 1, tool: 'Edit', files: [] } : type === 'settle' ? { type, tag: `${turn}.1`, files: [] } : type === 'conflict' ? { type, path: 'a', otherSession: 'x', expected: null, actual: null } : { type })));
          } else {
            const raw = await ws.ctx.backend.read(file);
            if (st.op === 'remove') await ws.ctx.backend.remove(file);
            else if (st.op === 'garble') await ws.ctx.backend.write(file, Buffer.from('{"id":'));
            // A file of an older version: right, with no position (trusted when its count is the log's).
            else if (st.op === 'old-format') await ws.ctx.backend.write(file, Buffer.from(JSON.stringify(foldMetadata(undefined, await s.events(), { id: s.id, workspace: ws.root }))));
            else if (raw && raw.toString('utf8') !== '{"id":') {
              const m = JSON.parse(raw.toString('utf8'));
              if (!m.pos) continue;
              if (st.op === 'forge-line') m.pos.lastLine = m.pos.lastLine.replace('"v":1', '"v":1 ');
              if (st.op === 'forge-seq') m.pos = { ...m.pos, seq: m.pos.seq + 1, bytes: 'x' };
              m.title = 'forged';
              await ws.ctx.backend.write(file, Buffer.from(JSON.stringify(m)));
            }
          }
          const events = await s.events();
          expect(await s.metadata()).toEqual(foldMetadata(undefined, events, { id: s.id, workspace: ws.root }));
        }
      }),
      { numRuns: 25 },
    );
  });

  it('rewrites metadata.json at most every METADATA_LAG work events, at once for other events', async () => {
    const s = await ws.create({ id: 'lag', title: 't' });
    const file = `workspaces/${ws.id}/sessions/${s.id}/metadata.json`;
    const onDisk = async (): Promise<number> => JSON.parse((await ws.ctx.backend.read(file))!.toString('utf8')).eventCount;
    await s.append([{ type: 'capture', tag: '0.1', turn: 0, k: 1, tool: 'Edit', files: [] }]);
    expect(await onDisk()).toBe(1);
    expect((await s.metadata()).eventCount).toBe(2);
    for (let seq = 3; seq < METADATA_LAG; seq++) await s.append([{ type: 'settle', tag: '0.1', files: [] }]);
    expect(await onDisk()).toBe(1);
    await s.append([{ type: 'settle', tag: '0.1', files: [] }]);
    expect(await onDisk()).toBe(METADATA_LAG);
    await s.setTitle('renamed');
    expect(await onDisk()).toBe(METADATA_LAG + 1);
  });
});
