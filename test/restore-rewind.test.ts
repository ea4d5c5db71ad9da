// Rewind (issue 3 item 8; DESIGN §2 "Rewind"): restore + a `rewind` event superseding later agent
// events (never deleted) with the message-count watermark of the tag; `--fork` leaves the session
// as it is and records the restore in a fork at the tag. Also recovery-on-open of abandoned restores.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { isCkptError } from '../src/errors.js';
import { pendingRecovery, restore, rewind } from '../src/restore/index.js';
import { liveConversation as liveEvents } from '../src/conversation/index.js';
import { stagePath } from '../src/restore/stage.js';
import { eventTypes, makeWorld, snapshot, stagingLeft, type World } from './fixtures/restore-world.js';
import { useWorlds } from './helpers/worlds.js';
import { writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

const world = useWorlds(makeWorld);

const say = (w: World, text: string) => w.session.append([{ type: 'message', role: 'user', text }]);
const texts = (events: { [key: string]: unknown }[]) => events.map((e) => e.text);

describe('rewind', () => {
  it('restores, returns the watermark of the tag and supersedes later agent events without deleting them', async () => {
    const w = await world();
    await w.write('a.txt', 'v0');
    await w.turn(0);
    await say(w, 'm1');
    await w.tool(['a.txt'], () => w.write('a.txt', 'v1'));
    await w.turn(2);
    await say(w, 'm2');
    await w.tool(['a.txt'], () => w.write('a.txt', 'v2'));
    await say(w, 'm3');
    const count = (await w.session.events()).length;

    const r = await rewind(w.session, '2');
    expect(r.watermark).toEqual({ turn: 2, messageCount: 2 });
    expect(r).toMatchObject({ to: '2', restored: ['a.txt'], session: w.session.id });
    expect(await w.read('a.txt')).toBe('v1');
    const events = await w.session.events();
    expect(events.length).toBeGreaterThan(count);
    expect(events.at(-1)).toMatchObject({ type: 'rewind', to: '2', watermark: { turn: 2, messageCount: 2 } });
    expect(texts(events.filter((e) => e.type === 'message'))).toEqual(['m1', 'm2', 'm3']);
    expect(texts(liveEvents(events))).toEqual(['m1']);

    // The conversation goes on from the tag; a second rewind to turn 1 supersedes that too.
    const t = await w.turn(2);
    expect(t).toBe('3');
    await say(w, 'm2-again');
    expect(texts(liveEvents(await w.session.events()))).toEqual(['m1', 'm2-again']);
    const r1 = await rewind(w.session, '1');
    expect(r1.watermark).toEqual({ turn: 1, messageCount: 0 });
    expect(await w.read('a.txt')).toBe('v0');
    expect(texts(liveEvents(await w.session.events()))).toEqual([]);
    // The restore inside a rewind can be undone like any other.
    await restore(w.session, r1.undo!);
    expect(await w.read('a.txt')).toBe('v1');
  });

  it('--fork leaves this session as it is and records the restore in a fork at the tag', async () => {
    const w = await world();
    await w.write('a.txt', 'v0');
    await w.turn(0);
    await say(w, 'm1');
    await w.tool(['a.txt', 'made.txt'], async () => {
      await w.write('a.txt', 'v1');
      await w.write('made.txt', 'new');
    });
    const before = await w.session.events();
    const r = await rewind(w.session, '1', { fork: true });
    expect(r.forked).toBe(true);
    expect(r.session).not.toBe(w.session.id);
    expect(r.watermark).toEqual({ turn: 1, messageCount: 0 });
    expect(await w.read('a.txt')).toBe('v0');
    expect(r.deleted).toEqual(['made.txt']);
    expect(await w.session.events()).toEqual(before);

    const fork = await w.ws.get(r.session);
    const meta = await fork.metadata();
    expect(meta.forkedFrom).toEqual({ session: w.session.id, seq: before.find((e) => e.type === 'turn')!.seq });
    expect((await eventTypes(fork)).slice(-3)).toEqual(['capture', 'restore_started', 'restore_committed']);
    // Undo in the fork brings the work back.
    await restore(fork, r.undo!);
    expect(await w.read('a.txt')).toBe('v1');
    expect(await w.read('made.txt')).toBe('new');
  });

  it('after --fork, what the fork wrote is not drift for the original session, even once the fork is removed (issue 10 item 9)', async () => {
    const w = await world();
    await w.write('a.txt', 'v0');
    await w.turn(0);
    await w.tool(['a.txt', 'made.txt'], async () => {
      await w.write('a.txt', 'v1');
      await w.write('made.txt', 'new');
    });
    await w.turn(0);
    await w.tool(['a.txt'], () => w.write('a.txt', 'v2'));
    const r = await rewind(w.session, '2', { fork: true });
    expect(await w.read('a.txt')).toBe('v1');
    // The original session restores to its turn 1: a.txt holds what the fork's restore wrote.
    const dry = await restore(w.session, '1', { dryRun: true });
    expect(dry.drift).toEqual([]);
    expect(dry.otherSessions).toEqual([{ path: 'a.txt', session: r.session }]);
    await w.ws.remove(r.session);
    const done = await restore(w.session, '1');
    expect(done.drift).toEqual([]);
    expect(await w.read('a.txt')).toBe('v0');
    // A hand edit after that is drift again.
    await restore(w.session, done.undo!);
    await w.write('a.txt', 'by hand');
    expect((await restore(w.session, '1', { dryRun: true })).drift).toEqual(['a.txt']);
  });

  it('--fork refuses on drift before creating a fork', async () => {
    const w = await world();
    await w.turn(0);
    await w.tool(['a.txt'], () => w.write('a.txt', 'v1'));
    await w.write('a.txt', 'hand edit');
    const err = await rewind(w.session, '1', { fork: true }).catch((e: unknown) => e);
    expect(isCkptError(err, 'DRIFT')).toBe(true);
    expect((await w.ws.list()).length).toBe(1);
  });
});

describe('recovery on open', () => {
  it('abandons a restore interrupted before restore_started: staging files and staging folders removed, restore_aborted appended', async () => {
    const w = await world();
    await w.write('a.txt', 'v0');
    await w.turn();
    await w.tool(['a.txt'], () => w.write('a.txt', 'v1'));
    const before = await snapshot(w.root);
    // What a process killed while staging leaves: a recovery capture with a restoreId and stage files.
    const id = 'deadbeefdeadbeef';
    await w.session.append([
      { type: 'capture', tag: '1.9', turn: 1, k: 9, tool: 'restore', reason: 'restore to 1', restoreId: id, stageDirs: ['n', 'n/m'], files: [{ path: 'a.txt', state: 'skipped', why: 'test' }, { path: 'n/m/b.txt', state: 'absent', newDirs: 2 }] },
    ]);
    for (const [rel, i] of [['a.txt', 0], ['n/m/b.txt', 1]] as const) {
      const p = stagePath(w.root, rel, id, i);
      await mkdir(dirname(p), { recursive: true });
      await writeFile(p, 'partial');
    }
    expect(pendingRecovery(await w.session.events()).abandoned).toHaveLength(1);
    const opened = await w.ws.get(w.session.id);
    expect(await stagingLeft(w.root)).toEqual([]);
    expect(await snapshot(w.root)).toEqual(before);
    expect((await opened.events()).at(-1)).toMatchObject({ type: 'restore_aborted', id });
    expect(pendingRecovery(await opened.events()).abandoned).toHaveLength(0);
  });

  it('finishes a restore interrupted after restore_started, from its plan', async () => {
    const w = await world();
    await w.write('a.txt', 'v0', 0o600);
    await w.turn();
    await w.tool(['a.txt', 'x/y.txt'], async () => {
      await w.write('a.txt', 'v1');
      await w.write('x/y.txt', 'y');
    });
    const capture = (await w.session.events()).find((e) => e.type === 'capture')!;
    const blob = (capture.files as { path: string; blob: string }[])[0]!.blob;
    // A restore copies the inline content its plan names into the store before restore_started; this
    // hand-made plan relies on the capture's own copy, queued after its answer.
    await w.session.ctx.afterCall.drain();
    // The recovery capture records every planned path as it is (recovery carries out no other plan).
    const present = (await w.session.events()).find((e) => e.type === 'settle')!.files;
    await w.session.append([
      { type: 'capture', tag: '1.2', turn: 1, k: 2, tool: 'restore', restoreId: 'r1', stageDirs: [], files: present },
      { type: 'restore_started', id: 'r1', to: '1', recovery: '1.2', plan: [{ path: 'x/y.txt', action: 'delete', newDirs: 1 }, { path: 'a.txt', action: 'write', blob, mode: 0o600 }] },
    ]);
    await w.ws.latest();
    expect(await readFile(w.at('a.txt'), 'utf8')).toBe('v0');
    const snap = await snapshot(w.root);
    expect(snap).toEqual({ 'a.txt': expect.objectContaining({ type: 'file', mode: 0o600 }) });
    expect((await w.session.events()).at(-1)).toMatchObject({ type: 'restore_committed', id: 'r1', result: { recovered: true, restored: ['a.txt'], deleted: ['x/y.txt'] } });
  });
});
