// Conversation replay against a model (issue 15): random appends, turns, rewinds, compactions and
// forks through the real library and store; after every step the live conversation must be what a
// simple model says — the model keeps the live list after each position and a rewind to P simply
// makes the live list what it was at P.
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Session, type Workspace } from '../src/index.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let ws: Workspace;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-conv-');
  ws = await (await openStore({ dir: dirs.store, retention: false })).openWorkspace(dirs.workspace);
});
afterEach(() => dirs.cleanup());

type Op =
  | { kind: 'say'; n: number }
  | { kind: 'turn' }
  | { kind: 'rewind'; at: number }
  | { kind: 'compact'; keep: number }
  | { kind: 'fork'; at: number }
  | { kind: 'duplicate' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.nat(3).map((n) => ({ kind: 'say' as const, n: n + 1 })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'turn' as const }) },
  { weight: 2, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((at) => ({ kind: 'rewind' as const, at })) },
  { weight: 1, arbitrary: fc.nat(3).map((keep) => ({ kind: 'compact' as const, keep })) },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((at) => ({ kind: 'fork' as const, at })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'duplicate' as const }) },
);

/** A live entry as the model names it: a message id, or `S:<summary>` for a compaction. */
const label = (e: { type: string; id?: unknown; summary?: unknown }) => (e.type === 'compaction' ? `S:${String(e.summary)}` : String(e.id));

describe('live conversation vs a model', () => {
  it('agrees after random appends, turns, rewinds, compactions and forks', async () => {
    let counter = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
        let session: Session = await ws.create({});
        // live[p] = the model's live conversation after position p (position 1 = the session event).
        let live: string[][] = [[], []];
        const say = async (ids: string[]) => {
          const r = await session.record(ids.map((id) => ({ type: 'message', id, text: id })));
          expect(r.appended.map((e) => e.seq)).toEqual(ids.map((_, i) => live.length + i));
          for (const id of ids) live.push([...live.at(-1)!, id]);
        };
        for (const o of ops) {
          const last = live.length - 1;
          if (o.kind === 'say') {
            await say(Array.from({ length: o.n }, () => `m${++counter}`));
          } else if (o.kind === 'turn') {
            await session.turn({});
            live.push(live.at(-1)!);
          } else if (o.kind === 'duplicate') {
            const known = live.at(-1)!.filter((x) => !x.startsWith('S:'));
            if (known.length === 0) continue;
            const r = await session.record([{ type: 'message', id: known[0]!, text: 'again' }], { unlessExists: true });
            expect(r).toMatchObject({ appended: [], existing: [known[0]] });
          } else if (o.kind === 'rewind') {
            const to = Math.min(last, 1 + Math.floor(o.at * last));
            const result = await session.rewind(`@${to}`);
            const bySeq = new Map((await session.events()).map((e) => [e.seq, e]));
            const hidden = result.hidden.map((h) => label(bySeq.get(h.seq)!));
            expect(new Set(hidden)).toEqual(new Set(live.at(-1)!.filter((x) => !live[to]!.includes(x))));
            live.push(live[to]!);
          } else if (o.kind === 'compact') {
            const current = live.at(-1)!;
            const plan = await session.planCompaction({ preserveLast: o.keep });
            expect(plan.compactable.length).toBe(Math.max(0, current.length - o.keep));
            if (plan.compactable.length === 0) {
              await expect(session.compact({ summary: 'x', preserveLast: o.keep })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
              continue;
            }
            const summary = `sum${++counter}`;
            await session.compact({ summary, preserveLast: o.keep, throughSeq: plan.throughSeq });
            live.push([`S:${summary}`, ...current.slice(current.length - o.keep)]);
          } else {
            const at = Math.min(last, 1 + Math.floor(o.at * last));
            if ((await session.events()).some((e) => e.type === 'restore_started' && e.seq <= at) && !(await session.events()).some((e) => e.type === 'restore_committed' && e.seq <= at)) continue;
            session = await ws.fork(session.id, { atSeq: at });
            live = live.slice(0, at + 1);
          }
          expect((await session.conversation()).map(label)).toEqual(live.at(-1));
        }
      }),
      { numRuns: Number(process.env.CKPT_PROPERTY_RUNS ?? 25) },
    );
  }, 120_000);
});

describe('conversation API', () => {
  it('refuses ckpt’s own event types, log-assigned fields and batches without ids for unless-exists', async () => {
    const s = await ws.create({});
    await expect(s.record([{ type: 'capture' }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(s.record([{ type: 'message', seq: 4 }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(s.record([{ type: 'message' }], { unlessExists: true })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(s.record([{ type: 'message', id: 'a' }, { type: 'bad type' }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(await s.events()).toHaveLength(1);
  });

  it('a compaction planned before the conversation moved is refused', async () => {
    const s = await ws.create({});
    await s.record([{ type: 'message', id: 'a' }, { type: 'message', id: 'b' }]);
    const plan = await s.planCompaction({ preserveLast: 1 });
    await s.record([{ type: 'message', id: 'c' }]);
    await expect(s.compact({ summary: 'x', preserveLast: 1, throughSeq: plan.throughSeq })).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('rewind hands back the user message of the turn and maps message ids to tags', async () => {
    const s = await ws.create({});
    await s.turn({ text: 'first prompt', messageId: 'u1' });
    await s.record([{ type: 'message', id: 'a1', role: 'assistant' }]);
    await s.turn({ text: 'second prompt', messageId: 'u2' });
    await s.record([{ type: 'message', id: 'a2', role: 'assistant' }]);
    const tags = await s.messageTags();
    expect(tags.map((t) => [t.id, t.turn])).toEqual([['a1', 1], ['a2', 2]]);
    const dry = await s.rewind('2', { dryRun: true });
    expect(dry.userMessage).toEqual({ turn: 2, text: 'second prompt', id: 'u2' });
    expect(dry.hidden.map((h) => h.id)).toEqual(['a2']);
    expect((await s.conversation()).map((e) => e.id)).toEqual(['a1', 'a2']);
    await s.rewind('2');
    expect((await s.conversation()).map((e) => e.id)).toEqual(['a1']);
  });

  it('resumable sessions exclude children and ended sessions; a new turn resumes', async () => {
    const a = await ws.create({ title: 'a' });
    const child = await ws.create({ parent: a.id });
    await child.turn({});
    expect((await ws.latest({ resumable: true })).id).toBe(a.id);
    await a.end('user closed it');
    expect(await ws.list({ resumable: true })).toEqual([]);
    await expect(ws.latest({ resumable: true })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    await a.turn({});
    expect((await ws.list({ resumable: true })).map((m) => m.id)).toEqual([a.id]);
  });
});
