// The shell hook client (bin/ckpt-hook.sh, DESIGN §10 "The shell hook client"), run as an agent runs
// its command hook: a program with the event on stdin. With a daemon it must record through curl
// alone (its node argument is a path that does not exist), never put the token on a command line,
// and ignore the user's proxy and ~/.curlrc. Without a daemon, curl, or a 200 it must hand the same
// event to the Node client, which records it in-process. Real daemon on a loopback port.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmod, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../src/http/daemon.js';
import { agentSessionId } from '../src/index.js';
import { openStore, type Store } from '../src/store.js';
import { AGENTS } from '../src/hooks/agents/index.js';
import { JSON_ANSWER_AGENTS } from '../src/hooks/client/hook-client.js';
import { claudeEvents as ev, claudeSession } from './fixtures/claude-events.js';
import { runShell } from './helpers/agent-hooks.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';
import { CAN_SEE_ZOMBIES, makeZombie } from './helpers/zombie.js';
import { DEFAULT_MAX_BLOB_BYTES } from '../src/context.js';

const SH_CLIENT = fileURLToPath(new URL('../bin/ckpt-hook.sh', import.meta.url));
const NO_NODE = '/nonexistent/node';

let dirs: TempDirs;
let storeDir: string;
let store: Store;
let daemon: RunningDaemon | undefined;
let ws: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-sh-client-');
  // Always a folder: a shared store URL is the Node client's (its own test below).
  storeDir = join(dirs.base, 'store');
  store = await openStore({ dir: storeDir });
  daemon = await startDaemon({ store, version: 'test' });
  ws = join(dirs.base, 'my project'); // a space: the project folder travels in a header
  await mkdir(ws);
  await store.openWorkspace(ws);
  const home = join(dirs.base, 'home');
  await mkdir(home);
  // A hostile ~/.curlrc and proxy settings: the token must still go to the daemon only.
  await writeFile(join(home, '.curlrc'), 'proxy = "http://127.0.0.1:9"\nheader = "Authorization: Bearer leaked"\n');
  env = { PATH: process.env.PATH, HOME: home, CLAUDE_PROJECT_DIR: ws, http_proxy: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9', ALL_PROXY: 'http://127.0.0.1:9' };
});

afterEach(async () => {
  await daemon?.close();
  await dirs.cleanup();
});

/** The client as an agent runs its command hook (helpers/agent-hooks.ts runShell: `sh -c`, the event on stdin). */
function runSh(args: string[], input: unknown, extraEnv: NodeJS.ProcessEnv = {}) {
  const command = [SH_CLIENT, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return runShell(command, { cwd: ws, env: { ...env, ...extraEnv }, input: typeof input === 'string' ? input : JSON.stringify(input) });
}

const checkpoints = async (externalId: string) => {
  const s = await (await store.openWorkspace(ws)).get(agentSessionId('claude', externalId));
  return (await s.checkpoints()).map((c) => `${c.tag}:${c.tool}`);
};

describe('the shell hook client', () => {
  it('with a daemon: records through curl alone (no node), token off the command line, proxies and ~/.curlrc ignored', async () => {
    // A curl that writes its argv down, then runs the real one.
    const bin = join(dirs.base, 'bin');
    await mkdir(bin);
    const argvLog = join(dirs.base, 'curl-argv');
    const real = (process.env.PATH ?? '').split(':').map((d) => join(d, 'curl'));
    await writeFile(join(bin, 'curl'), `#!/bin/sh\nprintf '%s\\n' "$@" >> '${argvLog}'\nfor c in ${real.map((c) => `'${c}'`).join(' ')}; do [ -x "$c" ] && exec "$c" "$@"; done\nexit 127\n`);
    await chmod(join(bin, 'curl'), 0o755);
    env.PATH = `${bin}:${env.PATH}`;
    const s = claudeSession(ws);
    const args = [NO_NODE, '--store', storeDir, 'hook', 'claude', '--daemon'];
    await writeFile(join(ws, 'a.txt'), 'one\n'); // there when the session starts
    expect(await runSh(args, ev.sessionStart(s))).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await runSh(args, ev.userPromptSubmit(s, 'fix a.txt'))).code).toBe(0);
    const edit = { file_path: join(ws, 'a.txt'), old_string: 'one', new_string: 'two', replace_all: false };
    expect(await runSh([NO_NODE, '--store', storeDir, 'hook', 'claude'], ev.preToolUse(s, 'Edit', edit, 'toolu_1'))).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await checkpoints(s.session_id)).toEqual(['1.1:Edit']);
    const argv = await readFile(argvLog, 'utf8');
    expect(argv).toContain('/hooks/claude');
    expect(argv).not.toContain(daemon!.token);
    // A project folder the header would need escaped for is the Node client's (here: no node, 127).
    expect((await runSh(args, ev.userPromptSubmit(s, 'x'), { CLAUDE_PROJECT_DIR: `${ws}/100%` })).code).toBe(127);
    // A rejected event is answered with a message, as the Node client prints it.
    const bad = await runSh(args, '{"hook_event_name":"PreToolUse"');
    expect(bad.code).toBe(0);
    expect(JSON.parse(bad.stdout).systemMessage).toMatch(/^ckpt /);
  });

  it('a store from CKPT_HOME or --store=DIR relative to the working folder; Cursor gets `{}` on every answer', async () => {
    const s = claudeSession(ws);
    expect((await runSh([NO_NODE, 'hook', 'claude'], ev.sessionStart(s), { CKPT_HOME: storeDir })).code).toBe(0);
    expect((await runSh([NO_NODE, `--store=${join('..', 'store')}`, 'hook', 'claude'], ev.userPromptSubmit(s, 'hi'))).code).toBe(0);
    const cursor = await runSh([NO_NODE, '--store', storeDir, 'hook', 'cursor'], { hook_event_name: 'beforeReadFile', conversation_id: 'c1', generation_id: 'g1', workspace_roots: [ws], file_path: join(ws, 'x') });
    expect(cursor).toMatchObject({ code: 0, stdout: '{}\n' });
    // Both reached the daemon: the session it opened is there.
    await expect((await store.openWorkspace(ws)).get(agentSessionId('claude', s.session_id))).resolves.toBeDefined();
  });

  it('no daemon, a dead claim, no curl, a refused token, strict mode: the same event recorded by the Node client', async () => {
    const s = claudeSession(ws);
    const args = [process.execPath, '--store', storeDir, 'hook', 'claude'];
    const edit = (n: number) => ev.preToolUse(s, 'Write', { file_path: join(ws, `f${n}.txt`), content: 'x' }, `toolu_${n}`);
    expect((await runSh(args, ev.sessionStart(s))).code).toBe(0);
    // No curl on PATH (only the sh that runs the command).
    const shOnly = join(dirs.base, 'sh-only');
    await mkdir(shOnly);
    await symlink('/bin/sh', join(shOnly, 'sh'));
    expect((await runSh(args, edit(1), { PATH: shOnly })).code).toBe(0);
    // Strict mode is the Node client's.
    expect((await runSh(args, edit(2), { CKPT_HOOK_STRICT: '1' })).code).toBe(0);
    // A token the daemon refuses (401): in-process, not posted again.
    const tokenFile = join(storeDir, 'daemon', 'token');
    const token = await readFile(tokenFile, 'utf8');
    await writeFile(tokenFile, `${'0'.repeat(64)}\n`);
    expect((await runSh(args, edit(3))).code).toBe(0);
    await writeFile(tokenFile, token);
    // The daemon gone (its claim names a dead process, or none).
    await daemon!.close();
    daemon = undefined;
    await mkdir(join(storeDir, 'daemon'), { recursive: true });
    await writeFile(join(storeDir, 'daemon', 'daemon.json'), JSON.stringify({ pid: 2 ** 22 + 1, host: '127.0.0.1', port: 9 }));
    expect((await runSh(args, edit(4))).code).toBe(0);
    expect(await checkpoints(s.session_id)).toEqual(['0.1:Write', '0.2:Write', '0.3:Write', '0.4:Write']);
  });

  it("a size cap other than the daemon's (CKPT_MAX_FILE_SIZE): recorded with it, by the Node client; the same cap: through the daemon", async () => {
    const s = claudeSession(ws);
    const args = [process.execPath, '--store', storeDir, 'hook', 'claude'];
    expect((await runSh(args, ev.sessionStart(s))).code).toBe(0);
    await writeFile(join(ws, 'big.txt'), 'x'.repeat(3000));
    const write = (n: number) => ev.preToolUse(s, 'Write', { file_path: join(ws, 'big.txt'), content: 'y' }, `toolu_${n}`);
    // In bytes and in another spelling (the shell client leaves that to the Node one); then none: the daemon's default.
    for (const [n, cap] of [[1, '1024'], [2, '1K'], [3, undefined]] as const) {
      expect((await runSh(args, write(n), cap ? { CKPT_MAX_FILE_SIZE: cap } : {})).code).toBe(0);
    }
    const session = await (await store.openWorkspace(ws)).get(agentSessionId('claude', s.session_id));
    const images = (await session.events()).filter((e) => e.type === 'capture').map((e) => (e as unknown as { files: { state: string; why?: string }[] }).files[0]);
    expect(images).toEqual([{ path: 'big.txt', state: 'skipped', why: 'too-large', bytes: 3000 }, { path: 'big.txt', state: 'skipped', why: 'too-large', bytes: 3000 }, expect.objectContaining({ path: 'big.txt', state: 'file', bytes: 3000 })]);
    // The shell client and the engine agree on the default cap.
    expect(await readFile(SH_CLIENT, 'utf8')).toContain(`cap=${DEFAULT_MAX_BLOB_BYTES}\n`);
  });

  it.skipIf(!CAN_SEE_ZOMBIES)('a claim whose process is a zombie is dead: the token is not sent to its port', async () => {
    // A zombie (killed, never reaped) answers kill -0; whatever holds the claimed port now must not get the token.
    const zombie = await makeZombie();
    const heard: string[] = [];
    const squatter = createServer((req, res) => {
      heard.push(req.headers.authorization ?? '');
      res.end('{}');
    });
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    try {
      await daemon!.close();
      daemon = undefined;
      const port = (squatter.address() as AddressInfo).port;
      await writeFile(join(storeDir, 'daemon', 'daemon.json'), `${JSON.stringify({ pid: zombie.pid, url: `http://127.0.0.1:${port}`, host: '127.0.0.1', port })}\n`);
      const s = claudeSession(ws);
      const args = [process.execPath, '--store', storeDir, 'hook', 'claude'];
      expect((await runSh(args, ev.sessionStart(s))).code).toBe(0);
      expect((await runSh(args, ev.preToolUse(s, 'Write', { file_path: join(ws, 'z.txt'), content: 'x' }, 'toolu_z'))).code).toBe(0);
      expect(heard).toEqual([]);
      expect(await checkpoints(s.session_id)).toEqual(['0.1:Write']);
    } finally {
      zombie.release();
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it('knows every agent table\'s project-folder variables and the agents that always get a JSON answer', async () => {
    const text = await readFile(SH_CLIENT, 'utf8');
    const listed = /for name in ([A-Z_ ]+); do/.exec(text)![1]!.split(' ');
    expect(new Set(listed)).toEqual(new Set(Object.values(AGENTS).flatMap((a) => a.projectDirEnv)));
    expect(/case \$agent in ([a-z|]+)\) printf '\{\}\\n'/.exec(text)![1]!.split('|')).toEqual([...JSON_ANSWER_AGENTS]);
  });

  // .ci/run installs shellcheck; a developer without it sees this test skipped, never passed.
  it.skipIf(spawnSync('shellcheck', ['--version']).status !== 0)('is POSIX sh that shellcheck passes', () => {
    const r = spawnSync('shellcheck', ['-s', 'sh', SH_CLIENT], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
