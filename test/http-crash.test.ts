// The daemon killed with SIGKILL in the middle of a restore it serves (issue 13): the workspace ends
// exactly in the before-state or the after-state once the session is opened again (the journal
// recovers it), and the next daemon takes over the dead one's claim. Also: SIGTERM lets a request in
// flight finish before the daemon exits.
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../src/store.js';
import { createClient, spawnDaemon as spawnServe } from './helpers/http.js';
import { ageLocks, freshDirs, measure, runCkpt } from './reliability/fault-harness.js';
import { MAIN, SCENARIOS } from './reliability/scenarios.js';
import { snapshotTree } from './reliability/tree.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';
import { treeOf } from './fixtures/scan-world.js';

const FILES = 200;
let dirs: TempDirs | undefined;
const children: ChildProcess[] = [];
const spawnDaemon = async (store: string) => {
  const d = await spawnServe(store);
  children.push(d.child);
  return d;
};

afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await dirs?.cleanup();
});

describe('daemon crash and shutdown', () => {
  it('SIGKILL mid-restore leaves the workspace before or after, recovered on the next open', async () => {
    dirs = await makeTempDirs('ckpt-http-crash-');
    const ws = dirs.workspace;
    const store = await openStore({ dir: dirs.store });
    const workspace = await store.openWorkspace(ws);
    const session = await workspace.create({ id: 's1' });
    await mkdir(join(ws, 'src'), { recursive: true });
    for (let i = 0; i < FILES; i++) await writeFile(join(ws, 'src', `f${i}.txt`), `original ${i}\n`.repeat(50));
    await session.scan();
    await session.turn();
    const after = await treeOf(ws); // the state a restore to "1" brings back
    const edit = async (round: number): Promise<void> => {
      for (let i = 0; i < FILES; i++) {
        if (i % 6 === 0) await rm(join(ws, 'src', `f${i}.txt`), { force: true });
        else await writeFile(join(ws, 'src', `f${i}.txt`), `edited ${round} ${i}\n`.repeat(40));
      }
      for (let i = 0; i < 30; i++) await writeFile(join(ws, 'src', `new${round}-${i}.txt`), `new ${i}\n`);
      await (await workspace.get('s1')).scan();
    };

    for (const delayMs of [10, 60]) {
      await edit(delayMs);
      const before = await treeOf(ws);
      const d = await spawnDaemon(dirs.store);
      const client = createClient(d.url, d.token);
      const preview = (await client.call('POST', '/sessions/s1/restore/preview', { body: { workspace: ws, tag: '1' } })).json();
      expect(preview.restored.length).toBeGreaterThan(150);
      const pending = client.call('POST', '/sessions/s1/restore', { body: { workspace: ws, tag: '1', token: preview.token } }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, delayMs));
      d.child.kill('SIGKILL');
      await d.exited;
      await pending;
      // Opening the session finishes (or abandons) the interrupted restore.
      const reopened = await (await openStore({ dir: dirs.store })).openWorkspace(ws);
      await reopened.get('s1');
      const now = await treeOf(ws);
      expect([before, after]).toContainEqual(now);
      if (JSON.stringify(now) === JSON.stringify(before)) {
        // Not restored (killed before the point of no return): the same restore works now.
        await (await reopened.get('s1')).restore('1', { force: true });
      }
      expect(await treeOf(ws)).toEqual(after);
    }
  }, 60_000);

  it('a restore killed in another process is finished by the next write on the session the daemon holds, not by a GET', async () => {
    const base = await mkdtemp(join(tmpdir(), 'ckpt-http-recover-'));
    try {
      const scenario = SCENARIOS.find((s) => s.name === 'restore')!;
      const clean = await measure(base, scenario);
      const sd = await freshDirs(base, scenario);
      const d = await spawnDaemon(sd.store);
      const client = createClient(d.url, d.token);
      const status = () => client.call('GET', `/sessions/${MAIN}/status?workspace=${encodeURIComponent(sd.workspace)}`);
      expect((await status()).status).toBe(200); // the daemon holds the session now
      // `ckpt restore` SIGKILLed at its last workspace write: past restore_started, before its commit.
      const run = await runCkpt(sd, scenario.args, { side: 'workspace', step: clean.counts.workspace, action: 'kill' });
      expect(run.signal).toBe('SIGKILL');
      ageLocks(sd.store);
      const wid = (await readdir(join(sd.store, 'workspaces')))[0]!;
      const types = async () => (await readFile(join(sd.store, 'workspaces', wid, 'sessions', MAIN, 'events.jsonl'), 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type);
      expect((await types()).slice(-1)).toEqual(['restore_started']);
      // GETs change nothing (SECURITY promise 6): the status, the log and the web page's list read it as it is.
      const killed = [...snapshotTree(sd.workspace)];
      const w = encodeURIComponent(sd.workspace);
      for (const path of [`/sessions/${MAIN}/status?workspace=${w}`, `/sessions/${MAIN}/log?workspace=${w}`, `/sessions/~latest?workspace=${w}`, `/web/sessions?workspace=${w}`]) {
        expect((await client.call('GET', path)).status, path).toBe(200);
      }
      expect((await types()).slice(-1)).toEqual(['restore_started']);
      expect([...snapshotTree(sd.workspace)]).toEqual(killed);
      // The next write finishes it first.
      expect((await client.call('POST', `/sessions/${MAIN}/turn`, { body: { workspace: sd.workspace } })).status).toBe(200);
      // Its owner records too: the turn's scan finds nothing changed by hand (it recorded the restored files as a user edit).
      expect((await types()).slice(-3)).toEqual(['restore_started', 'restore_committed', 'turn']);
      expect([...snapshotTree(sd.workspace)]).toEqual([...clean.after]);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  }, 60_000);

  it('SIGTERM finishes the request in flight, then exits and releases the claim', async () => {
    dirs = await makeTempDirs('ckpt-http-term-');
    const ws = dirs.workspace;
    for (let i = 0; i < 2000; i++) await writeFile(join(ws, `f${i}.txt`), `content ${i}\n`);
    const d = await spawnDaemon(dirs.store);
    const client = createClient(d.url, d.token);
    await client.call('POST', '/sessions', { body: { workspace: ws, id: 's1', baseline: false } });
    const scan = client.call('POST', '/sessions/s1/scan', { body: { workspace: ws } });
    // Once the scan holds the workspace's scan lock the request is in flight: then ask the daemon to stop.
    const wid = (await readdir(join(dirs.store, 'workspaces')))[0]!;
    const lock = join(dirs.store, 'workspaces', wid, 'scan.ckpt-lock');
    for (let i = 0; i < 2000 && !(await stat(lock).then(() => true, () => false)); i++) await new Promise((r) => setTimeout(r, 2));
    d.child.kill('SIGTERM');
    const reply = await scan;
    expect(reply.status).toBe(200);
    expect(reply.json().baseline).toBe(true);
    expect(await d.exited).toBe(0);
    await expect(stat(join(dirs.store, 'daemon', 'daemon.json'))).rejects.toThrow();
  }, 30_000);
});
