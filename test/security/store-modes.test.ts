// Issue 27 item 1: the store is private. Every file 0600 and folder 0700 whatever the umask, hooks.log
// and the daemon token included; a store an older ckpt left readable (0755/0644) is tightened when
// opened (and the CLI says so); a captured 0600 `.env` cannot be read by another user from its blob.
import { spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/index.js';
import { appendHookLog } from '../../src/hooks/hook-log.js';
import { daemonToken } from '../../src/daemon/daemon-files.js';
import { makeTempDirs, type TempDirs } from '../helpers/temp.js';
import { runCli } from '../helpers/cli.js';

/** Every path below `root` (root included) whose mode lets group or others in. */
function loosePaths(root: string): string[] {
  const out: string[] = [];
  const visit = (abs: string): void => {
    const st = lstatSync(abs);
    if (st.isSymbolicLink()) return;
    if ((st.mode & 0o077) !== 0) out.push(`${abs} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const name of readdirSync(abs)) visit(join(abs, name));
  };
  visit(root);
  return out;
}

function filesBelow(root: string): string[] {
  const out: string[] = [];
  const visit = (abs: string): void => {
    const st = lstatSync(abs);
    if (st.isDirectory()) for (const name of readdirSync(abs)) visit(join(abs, name));
    else if (st.isFile()) out.push(abs);
  };
  visit(root);
  return out;
}

/** Fills a store the way real use does: a session, a tool capture of a secret, a scan, the hook log, the daemon token. */
async function fillStore(storeDir: string, workspace: string): Promise<void> {
  await writeFile(join(workspace, '.env'), 'API_KEY=very-secret\n', { mode: 0o600 });
  await writeFile(join(workspace, 'big.txt'), 'x'.repeat(200_000));
  const store = await openStore({ dir: storeDir });
  const session = await (await store.openWorkspace(workspace)).create({ id: 's1' });
  await session.turn({ text: 'a prompt the user typed' });
  await session.capture(['.env', 'big.txt']);
  await writeFile(join(workspace, 'new.txt'), 'new');
  await session.scan();
  await appendHookLog(store, { agent: 'claude', code: 'WARNING', message: 'a warning' });
  await daemonToken(store.ctx);
}

let dirs: TempDirs;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-sec-modes-');
  // Others may enter the base (as a home folder usually allows), so the store's own modes are what protect it.
  await chmod(dirs.base, 0o755);
});
afterEach(() => dirs.cleanup());

describe.skipIf(!!process.env.CKPT_TEST_STORE)('store modes (folder store)', () => {
  for (const umask of [0o000, 0o002, 0o022, 0o077]) {
    it(`umask ${umask.toString(8).padStart(3, '0')}: every file 0600 and folder 0700`, async () => {
      const before = process.umask(umask);
      try {
        await fillStore(dirs.store, dirs.workspace);
      } finally {
        process.umask(before);
      }
      expect(loosePaths(dirs.store)).toEqual([]);
      for (const f of filesBelow(dirs.store)) expect(statSync(f).mode & 0o777).toBe(0o600);
    });
  }

  it('an older store readable by others is made private on open, and the CLI warns', async () => {
    await fillStore(dirs.store, dirs.workspace);
    // What an older ckpt left: folders 0755, files 0644.
    const loosen = (abs: string): void => {
      const st = lstatSync(abs);
      if (st.isDirectory()) {
        chmodSync(abs, 0o755);
        for (const name of readdirSync(abs)) loosen(join(abs, name));
      } else if (st.isFile()) chmodSync(abs, 0o644);
    };
    loosen(dirs.store);
    expect(loosePaths(dirs.store).length).toBeGreaterThan(10);
    const run = await runCli(['--store', dirs.store, '--workspace', dirs.workspace, 'status', '--json'], { cwd: dirs.workspace });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/readable by other users; made \d+ files and folders private/);
    expect(loosePaths(dirs.store)).toEqual([]);
    // Private now: opening again says nothing and changes nothing.
    const store = await openStore({ dir: dirs.store });
    expect(store.tightened).toBe(0);
  });

  it('a folder that is not a store (`--store .` by mistake) is refused and left exactly as it was', async () => {
    const folder = join(dirs.base, 'project');
    mkdirSync(join(folder, 'sub'), { recursive: true });
    writeFileSync(join(folder, 'sub', 'public.html'), 'pub');
    chmodSync(folder, 0o755);
    chmodSync(join(folder, 'sub'), 0o755);
    chmodSync(join(folder, 'sub', 'public.html'), 0o644);
    const modes = (): string[] => ['', 'sub', 'sub/public.html'].map((p) => `${p} ${(statSync(join(folder, p)).mode & 0o777).toString(8)}`);
    const before = modes();
    const run = await runCli(['--store', folder, 'workspace', 'list', '--json'], { cwd: dirs.workspace });
    expect(run.code, run.stderr).toBe(2);
    expect(JSON.parse(run.stderr).error).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/not a ckpt store/) });
    expect(modes()).toEqual(before);
    expect(readdirSync(folder).sort()).toEqual(['sub']);
    await expect(openStore({ dir: folder })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    // An empty folder becomes a store, and a store opens as before.
    const empty = join(dirs.base, 'empty');
    mkdirSync(empty);
    await (await openStore({ dir: empty })).close();
    await (await openStore({ dir: empty })).close();
    expect(readdirSync(empty)).toContain('store.json');
    // A hook client makes `daemon/` before the daemon it starts opens the store: still a new store.
    const started = join(dirs.base, 'started');
    mkdirSync(join(started, 'daemon'), { recursive: true });
    writeFileSync(join(started, 'hooks.log'), '');
    await (await openStore({ dir: started })).close();
    expect(readdirSync(started)).toContain('store.json');
  });

  it.skipIf(process.getuid?.() !== 0)('another user (nobody) cannot read a captured .env from the store', async () => {
    await fillStore(dirs.store, dirs.workspace);
    let readable = 0;
    for (const f of filesBelow(dirs.store)) {
      const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'cat', f]);
      if (r.status === 0) readable++;
    }
    expect(readable).toBe(0);
    // Even with the store folder opened up by hand, the files themselves stay closed.
    const loosenDirs = (abs: string): void => {
      if (!lstatSync(abs).isDirectory()) return;
      chmodSync(abs, 0o755);
      for (const name of readdirSync(abs)) loosenDirs(join(abs, name));
    };
    loosenDirs(dirs.store);
    for (const f of filesBelow(dirs.store)) {
      const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'cat', f]);
      expect(r.status, `${f} readable by nobody`).not.toBe(0);
    }
  });
});
