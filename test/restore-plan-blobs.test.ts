// Plans and results of big restores live in blobs (issue 9, DESIGN §10 "Restore journal"): the log
// lines stay small, replay's `known` (drift) and recovery read the plan from its blob in a fresh
// process, GC keeps the plan blob and what it references, and a plan blob is untrusted input.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CkptError, isCkptError } from '../src/errors.js';
import { openStore } from '../src/index.js';
import type { EventBase } from '../src/format/event.js';
import { collectLiveSet, runGc } from '../src/gc/index.js';
import { restore } from '../src/restore/index.js';
import { INLINE_PLAN_MAX, planFields } from '../src/session/restore-plans.js';
import { makeWorld, snapshot, type World } from './fixtures/restore-world.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeWorld);
const N = INLINE_PLAN_MAX + 6;
const names = Array.from({ length: N }, (_, i) => `d${i % 7}/f${i}.txt`);

/** N files written at turn 1, rewritten by a tool in turn 1: restoring to `1` touches all N. */
async function bigHistory(w: World): Promise<void> {
  for (const n of names) await w.write(n, `v0 ${n}\n`);
  await w.turn();
  await w.tool(names, async () => {
    for (const n of names) await w.write(n, `v1 ${n}\n`);
  });
}

async function logLines(w: World): Promise<string[]> {
  return (await readFile(join(w.session.ctx.dir!, w.session.key, 'events.jsonl'), 'utf8')).trim().split('\n');
}

describe('restore plans in blobs', () => {
  it('a big restore journals its plan and result by blob id; a fresh process replays them for drift', async () => {
    const w = await world();
    await bigHistory(w);
    const before = await snapshot(w.root);
    const r = await restore(w.session, '1');
    expect(r.restored).toHaveLength(N);
    const events = await w.session.events();
    const started = events.find((e) => e.type === 'restore_started')!;
    const committed = events.find((e) => e.type === 'restore_committed')!;
    expect(started.plan).toBeUndefined();
    expect(started).toMatchObject({ planBlob: expect.stringMatching(/^[0-9a-f]{64}$/), planCount: N });
    expect(committed.result as Record<string, unknown>).toMatchObject({ restoredCount: N, deletedCount: 0, resultBlob: expect.stringMatching(/^[0-9a-f]{64}$/), undo: r.undo });
    const lines = await logLines(w);
    for (const line of lines.filter((l) => /"restore_(started|committed)"/.test(l))) expect(line.length).toBeLessThan(1000);
    const stored = JSON.parse((await w.session.ctx.blobs.get((committed.result as Record<string, string>).resultBlob!)).toString('utf8'));
    expect(stored.result.restored).toEqual(r.restored);

    // A fresh session handle (as a new process): known comes from the plan blob, so a path changed
    // since the restore is drift, and undoing the restore refuses.
    await w.write(names[3]!, 'changed by hand\n');
    const fresh = await w.ws.get(w.session.id);
    const refused = await restore(fresh, r.undo!).catch((e: unknown) => e);
    expect(isCkptError(refused, 'DRIFT')).toBe(true);
    expect((refused as { data: { drift: string[] } }).data.drift).toEqual([names[3]]);
    await restore(fresh, r.undo!, { force: true });
    expect(await snapshot(w.root)).toEqual(before);
  });

  // Fuzz defect (issue 16): status and readFile replayed `known` without loading plan blobs, so after
  // any restore of more than INLINE_PLAN_MAX paths both failed INTERNAL ("plan ... was not loaded").
  it('status and readFile after a big restore read its plan from the blob', async () => {
    const w = await world();
    await bigHistory(w);
    await w.write('other.txt', 'never captured\n');
    await restore(w.session, '1');
    // Enough events after it for a hot snapshot: a new process then folds only the log's tail, so
    // nothing loads the plan blob on the way to status.
    await w.session.append(Array.from({ length: 210 }, (_, i) => ({ type: 'message', id: `m${i}` })));
    const opened = async () => (await (await openStore({ dir: w.session.ctx.dir! })).openWorkspace(w.root)).get(w.session.id);
    await (await opened()).capture(['later.txt']);
    const fresh = await opened();
    expect((await fresh.status()).changed.paths).not.toContain(names[2]);
    await w.write(names[2]!, 'changed by hand\n');
    expect((await fresh.status()).changed.paths).toContain(names[2]);
    const at = await fresh.readFile('1', 'other.txt');
    expect(at.source).toBe('workspace');
  });

  it('GC keeps the plan blob and the blobs it references; commands keep working after it', async () => {
    const w = await world();
    await bigHistory(w);
    const r = await restore(w.session, '1');
    const started = (await w.session.events()).find((e) => e.type === 'restore_started')!;
    const planBlob = started.planBlob as string;
    const live = await collectLiveSet(w.store.ctx);
    expect(live.ids.has(planBlob)).toBe(true);
    const plan = JSON.parse((await w.store.ctx.blobs.get(planBlob)).toString('utf8')).plan as { blob: string }[];
    for (const e of plan) expect(live.ids.has(e.blob)).toBe(true);
    await runGc(w.store.ctx, { graceMs: 0 });
    expect(await w.store.ctx.blobs.has(planBlob)).toBe(true);
    await w.write(names[0]!, 'x\n');
    const fresh = await w.ws.get(w.session.id);
    expect(isCkptError(await restore(fresh, r.undo!).catch((e: unknown) => e), 'DRIFT')).toBe(true);
  });

  it('recovery finishes an interrupted restore from a plan blob in a fresh process', async () => {
    const w = await world();
    await bigHistory(w);
    const capture = (await w.session.events()).find((e) => e.type === 'capture')!;
    const plan = (capture.files as { path: string; blob: string; mode: number }[]).map((f) => ({ path: f.path, action: 'write', blob: f.blob, mode: f.mode }));
    const fields = await planFields(w.session.ctx.blobs, plan as never);
    expect(fields.plan).toBeUndefined();
    // The recovery capture records every planned path as it is (recovery carries out no other plan).
    const present = (await w.session.events()).find((e) => e.type === 'settle')!.files;
    await w.session.append([
      { type: 'capture', tag: '1.2', turn: 1, k: 2, tool: 'restore', restoreId: 'r1', stageDirs: [], files: present },
      { type: 'restore_started', id: 'r1', to: '1', recovery: '1.2', ...fields },
    ]);
    await w.ws.latest();
    for (const n of names.slice(0, 5)) expect(await w.read(n)).toBe(`v0 ${n}\n`);
    expect((await w.session.events()).at(-1)).toMatchObject({ type: 'restore_committed', id: 'r1', result: { recovered: true, restoredCount: N } });
  });

  it('a plan blob is untrusted: a bad path, a missing blob or a wrong count is LOG_CORRUPT, nothing is touched', async () => {
    const cases: [string, (w: World, blob: string) => Promise<Record<string, unknown>>][] = [
      ['escaping path', async (w, blob) => planFields(w.session.ctx.blobs, [...Array.from({ length: N }, (_, i) => ({ path: `ok${i}`, action: 'write' as const, blob })), { path: '../outside.txt', action: 'write' as const, blob }])],
      ['missing blob', async () => ({ planBlob: 'a'.repeat(64), planCount: N })],
      ['wrong count', async (w, blob) => ({ ...(await planFields(w.session.ctx.blobs, Array.from({ length: N }, (_, i) => ({ path: `ok${i}`, action: 'write' as const, blob })))), planCount: 3 })],
    ];
    const w = await world();
    await w.write('a.txt', 'a\n');
    await w.tool(['a.txt'], () => w.write('a.txt', 'b\n'));
    const blob = ((await w.session.events()).find((e) => e.type === 'capture')!.files as { blob: string }[])[0]!.blob;
    const before = await snapshot(w.root);
    for (const [label, make] of cases) {
      const session = await w.ws.create({ title: label });
      await session.append([
        { type: 'capture', tag: '0.1', turn: 0, k: 1, tool: 'restore', restoreId: 'r1', stageDirs: [], files: [] },
        { type: 'restore_started', id: 'r1', to: '0', recovery: '0.1', ...(await make(w, blob)) },
      ]);
      const err = await w.ws.get(session.id).then((s) => restore(s, '0')).catch((e: unknown) => e);
      expect(isCkptError(err, 'LOG_CORRUPT'), label).toBe(true);
      expect(await snapshot(w.root), label).toEqual(before);
      await expect(stat(join(w.dirs.base, 'outside.txt'))).rejects.toThrow();
    }
  });

  it('a plan blob the store cannot reach now (S3 away) is IO, retryable — never a damaged log (shared-store probe)', async () => {
    const w = await world();
    await bigHistory(w);
    await restore(w.session, '1');
    const store = await openStore({ dir: w.dirs.store });
    try {
      const s = await (await store.openWorkspace(w.root)).get(w.session.id);
      const get = s.ctx.blobs.get.bind(s.ctx.blobs);
      s.ctx.blobs.get = async () => {
        throw new CkptError('IO', 'S3 endpoint unreachable', { retryable: true });
      };
      const err = await s.status().catch((e: unknown) => e);
      expect(isCkptError(err, 'IO'), String(err)).toBe(true);
      expect((err as CkptError).data).toMatchObject({ retryable: true });
      s.ctx.blobs.get = get;
      expect((await s.status()).turn).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('old logs with inline plans still replay (known from the inline plan)', async () => {
    const w = await world();
    await w.write('a.txt', 'v0\n');
    await w.turn();
    await w.tool(['a.txt'], () => w.write('a.txt', 'v1\n'));
    const r = await restore(w.session, '1');
    const started = (await w.session.events()).find((e: EventBase) => e.type === 'restore_started')!;
    expect(started.plan).toEqual([expect.objectContaining({ path: 'a.txt', action: 'write' })]);
    await w.write('a.txt', 'by hand\n');
    expect(isCkptError(await restore(await w.ws.get(w.session.id), r.undo!).catch((e: unknown) => e), 'DRIFT')).toBe(true);
  });
});
