// The fleet view (issue 33): `ckpt serve` over a shared store on one machine shows every machine's
// workspaces and sessions, streams their events live (with the machine's name, filterable), reads
// logs, diffs and files of another machine's sessions from the store, and refuses to restore or scan
// there with WRONG_MACHINE (nothing changes); the daemon's token and claim stay on this machine.
// Runs under `npm run test:shared`.
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../src/http/daemon.js';
import { sharedDaemonDir, type Store } from '../src/index.js';
import { createClient } from './helpers/http.js';
import { dropSharedStore, freshSharedUrl, openAsMachine, SHARED_BASE } from './helpers/shared-store.js';

const describeShared = SHARED_BASE ? describe : describe.skip;


describeShared('fleet view: ckpt serve over a shared store', () => {
  let url: string;
  let base: string;
  let daemon: RunningDaemon | undefined;
  const stores: Store[] = [];
  const savedState = process.env.XDG_STATE_HOME;
  beforeEach(async () => {
    url = freshSharedUrl();
    base = await mkdtemp(join(tmpdir(), 'ckpt-fleet-serve-'));
    process.env.XDG_STATE_HOME = join(base, 'state');
  });
  afterEach(async () => {
    await daemon?.close();
    daemon = undefined;
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await dropSharedStore(url);
    if (savedState === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = savedState;
    await rm(base, { recursive: true, force: true });
  });

  it('lists, streams and reads every machine; restores only where the folder is', async () => {
    const here = await openAsMachine(url, 'm-here');
    const far = await openAsMachine(url, 'm-far');
    stores.push(here, far);
    daemon = await startDaemon({ store: here, version: 'test' });
    // Token and claim are this machine's files, not objects of the shared store.
    const local = sharedDaemonDir(here.dir, 'm-here');
    expect((await stat(join(local, 'daemon', 'token'))).mode & 0o777).toBe(0o600);
    expect((await readFile(join(local, 'daemon', 'token'), 'utf8')).trim()).toBe(daemon.token);
    expect(await here.ctx.backend.read('daemon/token')).toBeUndefined();
    const client = createClient(daemon.url, daemon.token);
    const get = async (path: string) => {
      const r = await client.call('GET', path);
      expect(r.status, r.text).toBe(200);
      return r.json();
    };

    // The far machine works in its own folder; its events stream here, named by machine.
    const folder = join(base, 'far-ws');
    await mkdir(folder);
    await writeFile(join(folder, 'a.txt'), 'one\n');
    const farWs = await far.openWorkspace(folder);
    const stream = client.sse(`/events?machine=m-far`);
    await stream.until((e) => e.some((x) => x.event === 'hello'));
    const s = await farWs.create({ id: 'far-session', title: 'far away' });
    const sent: number[] = [];
    for (let i = 1; i <= 10; i++) {
      sent.push(performance.now());
      await s.turn({ text: `prompt ${i}` });
      if (i === 1) {
        await s.capture(['a.txt']);
        await writeFile(join(folder, 'a.txt'), 'two\n');
        await s.settle(['a.txt']);
      }
    }
    await stream.until((e) => e.filter((x) => x.event === 'turn').length >= 10);
    const turns = stream.events.filter((x) => x.event === 'turn').map((x) => JSON.parse(x.data));
    expect(turns.map((t) => t.event.text)).toEqual(Array.from({ length: 10 }, (_, i) => `prompt ${i + 1}`));
    expect(turns.every((t) => t.machine === 'm-far' && t.workspace === farWs.id && t.session === 'far-session')).toBe(true);
    stream.close();

    const { workspaces } = await get('/workspaces');
    expect(workspaces).toContainEqual(expect.objectContaining({ id: farWs.id, root: farWs.root, machine: 'm-far' }));
    const q = (extra: Record<string, string> = {}) => new URLSearchParams({ workspace: farWs.id, ...extra }).toString();
    expect((await get(`/sessions?${q()}`)).sessions.map((m: { id: string }) => m.id)).toEqual(['far-session']);
    expect((await get(`/sessions/far-session/log?${q()}`)).checkpoints).toHaveLength(1);
    const diff = await get(`/sessions/far-session/diff?${q({ from: '1', to: '2', patch: '1' })}`);
    expect(JSON.stringify(diff)).toContain('a.txt');
    const file = await get(`/sessions/far-session/file?${q({ tag: '1', path: 'a.txt' })}`);
    expect(Buffer.from(file.content, 'base64').toString()).toBe('one\n');

    // What would touch the far folder is refused with WRONG_MACHINE, and nothing is recorded.
    const before = await s.log.lastSeq();
    for (const [path, body] of [
      ['/sessions/far-session/restore/preview', { workspace: farWs.id, tag: '1' }],
      ['/sessions/far-session/scan', { workspace: farWs.id, tool: 'Bash' }],
      ['/sessions/far-session/turn', { workspace: farWs.id }],
      ['/sessions', { workspace: farWs.id }],
    ] as const) {
      const r = await client.call('POST', path, { body, headers: { 'x-ckpt': '1' } });
      expect(r.status, `${path}: ${r.text}`).toBe(409);
      expect(r.json().error).toMatchObject({ code: 'WRONG_MACHINE', data: { machine: 'm-far' } });
    }
    expect(await s.log.lastSeq()).toBe(before);
    expect(await readFile(join(folder, 'a.txt'), 'utf8')).toBe('two\n');
  });
});
