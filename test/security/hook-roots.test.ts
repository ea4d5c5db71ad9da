// Issue 27 item 6: a user-scope HTTP hook (bearer token, no ?workspace= in its URL) let the event's cwd
// choose any folder as workspace: a home-like cwd made ckpt copy `.ssh/id_rsa` into the store. Such
// hooks now record only in a workspace the store knows, or below a folder of CKPT_HOOK_ROOTS; the hook
// still never blocks the agent (200 with a warning; the thin hook client is refused 403 and records
// in its own process, as with no daemon), and nothing of the folder reaches the store through the daemon.
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../src/http/daemon.js';
import { openStore, type Store } from '../../src/index.js';
import { claudeEvents as ev, claudeSession } from '../fixtures/claude-events.js';
import { createClient } from '../helpers/http.js';
import { makeTempDirs, type TempDirs } from '../helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let daemon: RunningDaemon;
let home: string;
const savedRoots = process.env.CKPT_HOOK_ROOTS;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-sec-roots-');
  store = await openStore({ dir: dirs.store });
  daemon = await startDaemon({ store, version: 'test' });
  home = join(dirs.base, 'home');
  await mkdir(join(home, '.ssh'), { recursive: true });
  await writeFile(join(home, '.ssh', 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n');
});

afterEach(async () => {
  if (savedRoots === undefined) delete process.env.CKPT_HOOK_ROOTS;
  else process.env.CKPT_HOOK_ROOTS = savedRoots;
  await daemon.close();
  await dirs.cleanup();
});

async function editKeyThroughUserHook(): Promise<{ status: number; answers: unknown[] }> {
  const client = createClient(daemon.url, daemon.token);
  const s = claudeSession(home);
  const edit = { file_path: join(home, '.ssh', 'id_rsa'), old_string: 'secret', new_string: 'x', replace_all: false };
  const answers: unknown[] = [];
  let status = 200;
  for (const event of [ev.sessionStart(s), ev.preToolUse(s, 'Edit', edit, 'toolu_1')]) {
    const res = await client.call('POST', '/hooks/claude', { body: event });
    status = Math.max(status, res.status);
    answers.push(res.json());
  }
  return { status, answers };
}

describe('user-scope HTTP hooks', () => {
  it('record nothing in a folder the store does not know (a home-like cwd); the agent is not blocked', async () => {
    delete process.env.CKPT_HOOK_ROOTS;
    const { status, answers } = await editKeyThroughUserHook();
    expect(status).toBe(200);
    expect(JSON.stringify(answers)).toMatch(/user-scope hook records only in workspaces the store knows/);
    expect(await store.listWorkspaces()).toEqual([]);
    expect(await readdir(join(dirs.store, 'blobs')).catch(() => [])).toEqual([]);
  });

  it('record below a folder of CKPT_HOOK_ROOTS, and in a workspace the store knows', async () => {
    process.env.CKPT_HOOK_ROOTS = `/nonexistent:${dirs.base}`;
    await editKeyThroughUserHook();
    expect((await store.listWorkspaces()).map((w) => w.root)).toEqual([home]);
    delete process.env.CKPT_HOOK_ROOTS;
    // Known to the store now: recorded without the list too.
    const again = await editKeyThroughUserHook();
    expect(JSON.stringify(again.answers)).not.toMatch(/user-scope hook/);
  });

  it('the thin hook client (its project-folder header) is refused 403, so it records in its own process as with no daemon; the daemon records nothing', async () => {
    delete process.env.CKPT_HOOK_ROOTS;
    const client = createClient(daemon.url, daemon.token);
    const s = claudeSession(home);
    const res = await client.call('POST', '/hooks/codex', { body: ev.sessionStart(s), headers: { 'x-ckpt-hook-env': encodeURIComponent('{}') } });
    expect(res.status).toBe(403);
    expect(res.json().error.code).toBe('FORBIDDEN');
    expect(await store.listWorkspaces()).toEqual([]);
  });

  it('a hook whose URL names the workspace is not affected (project-scope install)', async () => {
    delete process.env.CKPT_HOOK_ROOTS;
    const client = createClient(daemon.url, daemon.token);
    const s = claudeSession(dirs.workspace);
    const res = await client.call('POST', `/hooks/claude?workspace=${encodeURIComponent(dirs.workspace)}`, { body: ev.sessionStart(s) });
    expect(res.status).toBe(200);
    expect((await store.listWorkspaces()).map((w) => w.root)).toEqual([dirs.workspace]);
  });
});
