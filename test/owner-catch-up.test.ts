// A daemon killed between its answer and the owner-index write that follows it (DESIGN §10 "Hooks at
// no cost"): the settle is in the log, the owner record is not, and a watched scan rewrote no scan
// index. The next daemon catches the index up with the logs before its first scan of the workspace,
// so that scan's before-image is the state the log last recorded, not an older one.
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, scanViaDaemon, verify, type Store, type Workspace } from '../src/index.js';
import type { Session } from '../src/api/session.js';
import { catchUpOwners, readOwners } from '../src/capture/owner-index.js';
import { startDaemon } from '../src/http/daemon.js';
import { createClient } from './helpers/http.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let ws: Workspace;
let session: Session;
let started: number;
const w = (rel: string) => join(dirs.workspace, rel);

/** The store reopened; with `killed`, work after each answer is dropped (as by a daemon killed right after answering). */
async function reopen(killed: boolean): Promise<void> {
  await store.close();
  store = await openStore({ dir: dirs.store, ...(killed ? { defer: () => {} } : {}) });
  ws = await store.openWorkspace(dirs.workspace);
  session = await ws.get(session.id);
}

/** The claim a killed `ckpt serve` leaves: its process gone, started when the test did. */
async function deadClaim(): Promise<void> {
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  await mkdir(join(dirs.store, 'daemon'), { recursive: true, mode: 0o700 });
  await writeFile(join(dirs.store, 'daemon', 'daemon.json'), JSON.stringify({ pid: Number(dead.stdout), url: 'http://127.0.0.1:9', host: '127.0.0.1', port: 9, startedAt: new Date(started).toISOString() }));
}

/** A shell command's write recorded by a daemon killed before its owner record; its claim left behind. */
async function shellWriteLostToKill(): Promise<void> {
  await writeFile(w('a.txt'), 'v0');
  await session.scan();
  await reopen(true);
  await writeFile(w('a.txt'), 'by a shell command');
  await session.scan();
  await reopen(false);
  await deadClaim();
}

beforeEach(async () => {
  started = Date.now();
  dirs = await makeTempDirs('ckpt-owner-catch-up-');
  store = await openStore({ dir: dirs.store });
  ws = await store.openWorkspace(dirs.workspace);
  session = await ws.create({ title: 'catch-up', baseline: false });
});
afterEach(async () => {
  await store.close();
  await dirs.cleanup();
});

describe('owner index caught up with the logs', () => {
  it("a daemon killed after answering a scan: the next daemon's first scan records the state the log holds, and a restore puts it back", async () => {
    await writeFile(w('a.txt'), 'v0');
    await session.scan();
    await reopen(true);
    await writeFile(w('a.txt'), 'by a shell command');
    const lost = await session.scan(); // settle appended; its owner record and content copy dropped
    expect(lost.files.map((f) => f.path)).toEqual(['a.txt']);
    await reopen(false);
    expect((await readOwners(session))['a.txt']).toBeUndefined();
    await writeFile(w('a.txt'), 'edited by hand');
    // Meanwhile another process rewrote the index (a record of another path), much later.
    const cli = await ws.create({ title: 'cli', baseline: false });
    // A prompt that did not look: before its first one, the capture would look first and record the hand edit.
    await cli.turn({ scan: false });
    await writeFile(w('b.txt'), 'b');
    await cli.capture(['b.txt'], { tool: 'Write' });
    await cli.settle(['b.txt']);
    const later = new Date(Date.now() + 60_000);
    await utimes(join(dirs.store, 'workspaces', ws.id, 'owners.json'), later, later);
    // The killed daemon's claim (its process gone), then the next daemon on the store.
    await deadClaim();
    const daemon = await startDaemon({ store, version: 'test' });
    try {
      const r = await createClient(daemon.url, daemon.token).call('POST', `/sessions/${session.id}/scan`, { body: { workspace: dirs.workspace, tool: 'Bash' } });
      const next = r.json() as { tag: string; files: { path: string }[] };
      expect(next.files.map((f) => f.path)).toEqual(['a.txt']);
      expect((await session.readFile(next.tag, 'a.txt')).content?.toString()).toBe('by a shell command');
      // The record names content now in the blob store (owners.json names stored blobs only).
      expect(await ws.ctx.blobs.has(lost.files[0]!.blob!)).toBe(true);
      await session.restore(next.tag);
      expect(await readFile(w('a.txt'), 'utf8')).toBe('by a shell command');
    } finally {
      await daemon.close();
    }
  });

  it('no daemon came back yet: a scan in another process (the CLI, a fallback hook) catches up first when the dead daemon\'s claim is left', async () => {
    await shellWriteLostToKill();
    await writeFile(w('a.txt'), 'edited by hand');
    expect(await scanViaDaemon(store, session, 'Bash', {})).toBeUndefined();
    const next = await session.scan();
    expect((await session.readFile(next.tag!, 'a.txt')).content?.toString()).toBe('by a shell command');

    // Once per dead daemon: the next scans do not read the logs again while its claim stays (a record
    // dropped from the index now stays dropped), a later daemon's death catches up anew.
    const index = join(dirs.store, 'workspaces', ws.id, 'owners.json');
    const owners = JSON.parse(await readFile(index, 'utf8')) as Record<string, unknown>;
    delete owners['a.txt'];
    await writeFile(index, JSON.stringify(owners));
    expect(await scanViaDaemon(store, session, 'Bash', {})).toBeUndefined();
    expect((await readOwners(session))['a.txt']).toBeUndefined();
    started += 1000;
    await deadClaim();
    expect(await scanViaDaemon(store, session, 'Bash', {})).toBeUndefined();
    expect((await readOwners(session))['a.txt']).toMatchObject({ session: session.id });
  });

  it("a tool capture's look after a dead daemon (the property test's seed 630803129): the hand edit its prompt scan recorded stays prompt 1's state", async () => {
    await writeFile(w('a.txt'), 'start');
    await mkdir(w('d'));
    await writeFile(w('d/f.txt'), 'f');
    await session.scan();
    await reopen(true);
    await writeFile(w('a.txt'), 'one'); // by hand, before prompt 1
    await session.turn({ text: 'prompt 1', scan: (tool) => session.scan({ tool }) }); // recorded; its owner record dropped by the kill
    await deadClaim();
    await reopen(false);
    // During the turn: a folder renamed by hand, then the agent writes in the new one. The capture
    // looks first (a full scan: the folder is new to the index) — against the index the dead daemon left.
    await rename(w('d'), w('x'));
    await session.capture(['x/c.txt'], { tool: 'Write' });
    await writeFile(w('x/c.txt'), 'c');
    await session.settle(['x/c.txt']);
    await session.restore('1', { force: true });
    expect(await readFile(w('a.txt'), 'utf8')).toBe('one');
    expect(await readFile(w('d/f.txt'), 'utf8')).toBe('f');
  });

  it("a second daemon's death (h7 probe): the daemon that took over from a dead one dies too; what it owed is caught up, not only the first one's records", async () => {
    await writeFile(w('a.txt'), 'start');
    await mkdir(w('d'));
    await writeFile(w('d/f.txt'), 'f');
    await session.scan();
    // The first daemon: prompt 1's scan records a hand edit; killed before the owner record.
    await reopen(true);
    await writeFile(w('a.txt'), 'one');
    await session.turn({ text: 'prompt 1', scan: (tool) => session.scan({ tool }) });
    await deadClaim();
    await reopen(false);
    expect((await readOwners(session))['a.txt']).toMatchObject({ session: session.id }); // caught up (and marked)
    // The second daemon took over from it (its claim carries the first one's start), answered prompt 2's
    // scan of another hand edit, and was killed before that owner record as well.
    const first = started;
    started += 2000;
    await reopen(true);
    await writeFile(w('a.txt'), 'two');
    await session.turn({ text: 'prompt 2', scan: (tool) => session.scan({ tool }) });
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    await writeFile(join(dirs.store, 'daemon', 'daemon.json'), JSON.stringify({ pid: Number(dead.stdout), url: 'http://127.0.0.1:9', host: '127.0.0.1', port: 9, startedAt: new Date(started).toISOString(), ownersOwedSince: first }));
    await reopen(false);
    // In the turn: a folder renamed by hand, then a tool capture (its look is a full scan against the index).
    await rename(w('d'), w('x'));
    await session.capture(['x/c.txt'], { tool: 'Write' });
    await writeFile(w('x/c.txt'), 'c');
    await session.settle(['x/c.txt']);
    await session.restore('2', { force: true });
    expect(await readFile(w('a.txt'), 'utf8')).toBe('two');
    expect(await readFile(w('d/f.txt'), 'utf8')).toBe('f');
  });

  it('a daemon that takes over from a dead one says what it owes in its claim and catches up every workspace before its claim is gone', async () => {
    await shellWriteLostToKill();
    const daemon = await startDaemon({ store, version: 'test' });
    const claim = JSON.parse(await readFile(join(dirs.store, 'daemon', 'daemon.json'), 'utf8')) as { ownersOwedSince?: number };
    expect(claim.ownersOwedSince).toBe(started);
    await daemon.close();
    // No claim left to say so: the index was caught up without a scan or capture asking.
    await expect(readFile(join(dirs.store, 'daemon', 'daemon.json'))).rejects.toThrow();
    const owners = JSON.parse(await readFile(join(dirs.store, 'workspaces', ws.id, 'owners.json'), 'utf8')) as Record<string, { session: string }>;
    expect(owners['a.txt']).toMatchObject({ session: session.id });
  });

  it('applies only settles the index lacks: a newer record of another session stays, forged content is not stored', async () => {
    await reopen(true);
    await writeFile(w('a.txt'), 'mine');
    await writeFile(w('b.txt'), 'mine too');
    await session.capture(['a.txt', 'b.txt'], { tool: 'Write' });
    await session.settle(['a.txt', 'b.txt']); // owner records dropped
    await reopen(false);
    const other = await ws.create({ title: 'other', baseline: false });
    await new Promise((r) => setTimeout(r, 5));
    await writeFile(w('b.txt'), 'theirs');
    await other.capture(['b.txt'], { tool: 'Write' });
    await other.settle(['b.txt']); // written at once: newer than the dropped record of b.txt
    expect(await catchUpOwners(ws.ctx, started)).toBeGreaterThan(0);
    const owners = await readOwners(session);
    expect(owners['a.txt']).toMatchObject({ session: session.id });
    expect(owners['b.txt']).toMatchObject({ session: other.id });
    // Again: nothing changes (the records it wrote are the settles').
    const before = await readFile(join(dirs.store, 'workspaces', ws.id, 'owners.json'), 'utf8');
    await catchUpOwners(ws.ctx, started);
    expect(await readFile(join(dirs.store, 'workspaces', ws.id, 'owners.json'), 'utf8')).toBe(before);

    // A settle whose carried content does not match its id: applied, its content not stored (reading
    // it fails loudly, and verify reports it, where leaving the record out would hide the state).
    await reopen(true);
    await writeFile(w('c.txt'), 'genuine');
    await session.capture(['c.txt'], { tool: 'Write' });
    const settled = await session.settle(['c.txt']);
    const id = settled.files[0]!.blob!;
    const log = join(dirs.store, 'workspaces', ws.id, 'sessions', session.id, 'events.jsonl');
    const lines = (await readFile(log, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    const settle = lines.filter((e) => e.type === 'settle').at(-1);
    expect(settle.inline?.[id]).toBeDefined();
    settle.inline[id] = lines.filter((e) => e.type === 'settle').at(-2).inline[Object.keys(lines.filter((e) => e.type === 'settle').at(-2).inline)[0]!];
    await writeFile(log, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    await reopen(false);
    await catchUpOwners(ws.ctx, started);
    expect((await readOwners(session))['c.txt']).toMatchObject({ session: session.id, state: id });
    expect(await ws.ctx.blobs.has(id)).toBe(false);
    expect((await verify(store.ctx)).problems).toContainEqual(expect.objectContaining({ kind: 'blob_corrupt', where: 'inline', blob: id }));
  });
});

describe('owner index rebuilt from the logs when missing or garbled', () => {
  const ownersFile = () => join(dirs.store, 'workspaces', ws.id, 'owners.json');
  /** Who recorded each path and what it left (the times are the events' on a rebuild). */
  const records = async () =>
    Object.fromEntries(Object.entries(await readOwners(session)).map(([p, o]) => [p, { session: o.session, state: o.state, mode: o.mode }]));

  it("gives each path its latest recorder across sessions (settles, scans, restores), and a capture notices the other session's write", async () => {
    await writeFile(w('a.txt'), 'v1');
    await writeFile(w('b.txt'), 'mine');
    await session.turn({ scan: false });
    await session.capture(['a.txt', 'b.txt'], { tool: 'Write' });
    await session.settle(['a.txt', 'b.txt']);
    await session.turn({ scan: false });
    await session.capture(['a.txt'], { tool: 'Edit' });
    await writeFile(w('a.txt'), 'v2');
    await session.settle(['a.txt']);
    await session.restore('2', { force: true }); // a.txt back to v1: the restore's record
    const other = await ws.create({ title: 'other', baseline: false });
    await new Promise((r) => setTimeout(r, 5));
    await other.capture(['b.txt'], { tool: 'Write' });
    await writeFile(w('b.txt'), 'theirs');
    await other.settle(['b.txt']);
    await other.scan(); // the baseline
    await writeFile(w('made-by-shell.txt'), 'x');
    await other.scan();
    const written = await records();
    expect(written['b.txt']).toMatchObject({ session: other.id });
    expect(Object.keys(written).sort()).toEqual(['a.txt', 'b.txt', 'made-by-shell.txt']);

    for (const lose of [() => rm(ownersFile()), () => writeFile(ownersFile(), '{"half a')]) {
      await lose();
      await reopen(false);
      expect(await records()).toEqual(written);
      expect(JSON.parse(await readFile(ownersFile(), 'utf8'))).toHaveProperty(['b.txt', 'session'], other.id); // written back once
      expect((await session.status()).changed.count).toBe(0);
    }
    await rm(ownersFile());
    await reopen(false);
    const captured = await session.capture(['b.txt'], { tool: 'Edit' });
    expect(captured.conflicts).toEqual([{ path: 'b.txt', otherSession: other.id }]);
  });
});
