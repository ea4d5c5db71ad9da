// Sessions of a workspace against a model (issue 16's removal fixes, issue 10's fork defaults): random
// creates, forks, removals, removals killed after their commit point (the log unlinked, the folder and
// its lock left behind) and repeated removals, on a real store, compared after every step with a map
// of id -> parent. list/get/tree must show exactly the model's sessions; a removed id must be
// SESSION_NOT_FOUND everywhere; removing a half-removed id finishes it (no folder left).
import { access, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { isCkptError, openStore } from '../src/index.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

type Op =
  | { kind: 'create'; id: string }
  | { kind: 'fork'; from: string; id: string }
  | { kind: 'remove'; id: string }
  | { kind: 'killedRemove'; id: string };

const ids = fc.constantFrom('s1', 's2', 's3', 's4', 's5');
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), id: ids }),
  fc.record({ kind: fc.constant('fork' as const), from: ids, id: ids }),
  fc.record({ kind: fc.constant('remove' as const), id: ids }),
  fc.record({ kind: fc.constant('killedRemove' as const), id: ids }),
);

let dirs: TempDirs | undefined;
afterEach(async () => {
  await dirs?.cleanup();
  dirs = undefined;
});

const exists = (p: string) => access(p).then(() => true, () => false);

describe('session lifecycle vs a model', () => {
  it('create / fork / remove / killed remove keep list, get and tree equal to the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
        await dirs?.cleanup();
        dirs = await makeTempDirs('ckpt-lifecycle-');
        const store = await openStore({ dir: dirs.store, retention: false });
        const ws = await store.openWorkspace(dirs.workspace);
        const folder = (id: string) => join(dirs!.store, 'workspaces', ws.id, 'sessions', id);
        /** id -> parent id (undefined for a root). */
        const model = new Map<string, string | undefined>();
        /** Sessions whose parent was removed (its id may name a newer session since). */
        const orphans = new Set<string>();
        const removed = (id: string): void => {
          model.delete(id);
          orphans.delete(id);
          for (const [child, parent] of model) if (parent === id) orphans.add(child);
        };
        for (const o of ops) {
          if (o.kind === 'create') {
            const r = await ws.create({ id: o.id }).then(() => 'ok', (e: unknown) => e);
            if (model.has(o.id) || (await exists(folder(o.id)))) expect(r === 'ok' || isCkptError(r)).toBe(true);
            else expect(r).toBe('ok');
            if (r === 'ok') model.set(o.id, undefined);
            if (r === 'ok') orphans.delete(o.id);
          } else if (o.kind === 'fork') {
            const r = await ws.fork(o.from, { id: o.id }).then(() => 'ok', (e: unknown) => e);
            if (!model.has(o.from)) expect(isCkptError(r, 'SESSION_NOT_FOUND')).toBe(true);
            else if (model.has(o.id)) expect(isCkptError(r)).toBe(true);
            if (r === 'ok') model.set(o.id, o.from);
            if (r === 'ok') orphans.delete(o.id);
          } else if (o.kind === 'remove') {
            const r = await ws.remove(o.id).then(() => 'ok', (e: unknown) => e);
            if (model.has(o.id)) expect(r).toBe('ok');
            else expect(isCkptError(r, 'SESSION_NOT_FOUND')).toBe(true);
            removed(o.id);
            // Removed, or a half-removed leftover finished: no folder either way.
            expect(await exists(folder(o.id))).toBe(false);
          } else if (model.has(o.id)) {
            // What a SIGKILL between the log's unlink (the commit point) and the lock's release leaves.
            await rm(join(folder(o.id), 'events.jsonl'));
            await mkdir(join(folder(o.id), 'events.jsonl.ckpt-lock'), { recursive: true });
            removed(o.id);
          }
          // Compare with the model.
          const listed = (await ws.list()).map((m) => m.id).sort();
          expect(listed).toEqual([...model.keys()].sort());
          for (const [id, parent] of model) {
            const meta = await (await ws.get(id)).metadata();
            expect(meta.parent).toBe(parent);
          }
          for (const id of ['s1', 's2', 's3', 's4', 's5'].filter((i) => !model.has(i))) {
            expect(isCkptError(await ws.get(id).catch((e: unknown) => e), 'SESSION_NOT_FOUND')).toBe(true);
          }
          const inTree: string[] = [];
          const walk = (nodes: Awaited<ReturnType<typeof ws.tree>>, parent?: string): void => {
            for (const n of nodes) {
              inTree.push(n.session.id);
              // Under its parent, or a root when the parent is gone (its id possibly reused since).
              if (n.session.parent !== undefined && n.session.parent !== parent) expect(parent === undefined && (!model.has(n.session.parent) || orphans.has(n.session.id))).toBe(true);
              walk(n.children, n.session.id);
            }
          };
          walk(await ws.tree());
          expect(inTree.sort()).toEqual(listed);
        }
        await store.close?.();
      }),
      {
        numRuns: Number(process.env.CKPT_PROPERTY_RUNS ?? 40),
        // Found in CI: s5 forked from s1, s1 removed, a new s1 forked from s5 — a parent cycle by id.
        examples: [[[{ kind: 'create', id: 's1' }, { kind: 'fork', from: 's1', id: 's5' }, { kind: 'remove', id: 's1' }, { kind: 'fork', from: 's5', id: 's1' }, { kind: 'fork', from: 's1', id: 's1' }]]],
      },
    );
  }, 120_000);
});
