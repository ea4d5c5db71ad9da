// Soak defect (issue 16): removing a session did not take its log's lock, so a restore in flight in
// another process appended its next events after the removal — re-creating `events.jsonl` as a
// fragment starting at seq 16 with no `session` event, which every later listing read as LOG_CORRUPT.
// Removing a whole workspace (`ckpt workspace rm`) had the same race for each of its sessions.
import { access, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isCkptError, openStore } from '../src/index.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs | undefined;
afterEach(() => dirs?.cleanup());

/**
 * A session `id` with a transaction in flight (one event appended, the next 100 ms later) when this
 * resolves, and the same session opened through a second store handle (a writer queued behind it).
 */
async function writerInFlight(prefix: string, id: string) {
  dirs = await makeTempDirs(prefix);
  const store = await openStore({ dir: dirs.store, retention: false });
  const ws = await store.openWorkspace(dirs.workspace);
  const s = await ws.create({ id });
  const other = await (await (await openStore({ dir: dirs.store, retention: false })).openWorkspace(dirs.workspace)).get(id);
  let started!: () => void;
  const inFlight = new Promise<void>((r) => (started = r));
  const tx = s.log.transaction(async (t) => {
    await t.append([{ type: 'note', n: 1 }]);
    started();
    await new Promise((r) => setTimeout(r, 100));
    await t.append([{ type: 'note', n: 2 }]);
  });
  await inFlight;
  return { store, ws, other, tx };
}

describe('session removal against a writer', () => {
  it('waits for a transaction in flight, and a writer queued behind it cannot re-create the log', async () => {
    const { ws, other, tx } = await writerInFlight('ckpt-remove-race-', 'doomed');
    const removed = ws.remove('doomed'); // must wait for the transaction in flight
    await tx;
    await removed;
    const err = await other.record([{ type: 'message', id: 'late' }]).catch((e: unknown) => e);
    expect(isCkptError(err, 'SESSION_NOT_FOUND')).toBe(true);
    const sessions = join(dirs!.store, 'workspaces', ws.id, 'sessions');
    await expect(access(join(sessions, 'doomed', 'events.jsonl'))).rejects.toThrow();
    expect(await ws.list()).toEqual([]);
    // (The refused writer's lock may leave an empty folder: no log, so no session.)
    expect(await readdir(join(sessions, 'doomed')).catch(() => [])).toEqual([]);
  });

  it('a removal killed after its commit point (log gone, folder left) is finished by `ckpt session rm` again', async () => {
    dirs = await makeTempDirs('ckpt-remove-left-');
    const store = await openStore({ dir: dirs.store, retention: false });
    const ws = await store.openWorkspace(dirs.workspace);
    await ws.create({ id: 'halfway' });
    const folder = join(dirs.store, 'workspaces', ws.id, 'sessions', 'halfway');
    // What a SIGKILL between the log's unlink and the lock's release leaves.
    await rm(join(folder, 'events.jsonl'));
    await mkdir(join(folder, 'events.jsonl.ckpt-lock'));
    const r = await runCli(['--store', dirs.store, 'session', 'rm', 'halfway', '--json'], { cwd: dirs.workspace });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stderr).error.code).toBe('SESSION_NOT_FOUND');
    await expect(access(folder)).rejects.toThrow();
  });
});

describe('workspace removal against a writer', () => {
  it('waits for a transaction in flight on any of its sessions; the writer cannot re-create a log', async () => {
    const { store, ws, other, tx } = await writerInFlight('ckpt-remove-ws-race-', 'busy');
    // Before the fix the folder went at once and the second append re-created sessions/busy/events.jsonl
    // as a fragment starting at seq 3 (no `session` event), under a workspace with no workspace.json.
    const removed = store.removeWorkspace(dirs!.workspace);
    await tx;
    expect(await removed).toMatchObject({ id: ws.id, sessions: 1 });
    const err = await other.record([{ type: 'message', id: 'late' }]).catch((e: unknown) => e);
    expect(isCkptError(err, 'SESSION_NOT_FOUND')).toBe(true);
    await expect(access(join(dirs!.store, 'workspaces', ws.id, 'sessions', 'busy', 'events.jsonl'))).rejects.toThrow();
    expect(await store.listWorkspaces()).toEqual([]);
  });
});
