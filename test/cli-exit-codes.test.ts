// Printed codes and exit codes agree (issue 10 items 7, 8): an error is converted once, so a node
// errno error that prints `IO` exits 6; empty --store/--session/--workspace values are
// INVALID_ARGUMENT (a script's unset variable never falls back to the default); a store folder that
// cannot exist (`/proc/x`, under a file) fails fast.
import { spawnSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../src/errors.js';
import { CKPT_BIN, runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-exit-');
});
afterEach(() => dirs.cleanup());

/** Runs ckpt with --json and checks the printed code against the exit code; returns the code. */
async function failure(args: string[]): Promise<ErrorCode> {
  const r = await runCli([...args, '--json'], { cwd: dirs.workspace });
  expect(r.stdout).toBe('');
  const code = JSON.parse(r.stderr).error.code as ErrorCode;
  expect(r.code, `${args.join(' ')} printed ${code}`).toBe(ERROR_CODES[code].exit);
  return code;
}

describe('exit codes', () => {
  it('node errors print IO and exit 6: store path is a file, under a file, in /proc, a symlink-loop workspace, a path over PATH_MAX', async () => {
    const file = join(dirs.base, 'file');
    await writeFile(file, 'x');
    expect(await failure(['--store', file, 'session', 'list'])).toBe('IO');
    expect(await failure(['--store', join(file, 'sub'), 'session', 'list'])).toBe('IO');
    const started = Date.now();
    expect(await failure(['--store', '/proc/ckpt-no-such/x', 'session', 'new'])).toBe('IO');
    expect(Date.now() - started).toBeLessThan(8_000);
    // A read command makes nothing, so there it is simply no store (cli-store-missing.test.ts).
    expect(await failure(['--store', '/proc/ckpt-no-such/x', 'session', 'list'])).toBe('NOT_FOUND');
    expect((await runCli(['--store', dirs.store, 'session', 'new'], { cwd: dirs.workspace })).code).toBe(0);
    await symlink('loop', join(dirs.base, 'loop'));
    expect(await failure(['--store', dirs.store, '--workspace', join(dirs.base, 'loop'), 'session', 'list'])).toBe('IO');
    await mkdir(join(dirs.workspace, 'd'));
    await symlink('l2', join(dirs.workspace, 'd', 'l1'));
    await symlink('l1', join(dirs.workspace, 'd', 'l2'));
    const looped = await failure(['--store', dirs.store, 'capture', 'd/l1/x']);
    expect(['IO', 'PATH_ESCAPE']).toContain(looped);
    const tooLong = join(dirs.workspace, ...Array.from({ length: 25 }, () => 'a'.repeat(200)));
    expect(['IO', 'INVALID_ARGUMENT']).toContain(await failure(['--store', dirs.store, '--workspace', tooLong, 'session', 'list']));
  });

  it('a current folder that was removed: commands that need it fail IO naming it (no stack trace), --version answers, a hook exits 0', async () => {
    const gone = join(dirs.workspace, 'gone');
    await mkdir(gone);
    // Started inside the folder, which is removed before ckpt runs (an agent's rm -rf under the user's shell).
    const inRemoved = (args: string, input = '') =>
      spawnSync('sh', ['-c', `cd "$1" && rmdir "$1" && exec "$2" "$3" --store "$4" ${args}`, 'sh', gone, process.execPath, CKPT_BIN, dirs.store], { input, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    const status = inRemoved('status --json');
    expect(status.status).toBe(6);
    expect(JSON.parse(status.stderr).error).toMatchObject({ code: 'IO', message: expect.stringContaining(`${gone} no longer exists`), data: { errno: 'ENOENT', path: gone } });
    await mkdir(gone);
    const human = inRemoved('log');
    expect(human.status).toBe(6);
    expect(human.stderr).toMatch(/^error \[IO\] the current folder .* no longer exists/);
    expect(human.stderr).not.toMatch(/\bat /);
    await mkdir(gone);
    expect(inRemoved('--version')).toMatchObject({ status: 0, stderr: '' });
    await mkdir(gone);
    const hook = inRemoved('hook claude', JSON.stringify({ hook_event_name: 'UserPromptSubmit', session_id: 'g', prompt: 'x', cwd: dirs.workspace }));
    expect(hook.status, hook.stderr).toBe(0);
    expect(hook.stderr).not.toMatch(/uv_cwd/);
  });

  it('empty --store, --session, --workspace and session ids are INVALID_ARGUMENT', async () => {
    expect((await runCli(['--store', dirs.store, 'session', 'new'], { cwd: dirs.workspace })).code).toBe(0);
    expect(await failure(['--store', '', 'session', 'list'])).toBe('INVALID_ARGUMENT');
    expect(await failure(['--store', dirs.store, '--session', '', 'log'])).toBe('INVALID_ARGUMENT');
    expect(await failure(['--store', dirs.store, '--workspace', '', 'log'])).toBe('INVALID_ARGUMENT');
    expect(await failure(['--store', dirs.store, 'session', 'show', ''])).toBe('INVALID_ARGUMENT');
  });

  it('a usage error of `ckpt hook` (an unknown agent or flag: another ckpt version\'s hooks) prints its code as every command does and exits 0, 2 in strict mode', async () => {
    // Exit 2 from a PreToolUse hook blocks the tool call in Claude Code: a hook never breaks its agent.
    const message = 'error [INVALID_ARGUMENT] unknown agent "nosuchagent": known agents are claude, codex, copilot, cursor, gemini, opencode\n';
    const lean = await runCli(['--store', dirs.store, 'hook', 'nosuchagent'], { cwd: dirs.workspace, input: '{}' });
    expect({ code: lean.code, stdout: lean.stdout, stderr: lean.stderr }).toEqual({ code: 0, stdout: '', stderr: message });
    const flag = await runCli(['--store', dirs.store, 'hook', 'claude', '--bogus'], { cwd: dirs.workspace, input: '{}' });
    expect(flag.code).toBe(0);
    expect(flag.stderr).toMatch(/^error \[INVALID_ARGUMENT\] unknown option '--bogus'/);
    const json = await runCli(['--store', dirs.store, 'hook', 'nosuchagent', '--json'], { cwd: dirs.workspace, input: '{}' });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stderr).error.code).toBe('INVALID_ARGUMENT');
    const strict = { CKPT_HOOK_STRICT: '1' };
    expect((await runCli(['--store', dirs.store, 'hook', 'nosuchagent'], { cwd: dirs.workspace, input: '{}', env: strict })).code).toBe(2);
    expect((await runCli(['--store', dirs.store, 'hook', 'claude', '--bogus'], { cwd: dirs.workspace, input: '{}', env: strict })).code).toBe(2);
    expect((await runCli(['--store', dirs.store, 'hook', 'nosuchagent', '--json'], { cwd: dirs.workspace, input: '{}', env: strict })).code).toBe(2);
  });
});

describe('a reader that stops early', () => {
  it('`ckpt cat … | head -c 10`: the closed pipe is no crash (no EPIPE stack), the command exits 0', async () => {
    const env = { ...process.env, CKPT_STORE: dirs.store, NO_COLOR: '1' };
    const ckpt = (...args: string[]) => spawnSync(process.execPath, [CKPT_BIN, ...args], { cwd: dirs.workspace, env, encoding: 'utf8' });
    expect(ckpt('session', 'new').status).toBe(0);
    await writeFile(join(dirs.workspace, 'big.txt'), 'line of a large file\n'.repeat(100_000)); // 2 MB: more than a pipe holds
    expect(ckpt('turn').status).toBe(0);
    expect(ckpt('capture', 'big.txt').status).toBe(0);
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${CKPT_BIN}" cat 1 big.txt | head -c 10 >/dev/null; echo "exit \${PIPESTATUS[0]}" >&2`], { cwd: dirs.workspace, env, encoding: 'utf8' });
    expect(r.stderr).not.toContain('EPIPE');
    expect(r.stderr.trim()).toBe('exit 0');
  });
});
