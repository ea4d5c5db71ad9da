// Issue 27 item 12: GET routes are read-only and cheap. `GET /sessions?workspace=<any folder>` (which a
// same-site `<img>` can make with the cookie) created a workspace record; `GET /verify` re-hashed the
// whole store. Now no GET writes to the store, and verify is POST.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../src/http/daemon.js';
import { openStore, type Store } from '../../src/index.js';
import { createClient } from '../helpers/http.js';
import { makeTempDirs, type TempDirs } from '../helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let daemon: RunningDaemon;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-sec-get-');
  store = await openStore({ dir: dirs.store });
  daemon = await startDaemon({ store, version: 'test' });
});

afterEach(async () => {
  await daemon.close();
  await dirs.cleanup();
});

/** Every file below the store but the daemon's own (claim, port, token). */
async function storeFiles(): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(join(dir, e.name), r);
      else if (!r.startsWith('daemon/')) out.push(r);
    }
  };
  await walk(dirs.store, '');
  return out.sort();
}

describe('GET routes', () => {
  it('naming a folder the store does not know write nothing (404)', async () => {
    const client = createClient(daemon.url, daemon.token);
    const before = await storeFiles();
    const w = encodeURIComponent(dirs.workspace);
    for (const path of [`/sessions?workspace=${w}`, `/tree?workspace=${w}`, `/web/sessions?workspace=${w}`, `/sessions/~latest?workspace=${w}`, `/sessions/s1/status?workspace=${w}`, `/sessions/s1/log?workspace=${w}`]) {
      const res = await client.call('GET', path);
      expect(res.status, path).toBe(404);
    }
    expect(await store.listWorkspaces()).toEqual([]);
    expect(await storeFiles()).toEqual(before);
    // POST /sessions is what adds a workspace.
    expect((await client.call('POST', '/sessions', { body: { workspace: dirs.workspace, id: 's1' } })).status).toBe(200);
    expect((await client.call('GET', `/sessions?workspace=${w}`)).json().sessions).toHaveLength(1);
  });

  it('verify (a re-hash of the whole store) is POST only', async () => {
    const client = createClient(daemon.url, daemon.token);
    expect((await client.call('GET', '/verify')).status).toBe(404);
    expect((await client.call('POST', '/verify', { body: {} })).json()).toMatchObject({ ok: true });
  });
});
