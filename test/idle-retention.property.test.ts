// Model-based property test of retention across sessions (DESIGN §10 "Sessions left behind retire"):
// random turns in three sessions of one workspace (each writing its own file and a shared one, by
// tool calls) and passes over the sessions left behind run from any of them with a random count
// limit. The model is the content of both files at every turn. Afterwards, in every session:
// - its last turn is never retired, and every prune point falls at the start of one of its turns;
// - a session's own points are retired only by passes run from another session;
// - every point kept restores exactly (and the undo gives back the tree) — or, when what it held was
//   recorded only by another session's retired turns (sessions side by side), is refused whole
//   (TAG_PRUNED naming that session) — and every point retired answers TAG_PRUNED; a refusal
//   changes nothing.
// CKPT_PROPERTY_RUNS raises the number of runs for a long local run.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/store.js';
import type { Session } from '../src/api/session.js';
import { retireIdleSessions } from '../src/capture/idle-retention.js';
import { prunedThrough } from '../src/session/positions.js';
import { makeTempDirs } from './helpers/temp.js';

const RUNS = Number(process.env.CKPT_PROPERTY_RUNS ?? 12);
const IDS = ['s0', 's1', 's2'];

type Op = { kind: 'turn'; s: number; v: number } | { kind: 'pass'; s: number; keepTurns: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('turn' as const), s: fc.nat(2), v: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('pass' as const), s: fc.nat(2), keepTurns: fc.integer({ min: 1, max: 3 }) }) },
);

async function runWorld(ops: Op[]): Promise<void> {
  const dirs = await makeTempDirs('ckpt-idle-prop-');
  const store = await openStore({ dir: dirs.store, retention: false });
  try {
    const ws = await store.openWorkspace(dirs.workspace);
    const sessions: Session[] = [];
    for (const id of IDS) sessions.push(await ws.create({ id }));
    const file = (rel: string) => join(dirs.workspace, rel);
    const read = (rel: string) => readFile(file(rel), 'utf8').catch(() => null);
    const tree = async () => ({ own: await Promise.all(IDS.map((id) => read(`${id}.txt`))), shared: await read('shared.txt') });
    // The tree at each turn's start, by session and turn number; who ran each pass.
    const model = IDS.map(() => new Map<number, Awaited<ReturnType<typeof tree>>>());
    const passedBy = new Set<number>();
    let n = 0;
    for (const o of ops) {
      const s = sessions[o.s]!;
      if (o.kind === 'turn') {
        const { turn } = await s.turn({ scan: false });
        model[o.s]!.set(turn, await tree());
        for (const rel of [`${IDS[o.s]}.txt`, 'shared.txt']) {
          await s.capture([rel], { tool: 'Write' });
          await writeFile(file(rel), `${IDS[o.s]} ${o.v} ${n++}`);
          await s.settle([rel]);
        }
      } else {
        await rm(join(dirs.store, 'workspaces', ws.id, 'idle-retention.json'), { force: true });
        await retireIdleSessions(s, { keepTurns: o.keepTurns }, Date.now(), Infinity);
        passedBy.add(o.s);
      }
    }
    for (let i = 0; i < IDS.length; i++) {
      const s = sessions[i]!;
      const events = await s.events();
      const turns = events.filter((e) => e.type === 'turn');
      const pruned = prunedThrough(events);
      for (const p of events.filter((e) => e.type === 'prune')) expect(turns.map((t) => t.seq)).toContain(p.before);
      if (turns.length > 0) expect(pruned, `${IDS[i]}: its last turn is kept`).toBeLessThanOrEqual(turns.at(-1)!.seq);
      // Only passes retire here (the store's own retention is off), and never from the session itself.
      if (pruned > 0) expect([...passedBy].some((p) => p !== i), `${IDS[i]} retired by another session's pass`).toBe(true);
      for (const t of turns) {
        const tag = String(t.turn);
        const before = await tree();
        if (t.seq < pruned) {
          await expect(s.restore(tag), `${IDS[i]} restore ${tag} (retired)`).rejects.toMatchObject({ code: 'TAG_PRUNED' });
          expect(await tree()).toEqual(before);
          continue;
        }
        let r;
        try {
          r = await s.restore(tag, { force: true });
        } catch (err) {
          // What a kept point held may have been recorded only by another session whose retention
          // retired it (sessions working side by side): refused whole, nothing changed — never a
          // tree that did not exist, and never for want of this session's own records.
          expect(err, `${IDS[i]} restore ${tag}`).toMatchObject({ code: 'TAG_PRUNED' });
          expect((err as { data: { sessions: string[] } }).data.sessions).not.toContain(IDS[i]);
          expect(await tree()).toEqual(before);
          continue;
        }
        expect(await tree(), `${IDS[i]} restore ${tag}`).toEqual(model[i]!.get(t.turn as number));
        if (r.undo) {
          await s.restore(r.undo, { force: true });
          expect(await tree(), `${IDS[i]} undo of restore ${tag}`).toEqual(before);
        }
      }
    }
  } finally {
    await store.close();
    await dirs.cleanup();
  }
}

describe('retention of sessions left behind (model)', () => {
  it('never retires a last turn nor a session by its own pass; kept points restore exactly, retired ones refuse and change nothing', async () => {
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 3, maxLength: 14 }), runWorld), { numRuns: RUNS });
  }, 300_000);
});
