// The daemon's life cycle under the installed Claude Code hooks (h7 probe, 2026-12-05).
// 1. A stopped daemon (Ctrl-Z on a foreground `ckpt serve`, SIGSTOP) under the default Claude Code install
// (h7 probe, 2026-12-05): the thin client treats it as not running and records in-process — but the
// squatted-port check then found "something" listening on the port the installed HTTP hooks name (the
// stopped daemon itself, whose port the kernel still accepts connections on) and stopped every prompt
// saying another process held ckpt's port and to restart the agent — which never helped. Letting the
// prompt go on is no better: Claude Code then waits on each tool call's HTTP hook to the stopped
// daemon (over 300 s measured). The prompt's hook now stops the prompt saying what is wrong and how to go on.
// 2. `init claude --http` with no daemon running when a Claude Code process starts (killed, stopped, a
// reboot): the SessionStart command hook started it detached and returned; the prompt's HTTP hook a
// moment later was refused (Claude Code goes on silently) and the prompt had no turn.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadInstalledHooks } from './helpers/agent-hooks.js';
import { stopStoreDaemon } from './agents/harness/stop-store-daemon.js';
import { runCli } from './helpers/cli.js';
import { daemonWorld } from './helpers/daemon-world.js';
import { stopProcess } from './helpers/stop-process.js';

const world = daemonWorld('ckpt-claude-stopped-');

const ckpt = (args: string[]) => runCli(['--store', world.dirs.store, ...args], { cwd: world.dirs.workspace, env: { HOME: world.home } });

/** The default install (`ckpt init claude`), a.txt written, a session started (which starts the daemon); its hooks and event base. */
async function startSession(n: number) {
  const init = await ckpt(['init', 'claude', '--json']);
  expect(init.code, init.stderr).toBe(0);
  await writeFile(join(world.dirs.workspace, 'a.txt'), 'alpha\n');
  const hooks = await loadInstalledHooks(join(world.dirs.workspace, '.claude', 'settings.local.json'), world.dirs.workspace, 'CLAUDE_PROJECT_DIR');
  const base = { session_id: `0b1c2d3e-0000-4000-8000-00000000000${n}`, transcript_path: '/dev/null', cwd: world.dirs.workspace };
  for (const r of await hooks.fire({ ...base, hook_event_name: 'SessionStart', source: 'startup' })) expect(r.code, r.stderr).toBe(0);
  return { hooks, base };
}

/** The pid in the daemon's claim once it listens (undefined after 10 s). */
async function claimPid(): Promise<number | undefined> {
  for (let i = 0; i < 200; i++) {
    const claim = JSON.parse((await readFile(join(world.dirs.store, 'daemon', 'daemon.json'), 'utf8').catch(() => undefined)) ?? '{}') as { pid?: number; port?: number };
    if (claim.pid && claim.port) return claim.pid;
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

it("a stopped daemon's own port is not taken for a squatter: the prompt is stopped with the daemon's pid and how to continue it, and goes through once it is continued", async () => {
  const { hooks, base } = await startSession(1);
  const pid = await claimPid();
  expect(pid).toBeGreaterThan(0);
  await stopProcess(pid!);
  try {
    const runs = await hooks.fire({ ...base, hook_event_name: 'UserPromptSubmit', prompt: 'one' });
    expect(runs).toHaveLength(1);
    expect(runs[0]!.code).toBe(2);
    expect(runs[0]!.stderr).toContain(`daemon (pid ${pid}) is stopped`);
    expect(runs[0]!.stderr).toContain(`kill -CONT ${pid}`);
    expect(runs[0]!.stderr).not.toMatch(/listens on port/);
  } finally {
    process.kill(pid!, 'SIGCONT');
  }
  const again = await hooks.fire({ ...base, hook_event_name: 'UserPromptSubmit', prompt: 'two' });
  expect(again.map((r) => ({ code: r.code, stderr: r.stderr }))).toEqual([{ code: 0, stderr: '' }]);
  const log = (await ckpt(['log', '--json'])).json();
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual(['two']);
}, 60_000);

it('--http: the session start that starts the daemon answers once it listens, so the first prompt\'s HTTP hook reaches it and is recorded', async () => {
  const init = await ckpt(['init', 'claude', '--http', '--json']);
  expect(init.code, init.stderr).toBe(0);
  // The daemon init started runs in the background: init says so (it did not).
  expect(init.json().notes).toContainEqual(expect.stringMatching(/^started ckpt's daemon for the store .* \(pid \d+, http:\/\/127\.0\.0\.1:\d+\); it runs in the background/));
  await stopStoreDaemon(world.dirs.store); // as after a reboot or an idle exit
  await writeFile(join(world.dirs.workspace, 'a.txt'), 'alpha\n');
  const hooks = await loadInstalledHooks(join(world.dirs.workspace, '.claude', 'settings.local.json'), world.dirs.workspace, 'CLAUDE_PROJECT_DIR');
  const base = { session_id: '0b1c2d3e-0000-4000-8000-000000000002', transcript_path: '/dev/null', cwd: world.dirs.workspace };
  for (const r of await hooks.fire({ ...base, hook_event_name: 'SessionStart', source: 'startup' })) expect(r.code, r.stderr).toBe(0);
  // Claude Code sends the prompt's HTTP hook right after the session start's command hook returned.
  const runs = await hooks.fire({ ...base, hook_event_name: 'UserPromptSubmit', prompt: 'one' });
  expect(runs.map((r) => r.code)).toEqual([200]);
  const log = (await ckpt(['log', '--json'])).json();
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual(['one']);
}, 60_000);

it("a daemon SIGKILLed while its session lock lingers: the next hook takes the lock over at once (it names its dead holder), not after the 3 s stale limit", async () => {
  const { hooks, base } = await startSession(3);
  // The daemon answers a prompt and keeps the session's lock for its next caller (200 ms); killed
  // within that, it leaves the lock file behind. (Tried again when the kill came too late.)
  let left: string[] = [];
  let killed: number | undefined;
  for (let attempt = 0; attempt < 5 && left.length === 0; attempt++) {
    const pid = await claimPid();
    expect(pid).toBeGreaterThan(0);
    killed = pid;
    for (const r of await hooks.fire({ ...base, hook_event_name: 'UserPromptSubmit', prompt: `p${attempt}` })) expect(r.code, r.stderr).toBe(0);
    process.kill(pid!, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 100));
    left = (await readdir(world.dirs.store, { recursive: true })).map(String).filter((f) => f.endsWith('events.jsonl.ckpt-lock'));
  }
  expect(left).toHaveLength(1);
  // The next prompt's command hook finds the daemon dead and records in-process; without the takeover
  // it waited for the lock past its timeout and warned LOCKED (tool events go to the daemon by HTTP).
  const runs = await hooks.fire({ ...base, hook_event_name: 'UserPromptSubmit', prompt: 'after the kill' }, { env: { CKPT_HOOK_LOCK_TIMEOUT_MS: '1000' } });
  expect(runs.map((r) => ({ code: r.code, locked: r.stdout.includes('LOCKED') }))).toEqual([{ code: 0, locked: false }]);
  const log = (await ckpt(['log', '--json'])).json();
  expect(log.turns.at(-1).text).toBe('after the kill');
  // That prompt's hook also started a new daemon, detached: wait for its claim, or afterEach (which
  // stops the daemon the claim names) found the killed one and the new one outlived the test by its
  // 30-minute idle exit, serving a removed store.
  for (let i = 0; i < 200; i++) {
    const pid = await claimPid();
    if (pid !== undefined && pid !== killed) break;
    await new Promise((r) => setTimeout(r, 50));
  }
}, 90_000);
