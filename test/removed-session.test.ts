// A removed session's captures stay on the other sessions' timelines (DESIGN §10 "A removed session's
// captures stay"). A history probe (2026-12-07) found `session rm B` made A's `restore N --force`
// leave what B wrote after prompt N — no drift, nothing skipped — since B's last writes stayed the
// owner records while B's captures left every timeline. The likely case: try prompt 1 again in a
// fork (`rewind 1 --fork`), throw the fork away, go back to the main line's prompt 2.
import { mkdir, readdir, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prune, runGc, verify } from '../src/index.js';
import { keptEvents } from '../src/session/removed-sessions.js';
import type { EventBase } from '../src/format/event.js';
import { makeWorld, snapshot, type World } from './fixtures/restore-world.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeWorld);

const removedFiles = async (w: World): Promise<string[]> => {
  const dir = join(w.dirs.store, 'workspaces', w.ws.id, 'removed');
  return existsSync(dir) ? readdir(dir) : [];
};

/** Session A at prompt 2 with a = two (its own tool's write during prompt 1). */
async function twoPrompts(w: World): Promise<Record<string, unknown>> {
  await w.write('a', 'one\n');
  await w.turn();
  await w.tool(['a'], () => writeFile(w.at('a'), 'two\n'));
  await w.turn();
  return snapshot(w.root);
}

/** Two prompts of A, then a session B that captured and settled `b`, removed: one kept file. */
async function promptsThenRemovedB(w: World): Promise<void> {
  await twoPrompts(w);
  const b = await w.ws.create({ title: 'b' });
  await b.capture(['b'], { tool: 'Write' });
  await b.settle(['b']);
  await w.ws.remove(b.id);
}

describe('a removed session', () => {
  it("a second session's writes: the first session's restore still undoes them after its removal, and GC keeps what that needs", async () => {
    const w = await world();
    const prompt2 = await twoPrompts(w);
    const b = await w.ws.create({ title: 'second agent' });
    await b.capture(['a', 'b'], { tool: 'Write' });
    await writeFile(w.at('a'), 'B\n');
    await writeFile(w.at('b'), 'B\n');
    await b.settle(['a', 'b']);
    await w.ws.remove(b.id);
    expect(await removedFiles(w)).toHaveLength(1);
    await runGc(w.store.ctx, { graceMs: 0, now: Date.now() + 1 });
    expect((await verify(w.store.ctx)).problems).toEqual([]);
    const r = await w.session.restore('2', { force: true });
    expect(r.restored).toEqual(['a']);
    expect(r.deleted).toEqual(['b']);
    expect(await snapshot(w.root)).toEqual(prompt2);
  });

  it('a fork made by rewind, then removed: the main line goes back to its prompt 2 exactly', async () => {
    const w = await world();
    const prompt2 = await twoPrompts(w);
    const rewound = await w.session.rewind('1', { fork: true, force: true });
    expect(await readFile(w.at('a'), 'utf8')).toBe('one\n');
    const fork = await w.ws.get(rewound.session);
    await fork.capture(['c'], { tool: 'Write' });
    await writeFile(w.at('c'), 'tried again\n');
    await fork.settle(['c']);
    await w.ws.remove(fork.id);
    await w.session.restore('2', { force: true });
    expect(await snapshot(w.root)).toEqual(prompt2);
  });

  it('is dropped once no remaining session reaches it', async () => {
    const w = await world();
    await twoPrompts(w);
    const b = await w.ws.create({ title: 'b' });
    await b.capture(['b'], { tool: 'Write' });
    await writeFile(w.at('b'), 'B\n');
    await b.settle(['b']);
    await w.ws.remove(b.id);
    expect(await removedFiles(w)).toHaveLength(1);
    // A removal that leaves a session reaching B's captures keeps them.
    const c = await w.ws.create({ title: 'c' });
    await w.ws.remove(c.id);
    expect(await removedFiles(w)).toHaveLength(1);
    // A's history no longer reaches them once pruned past them.
    await new Promise((r) => setTimeout(r, 5));
    await w.turn();
    await w.turn();
    expect((await prune(w.session, { keepTurns: 1 })).pruned).toBe(true);
    expect(await removedFiles(w)).toEqual([]);
  });

  it('the last session removed takes every kept capture with it', async () => {
    const w = await world();
    await promptsThenRemovedB(w);
    expect(await removedFiles(w)).toHaveLength(1);
    await w.ws.remove(w.session.id);
    expect(await removedFiles(w)).toEqual([]);
  });

  it('a kept file that is not a removed session\'s captures fails restores LOG_CORRUPT, never read as something else', async () => {
    const w = await world();
    await promptsThenRemovedB(w);
    const [name] = await removedFiles(w);
    const file = join(w.dirs.store, 'workspaces', w.ws.id, 'removed', name!);
    const text = await readFile(file, 'utf8');
    for (const bad of [text.replace('"path":"b"', '"path":"../outside"'), text.slice(0, -1), text.replace('"type":"capture"', '"type":"settle"'), '']) {
      await writeFile(file, bad);
      await expect(w.session.restore('1', { force: true }), bad.slice(0, 40)).rejects.toMatchObject({ code: 'LOG_CORRUPT' });
    }
  });

  it("a fork's copied history still reaches a removed session's captures: removing the fork's parent keeps them (a probe: the fork's restore 1 kept B's file)", async () => {
    const w = await world();
    await w.write('a', 'zero\n');
    await w.session.scan({ tool: 'Bash' }); // `a` is A's record (made after the baseline)
    await w.turn();
    const prompt1 = await snapshot(w.root);
    const b = await w.ws.create({ title: 'b' });
    await b.turn();
    await b.capture(['c'], { tool: 'Write' });
    await writeFile(w.at('c'), 'sea\n');
    await b.settle(['c']);
    await w.turn();
    await new Promise((r) => setTimeout(r, 5));
    const fork = await w.ws.fork(w.session.id, { atTag: '2' });
    await w.ws.remove(b.id);
    await w.ws.remove(w.session.id);
    expect(await removedFiles(w)).toHaveLength(2);
    await fork.restore('1', { force: true });
    expect(await snapshot(w.root)).toEqual(prompt1);
  });

  it('a damaged kept file fails only the sessions that reach it, is named by verify, and goes once no session reaches it', async () => {
    const w = await world();
    await promptsThenRemovedB(w);
    const [name] = await removedFiles(w);
    const folder = join(w.dirs.store, 'workspaces', w.ws.id, 'removed');
    await writeFile(join(folder, name!), 'not an event\n');
    await expect(w.session.restore('1', { force: true })).rejects.toMatchObject({ code: 'LOG_CORRUPT', message: expect.stringContaining(name!) });
    expect((await verify(w.store.ctx)).problems).toEqual([expect.objectContaining({ kind: 'removed_corrupt', key: expect.stringContaining(name!) })]);
    // A session begun after the removal never reads it.
    await new Promise((r) => setTimeout(r, 5));
    const later = await w.ws.create({ title: 'later' });
    await later.turn();
    await later.restore('1', { force: true });
    // Once the first session is gone, no session reaches it: it goes, unread.
    await w.ws.remove(w.session.id);
    expect(await removedFiles(w)).toEqual([]);
  });

  it('refuses a symlink planted for the folder (FORBIDDEN), a name it never makes, and a file too big to be one, before reading them', async () => {
    const w = await world();
    await promptsThenRemovedB(w);
    const folder = join(w.dirs.store, 'workspaces', w.ws.id, 'removed');
    const [name] = await readdir(folder);
    await truncate(join(folder, name!), 300 * 1024 * 1024);
    await expect(w.session.restore('1', { force: true })).rejects.toMatchObject({ code: 'LOG_CORRUPT', message: expect.stringContaining('more than') });
    await rm(join(folder, name!));
    await writeFile(join(folder, 'notes.txt'), 'x');
    await expect(w.session.restore('1', { force: true })).rejects.toMatchObject({ code: 'LOG_CORRUPT', message: expect.stringContaining('unexpected name') });
    await rm(folder, { recursive: true });
    const elsewhere = join(w.dirs.base, 'elsewhere');
    await mkdir(elsewhere);
    await symlink(elsewhere, folder);
    await expect(w.session.restore('1', { force: true })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('keeps its own captures only: not a fork record, not the copies of its parent, pruned content as skipped, no inline content', () => {
    const at = '2026-12-07T00:00:00.000Z';
    const events = [
      { v: 1, seq: 1, at, type: 'session', kind: 'fork', forkedFrom: { session: 'p', seq: 3 } },
      { v: 1, seq: 2, at, type: 'capture', tag: '1.1', tool: 'Write', files: [{ path: 'copied', state: 'absent' }] },
      { v: 1, seq: 4, at, type: 'capture', tag: '1.2', tool: 'fork', files: [{ path: 'f', state: 'absent' }] },
      { v: 1, seq: 5, at, type: 'capture', tag: '1.3', tool: 'Write', files: [{ path: 'old', state: 'file', blob: 'a'.repeat(64), size: 1, mode: 0o644 }], inline: { ['a'.repeat(64)]: 'eA==' } },
      { v: 1, seq: 6, at, type: 'prune', before: 6 },
      { v: 1, seq: 7, at, type: 'capture', tag: '2.1', tool: 'Write', files: [{ path: 'new', state: 'file', blob: 'b'.repeat(64), size: 1, mode: 0o644 }] },
    ] as unknown as EventBase[];
    const kept = keptEvents('x', events);
    expect(kept.map((e) => e.seq)).toEqual([1, 5, 7]);
    expect(kept[1]).not.toHaveProperty('inline');
    expect((kept[1] as unknown as { files: unknown[] }).files).toEqual([{ path: 'old', state: 'skipped', why: 'pruned in session x' }]);
    expect((kept[2] as unknown as { files: unknown[] }).files).toEqual([{ path: 'new', state: 'file', blob: 'b'.repeat(64), size: 1, mode: 0o644 }]);
    expect(keptEvents('x', events.slice(0, 2))).toEqual([]);
  });
});
