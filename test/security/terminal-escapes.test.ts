// SECURITY promise 7 on the CLI: names, prompts and titles come from the workspace and the agent.
// Printed for a person, their control characters are shown (`\x1b`), never sent to the terminal: a
// file name or a prompt could otherwise retitle the window, clear the screen or forge lines of `log`.
// `--json` carries them escaped by JSON, unchanged.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { makeTempDirs, type TempDirs } from '../helpers/temp.js';

let dirs: TempDirs;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-sec-esc-');
});
afterEach(() => dirs.cleanup());

const NAME = 'evil\x1b[31mred\x1b]0;x\x07name';
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

it('log, diff, status and session list show control characters of names, prompts and titles visibly', async () => {
  const ckpt = (...args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace });
  expect((await ckpt('session', 'new', '--title', 'T\x1b]0;pwned\x07')).code).toBe(0);
  expect((await ckpt('turn', '--text', 'p\x1b[2J')).code).toBe(0);
  await writeFile(join(dirs.workspace, NAME), 'x\n');
  expect((await ckpt('scan')).code).toBe(0);
  expect((await ckpt('turn')).code).toBe(0);
  for (const args of [['log', '--files'], ['diff', '1'], ['status'], ['session', 'list'], ['restore', '1', '--dry-run']]) {
    const run = await ckpt(...args);
    expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    const printed = run.stdout + run.stderr;
    expect(printed, args.join(' ')).not.toMatch(RAW);
    // A name is shown quoted with JSON's escapes (\u001b), a prompt or a title with \x1b.
    expect(printed, args.join(' ')).toMatch(/\\x1b|\\u001b/);
  }
  // JSON keeps the name exactly (escaped by JSON itself).
  const json = await ckpt('log', '--files', '--json');
  expect(JSON.stringify(JSON.parse(json.stdout))).toContain(JSON.stringify(NAME).slice(1, -1));
});

it('a name with a line break cannot forge lines: every listing shows it quoted on one line', async () => {
  const ckpt = (...args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace });
  // What the forged line would have said: a plan line deleting a file the restore does not touch.
  const forged = 'x\n  delete main.ts';
  await writeFile(join(dirs.workspace, 'keep.txt'), 'k\n');
  expect((await ckpt('session', 'new')).code).toBe(0);
  expect((await ckpt('turn')).code).toBe(0);
  await writeFile(join(dirs.workspace, forged), 'x\n');
  expect((await ckpt('scan')).code).toBe(0);
  await writeFile(join(dirs.workspace, forged), 'changed\n');
  for (const args of [['log', '--files'], ['diff', '1'], ['status'], ['restore', '1', '--dry-run'], ['show', '1.1'], ['owner', forged]]) {
    const run = await ckpt(...args);
    expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    const lines = (run.stdout + run.stderr).split('\n');
    expect(lines, args.join(' ')).not.toContain('  delete main.ts');
    expect(lines.some((l) => l.includes('"x\\n  delete main.ts"')), `${args.join(' ')}:\n${run.stdout}${run.stderr}`).toBe(true);
  }
});
