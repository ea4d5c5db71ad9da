// Issue 27 item 4: over HTTP, undo and rewind used to change files with no preview token and no check
// that the session did not move. Now both follow restore's rule: the dryRun answer carries `seq` and a
// token for exactly that call; the real call without it (or with another call's token) is 400, and
// after any append to the session since the preview it is 409 CONFLICT with nothing changed.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../src/http/daemon.js';
import { openStore, type Session, type Store } from '../../src/index.js';
import { createClient } from '../helpers/http.js';
import { makeTempDirs, type TempDirs } from '../helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let daemon: RunningDaemon;
let session: Session;
let post: (path: string, body: unknown) => Promise<{ status: number; json: () => any }>; // eslint-disable-line @typescript-eslint/no-explicit-any

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-sec-undo-');
  store = await openStore({ dir: dirs.store });
  daemon = await startDaemon({ store, version: 'test' });
  const client = createClient(daemon.url, daemon.token);
  post = (path, body) => client.call('POST', path, { body });
  session = await (await store.openWorkspace(dirs.workspace)).create({ id: 's1' });
  await writeFile(join(dirs.workspace, 'a.txt'), 'one\n');
  await session.turn({ text: 'first' });
  await session.capture(['a.txt'], { tool: 'Edit' });
  await writeFile(join(dirs.workspace, 'a.txt'), 'two\n');
  await session.settle(['a.txt']);
});

afterEach(async () => {
  await daemon.close();
  await dirs.cleanup();
});

const content = (): Promise<string> => readFile(join(dirs.workspace, 'a.txt'), 'utf8');

describe.each(['undo', 'rewind'] as const)('POST /sessions/:id/%s', (op) => {
  const body = (extra: object = {}): object => ({ workspace: dirs.workspace, tag: '1', ...(op === 'undo' ? { path: 'a.txt' } : {}), ...extra });

  it('refuses without the preview token, or with a token of another call', async () => {
    const none = await post(`/sessions/s1/${op}`, body());
    expect(none.status).toBe(400);
    expect(none.json().error.data.where).toBe('token');
    const preview = (await post(`/sessions/s1/${op}`, body({ dryRun: true }))).json();
    expect(preview.token).toMatch(/^\d+\.[0-9a-f]{64}$/);
    expect((await post(`/sessions/s1/${op}`, body({ tag: '0', token: preview.token }))).status).toBe(400);
    expect((await post(`/sessions/s1/${op}`, body({ force: true, token: preview.token }))).status).toBe(400);
    const restoreToken = (await post('/sessions/s1/restore/preview', { workspace: dirs.workspace, tag: '1' })).json().token;
    expect((await post(`/sessions/s1/${op}`, body({ token: restoreToken }))).status).toBe(400);
    expect(await content()).toBe('two\n');
  });

  it('refuses with 409 when the session moved since the preview; runs with a fresh one', async () => {
    const preview = (await post(`/sessions/s1/${op}`, body({ dryRun: true }))).json();
    await session.turn({ text: 'another turn meanwhile' });
    const stale = await post(`/sessions/s1/${op}`, body({ token: preview.token }));
    expect(stale.status).toBe(409);
    expect(stale.json().error.code).toBe('CONFLICT');
    expect(await content()).toBe('two\n');
    const fresh = (await post(`/sessions/s1/${op}`, body({ dryRun: true }))).json();
    const done = await post(`/sessions/s1/${op}`, body({ token: fresh.token }));
    expect(done.status).toBe(200);
    expect(await content()).toBe('one\n');
  });
});
