// Retention: `prune` retires history before a turn without rewriting the log; restores to retired
// tags fail with TAG_PRUNED (exit 3) while kept tags still restore — also after GC has freed what
// only the retired events used. The automatic policy runs when a turn starts.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store, type Workspace } from '../src/store.js';
import { exitCodeOf } from '../src/errors.js';
import type { EventBase } from '../src/format/event.js';
import { restore } from '../src/restore/index.js';
import { prune, prunePoint, resolveRetention, runGc, verify } from '../src/gc/index.js';
import type { Session } from '../src/api/session.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';
import { ageStore, edit } from './fixtures/gc-helpers.js';

let dirs: TempDirs;
let store: Store;
let ws: Workspace;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-prune-');
  store = await openStore({ dir: dirs.store, retention: false });
  ws = await store.openWorkspace(dirs.workspace);
});
afterEach(() => dirs.cleanup());

/** Turns 1..n; turn t changes a.txt from `v{t-1}` to `v{t}` (captured, then settled). */
async function history(s: Session, n: number): Promise<void> {
  await writeFile(join(dirs.workspace, 'a.txt'), 'v0');
  for (let t = 1; t <= n; t++) {
    // No turn-start scan: a.txt written above is the test's setup, not a hand edit to record.
    await s.turn({ scan: false });
    await s.capture(['a.txt'], { tool: 'Edit' });
    await writeFile(join(dirs.workspace, 'a.txt'), `v${t}`);
    await s.settle(['a.txt']);
  }
  // The store copies of the captures' inline content, queued after their answers: gc looks at the store.
  await s.ctx.afterCall.drain();
}

const read = (rel: string) => readFile(join(dirs.workspace, rel), 'utf8');
const logPath = (id: string) => join(dirs.store, 'workspaces', ws.id, 'sessions', id, 'events.jsonl');

describe('prune', () => {
  it('--keep-checkpoints keeps at least the last N checkpoints, retiring whole turns before them', async () => {
    const s = await ws.create({ id: 'k' });
    await history(s, 5); // one capture per turn
    await s.capture(['a.txt'], { tool: 'Edit' }); // a second capture in turn 5
    const turn = (n: number) => (events.find((e) => e.type === 'turn' && e.turn === n)!).seq;
    let events = await s.events();
    // Last 3 captures: 4.1, 5.1, 5.2 -> turns 1..3 retire.
    expect(prunePoint(events, { keepCheckpoints: 3 })).toBe(turn(4));
    expect(prunePoint(events, { keepCheckpoints: 2 })).toBe(turn(5));
    expect(prunePoint(events, { keepCheckpoints: 6 })).toBe(turn(1)); // turn 0 holds no checkpoint
    expect(prunePoint(events, { keepCheckpoints: 7 })).toBe(0);
    // Both limits: whatever either retires is retired.
    expect(prunePoint(events, { keepCheckpoints: 3, keepTurns: 1 })).toBe(turn(5));
    const r = await prune(s, { keepCheckpoints: 3 });
    expect(r).toMatchObject({ pruned: true, before: turn(4), retiredCaptures: 3 });
    events = await s.events();
    expect(events.at(-1)).toMatchObject({ type: 'prune', keepCheckpoints: 3 });
    expect(() => prunePoint(events, { keepCheckpoints: 0 })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(resolveRetention(undefined, { CKPT_KEEP_CHECKPOINTS: '50' })).toMatchObject({ keepCheckpoints: 50 });
    expect(() => resolveRetention(undefined, { CKPT_KEEP_CHECKPOINTS: 'x' })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('retires tags before the kept turns (TAG_PRUNED, exit 3), keeps later ones restorable, appends without rewriting', async () => {
    const s = await ws.create({ id: 's' });
    await history(s, 5);
    const logBefore = await readFile(logPath('s'));
    const r = await prune(s, { keepTurns: 2 });
    const turn4 = (await s.events()).find((e) => e.type === 'turn' && e.turn === 4)!;
    expect(r).toMatchObject({ pruned: true, before: turn4.seq, previous: 0, retiredCaptures: 3 });
    const logAfter = await readFile(logPath('s'));
    expect(logAfter.subarray(0, logBefore.length).equals(logBefore)).toBe(true);
    expect((await s.events()).at(-1)).toMatchObject({ type: 'prune', before: turn4.seq, keepTurns: 2 });

    for (const tag of ['0', '1', '3', '3.1', '@2']) {
      const err = await restore(s, tag).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'TAG_PRUNED' });
      expect(exitCodeOf(err)).toBe(3);
    }
    expect(await read('a.txt')).toBe('v5');
    const res = await restore(s, '4');
    expect(res.restored).toEqual(['a.txt']);
    expect(await read('a.txt')).toBe('v3');
    // Pruning again with the same (or a looser) limit retires nothing new and appends nothing.
    const seqs = (await s.events()).length;
    expect(await prune(s, { keepTurns: 2 })).toMatchObject({ pruned: false, before: turn4.seq });
    expect((await prune(s, { keepTurns: 50 })).pruned).toBe(false);
    expect((await s.events()).length).toBe(seqs);
  });

  it('gc after prune frees the retired before-images; kept tags still restore and verify stays clean', async () => {
    const s = await ws.create({ id: 's' });
    await history(s, 5);
    await prune(s, { keepTurns: 2 });
    await ageStore(dirs.store);
    const { plan, result } = await runGc(store.ctx);
    // v0..v2 were before-images of turns 1..3 only (settled after-states v1, v2 are superseded by v5).
    expect(new Set(plan.loose.map((c) => c.id))).toEqual(new Set([sha('v0'), sha('v1'), sha('v2')]));
    expect(result.deleted).toBe(3);
    for (const kept of ['v3', 'v4', 'v5']) expect(await store.ctx.blobs.has(sha(kept))).toBe(true);
    expect((await verify(store.ctx)).problems).toEqual([]);
    await restore(s, '4');
    expect(await read('a.txt')).toBe('v3');
    await restore(s, '5');
    expect(await read('a.txt')).toBe('v4');
  });

  it('keeps the latest known after-state of a path only touched before the prune point', async () => {
    const s = await ws.create({ id: 's' });
    await s.turn();
    await edit(s, dirs.workspace, 'old.txt', 'old before', 'old after');
    await history(s, 3); // turns 2..4 (numbered on)
    await prune(s, { keepTurns: 1 });
    // Remove the owner index's copy of the knowledge, so only the log's rule keeps it.
    await writeFile(join(dirs.store, 'workspaces', ws.id, 'owners.json'), '{}');
    await ageStore(dirs.store);
    const { plan } = await runGc(store.ctx);
    expect(plan.loose.map((c) => c.id)).toContain(sha('old before'));
    expect(plan.loose.map((c) => c.id)).not.toContain(sha('old after'));
    expect(await store.ctx.blobs.has(sha('old after'))).toBe(true);
  });

  it('--older-than retires turns entirely older than the cutoff, always keeping the current turn', async () => {
    const at = (daysAgo: number) => new Date(Date.UTC(2025, 0, 31) - daysAgo * 86_400_000).toISOString();
    const now = Date.UTC(2025, 0, 31);
    const events: EventBase[] = [
      { v: 1, seq: 1, type: 'session', at: at(60) },
      { v: 1, seq: 2, type: 'turn', turn: 1, at: at(40) },
      { v: 1, seq: 3, type: 'capture', at: at(40) },
      { v: 1, seq: 4, type: 'turn', turn: 2, at: at(20) },
      { v: 1, seq: 5, type: 'turn', turn: 3, at: at(1) },
    ];
    expect(prunePoint(events, { olderThanMs: 30 * 86_400_000, now })).toBe(4);
    expect(prunePoint(events, { olderThanMs: 10 * 86_400_000, now })).toBe(5);
    expect(prunePoint(events, { olderThanMs: 0, now })).toBe(5);
    expect(prunePoint(events, { olderThanMs: 50 * 86_400_000, now })).toBe(2);
    expect(prunePoint(events, { olderThanMs: 90 * 86_400_000, now })).toBe(0);
    expect(prunePoint(events, { keepTurns: 2, olderThanMs: 90 * 86_400_000, now })).toBe(4);
    expect(prunePoint(events, { keepTurns: 3 })).toBe(0);
    expect(() => prunePoint(events, { keepTurns: 0 })).toThrow(/keep-turns/);

    const s = await ws.create({ id: 's' });
    await history(s, 3);
    const r = await prune(s, { olderThanMs: 0 });
    const turn3 = (await s.events()).find((e) => e.type === 'turn' && e.turn === 3)!;
    expect(r.before).toBe(turn3.seq);
    await expect(restore(s, '2')).rejects.toMatchObject({ code: 'TAG_PRUNED' });
    await restore(s, '3');
    expect(await read('a.txt')).toBe('v2');
  });

  it('applies the automatic policy when a turn starts', async () => {
    const auto = await openStore({ dir: dirs.store, retention: { keepTurns: 3 } });
    const s = await (await auto.openWorkspace(dirs.workspace)).create({ id: 'auto' });
    await history(s, 5);
    const events = await s.events();
    const prunes = events.filter((e) => e.type === 'prune');
    expect(prunes.map((e) => e.auto)).toEqual([true, true]);
    const turn3 = events.find((e) => e.type === 'turn' && e.turn === 3)!;
    expect(prunes.at(-1)!.before).toBe(turn3.seq);
    await expect(restore(s, '2')).rejects.toMatchObject({ code: 'TAG_PRUNED' });
    await restore(s, '3');
    expect(await read('a.txt')).toBe('v2');

    // The default policy (100 turns, 30 days) leaves a young, short session alone.
    const dflt = await openStore({ dir: dirs.store });
    const d = await (await dflt.openWorkspace(dirs.workspace)).create({ id: 'default' });
    for (let i = 0; i < 3; i++) await d.turn();
    expect((await d.events()).some((e) => e.type === 'prune')).toBe(false);
  });

  it('reads the policy from the environment strictly', () => {
    expect(resolveRetention(undefined, {})).toEqual({ keepTurns: 100, olderThanMs: 30 * 86_400_000 });
    expect(resolveRetention(undefined, { CKPT_KEEP_TURNS: '5', CKPT_KEEP_AGE: 'off' })).toEqual({ keepTurns: 5 });
    expect(resolveRetention(undefined, { CKPT_KEEP_AGE: '2h', CKPT_KEEP_TURNS: 'off' })).toEqual({ olderThanMs: 7_200_000 });
    expect(resolveRetention(undefined, { CKPT_RETENTION: 'off' })).toBe(false);
    expect(resolveRetention(false, {})).toBe(false);
    expect(resolveRetention({ keepTurns: 7 }, { CKPT_KEEP_TURNS: '5' })).toEqual({ keepTurns: 7 });
    expect(() => resolveRetention(undefined, { CKPT_KEEP_TURNS: 'ten' })).toThrow(/CKPT_KEEP_TURNS/);
    expect(() => resolveRetention(undefined, { CKPT_KEEP_AGE: '30 days' })).toThrow(/CKPT_KEEP_AGE/);
  });
});

// h7-long probe: after /clear (or a second agent) the continuing session's retention retired the only
// record of what a path held at an earlier session's kept turn. A whole restore used to go ahead,
// leave that path as it was (skipped) and exit 0: the workspace was neither that turn nor the present.
describe('a point another session\'s retention retired in part', () => {
  const write = async (s: Session, rel: string, content: string) => {
    await s.capture([rel], { tool: 'Write' });
    await writeFile(join(dirs.workspace, rel), content);
    await s.settle([rel]);
  };
  it('refuses a whole restore with TAG_PRUNED, nothing changed; a restore of other paths by name still works', async () => {
    await writeFile(join(dirs.workspace, 'a.txt'), 'original');
    const a = await ws.create({ id: 'a' });
    await a.turn({ scan: false });
    await write(a, 'notes.txt', 'A wrote notes');
    await new Promise((r) => setTimeout(r, 5));
    const b = await ws.create({ id: 'b' });
    await b.turn({ scan: false });
    await edit(b, dirs.workspace, 'a.txt', 'original', 'B rewrote a.txt');
    for (let t = 2; t <= 4; t++) {
      await b.turn({ scan: false });
      await write(b, 'other.txt', `B ${t}`);
    }
    expect((await prune(b, { keepTurns: 2 })).pruned).toBe(true);
    const dry = await a.restore('1', { dryRun: true });
    expect(dry.wouldRefuse).toEqual({ code: 'TAG_PRUNED', paths: ['a.txt'] });
    const err = await a.restore('1', { force: true }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TAG_PRUNED', data: { tag: '1', paths: ['a.txt'], sessions: ['b'] } });
    expect(exitCodeOf(err)).toBe(3);
    expect(await readFile(join(dirs.workspace, 'a.txt'), 'utf8')).toBe('B rewrote a.txt');
    expect(await readFile(join(dirs.workspace, 'notes.txt'), 'utf8')).toBe('A wrote notes');
    await a.restore('1', { force: true, paths: ['notes.txt'] });
    await expect(readFile(join(dirs.workspace, 'notes.txt'), 'utf8')).rejects.toThrow();
  });
});
