// `ckpt init codex --user` with the daemon running, in a second project. Codex names no project
// folder, so the daemon takes the workspace from the event's cwd — and refuses one the store does not
// know (a user-scope hook's rule, issue 27 item 6: a token must not make the daemon copy any folder).
// The thin client then records in its own process, as it does when no daemon runs: before, the daemon
// answered "not recorded" and every hook of the second project recorded nothing, while the same
// install with no daemon running recorded it (DESIGN §10, fourth session).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadInstalledHooks } from './helpers/agent-hooks.js';
import { runCli } from './helpers/cli.js';
import { daemonWorld } from './helpers/daemon-world.js';
import { stopProcess } from './helpers/stop-process.js';

const world = daemonWorld('ckpt-codex-user-');

const ckpt = (args: string[], cwd: string) => runCli(['--store', world.dirs.store, ...args], { cwd, env: { HOME: world.home } });

function codexEvents(project: string, sid: string) {
  const base = (hook_event_name: string) => ({ session_id: sid, transcript_path: null, cwd: project, hook_event_name, model: 'gpt-5.5', permission_mode: 'bypassPermissions' });
  const patch = { command: ['*** Begin Patch', '*** Update File: a.txt', '@@', '-alpha', '+ALPHA', '*** End Patch', ''].join('\n') };
  return {
    start: { ...base('SessionStart'), source: 'startup' },
    prompt: (text: string) => ({ ...base('UserPromptSubmit'), turn_id: `t-${text}`, prompt: text }),
    pre: { ...base('PreToolUse'), turn_id: 't-edit', tool_name: 'apply_patch', tool_input: patch, tool_use_id: 'c1' },
    post: { ...base('PostToolUse'), turn_id: 't-edit', tool_name: 'apply_patch', tool_input: patch, tool_use_id: 'c1', tool_response: 'Exit code: 0\nOutput:\n' },
  };
}

it('a second project of a user-scope Codex install is recorded while the daemon runs, and restores', async () => {
  const init = await ckpt(['init', 'codex', '--user', '--json'], world.dirs.workspace);
  expect(init.code, init.stderr).toBe(0);
  const settings = join(world.home, '.codex', 'hooks.json');
  // The first project: its prompt's hook starts the daemon.
  const first = await loadInstalledHooks(settings, world.dirs.workspace, 'CODEX_HAS_NO_PROJECT_DIR_VARIABLE');
  const a = codexEvents(world.dirs.workspace, '01a234ba-0000-7000-8000-00000000000a');
  await first.fire(a.start);
  await first.fire(a.prompt('one'));
  let claim: { pid?: number } = {};
  for (let i = 0; i < 200 && !claim.pid; i++) {
    await new Promise((r) => setTimeout(r, 50));
    claim = JSON.parse((await readFile(join(world.dirs.store, 'daemon', 'daemon.json'), 'utf8').catch(() => undefined)) ?? '{}') as { pid?: number };
  }
  expect(claim.pid).toBeGreaterThan(0);

  // The second project, which the store has never seen: every hook goes to the running daemon first.
  const second = join(world.dirs.base, 'second');
  await mkdir(second);
  await writeFile(join(second, 'a.txt'), 'alpha\n');
  const hooks = await loadInstalledHooks(settings, second, 'CODEX_HAS_NO_PROJECT_DIR_VARIABLE');
  const b = codexEvents(second, '01a234ba-0000-7000-8000-00000000000b');
  for (const event of [b.start, b.prompt('two'), b.pre]) {
    for (const r of await hooks.fire(event)) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  }
  await writeFile(join(second, 'a.txt'), 'ALPHA\n'); // what Codex's apply_patch writes
  for (const r of await hooks.fire(b.post)) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  expect(JSON.parse((await readFile(join(world.dirs.store, 'daemon', 'daemon.json'), 'utf8'))).pid).toBe(claim.pid); // the daemon ran throughout

  const log = (await ckpt(['log', '--files', '--json'], second)).json();
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual(['two']);
  expect(log.checkpoints.map((c: { tag: string; tool: string }) => `${c.tag}:${c.tool}`)).toEqual(['1.1:apply_patch']);
  const restored = await ckpt(['restore', '1', '--json'], second);
  expect(restored.code, restored.stderr).toBe(0);
  expect(await readFile(join(second, 'a.txt'), 'utf8')).toBe('alpha\n');
  // Nothing failed on the way (the daemon's refusal is the client's cue, not a hook failure).
  expect(await readFile(join(world.dirs.store, 'hooks.log'), 'utf8').catch(() => '')).toBe('');
});

it('a stopped daemon (Ctrl-Z, SIGSTOP) is not waited on: each hook records in its own process at once (round-6 probe: two minutes per hook)', async () => {
  const init = await ckpt(['init', 'codex', '--user', '--json'], world.dirs.workspace);
  expect(init.code, init.stderr).toBe(0);
  const hooks = await loadInstalledHooks(join(world.home, '.codex', 'hooks.json'), world.dirs.workspace, 'CODEX_HAS_NO_PROJECT_DIR_VARIABLE');
  await writeFile(join(world.dirs.workspace, 'a.txt'), 'alpha\n');
  const a = codexEvents(world.dirs.workspace, '01a234ba-0000-7000-8000-00000000000c');
  await hooks.fire(a.start);
  let claim: { pid?: number } = {};
  for (let i = 0; i < 200 && !claim.pid; i++) {
    await new Promise((r) => setTimeout(r, 50));
    claim = JSON.parse((await readFile(join(world.dirs.store, 'daemon', 'daemon.json'), 'utf8').catch(() => undefined)) ?? '{}') as { pid?: number };
  }
  expect(claim.pid).toBeGreaterThan(0);
  await stopProcess(claim.pid!);
  try {
    const started = Date.now();
    for (const event of [a.prompt('one'), a.pre]) {
      for (const r of await hooks.fire(event)) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    }
    await writeFile(join(world.dirs.workspace, 'a.txt'), 'ALPHA\n');
    for (const r of await hooks.fire(a.post)) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(Date.now() - started).toBeLessThan(30_000); // the client's answer timeout is 120 s per hook
  } finally {
    process.kill(claim.pid!, 'SIGCONT');
  }
  const log = (await ckpt(['log', '--json'], world.dirs.workspace)).json();
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual(['one']);
  expect(log.checkpoints.map((c: { tag: string; tool: string }) => `${c.tag}:${c.tool}`)).toEqual(['1.1:apply_patch']);
  expect((await ckpt(['restore', '1', '--json'], world.dirs.workspace)).code).toBe(0);
  expect(await readFile(join(world.dirs.workspace, 'a.txt'), 'utf8')).toBe('alpha\n');
}, 120_000);
