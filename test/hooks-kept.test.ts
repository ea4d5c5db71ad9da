// The agent's git hygiene and ckpt's own hook settings (DESIGN §10, fourth session): `git clean -fdx`
// in a project where `.claude/` is not committed removed the settings holding ckpt's hooks, and every
// later prompt went unrecorded (a round-6 probe with real Claude Code; its real-agent check is in
// test/agents/claude-scenarios.ts). The scan after the tool puts the file back as a recorded restore
// — but not a file `git stash -u` took: `git stash pop` brings it back, and would fail on a copy.
// Through the installed hook commands, in-process (test/agents/ runs the daemon path).
import { execSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { claudeEvents as ev, claudeSession, type ClaudeSession } from './fixtures/claude-events.js';
import { loadInstalledHooks, type InstalledHooks } from './helpers/agent-hooks.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

process.env.CKPT_NO_DAEMON = '1';

let dirs: TempDirs;
let hooks: InstalledHooks;
let s: ClaudeSession;
let settings: string;
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace });
const sh = (command: string) => execSync(command, { cwd: dirs.workspace, shell: '/bin/sh', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' } }).toString();

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-kept-');
  await writeFile(join(dirs.workspace, 'a.txt'), 'a\n');
  sh('git init -q -b main && git add a.txt && git commit -qm init');
  expect((await ckpt(['init', 'claude', '--project', '--json'])).code).toBe(0);
  settings = join(dirs.workspace, '.claude', 'settings.json');
  hooks = await loadInstalledHooks(settings, dirs.workspace, 'CLAUDE_PROJECT_DIR');
  s = claudeSession(dirs.workspace);
  await hooks.fire(ev.sessionStart(s));
  await hooks.fire(ev.userPromptSubmit(s, 'one'));
});
afterEach(() => dirs.cleanup());

/** A Bash tool call as Claude Code makes it; the answers of its PostToolUse hook. */
async function bash(command: string): Promise<string> {
  const input = { command, description: command };
  await hooks.fire(ev.preToolUse(s, 'Bash', input, 'toolu_1'));
  sh(command);
  const after = await hooks.fire(ev.postToolUse(s, 'Bash', input, 'toolu_1', { stdout: '', stderr: '', interrupted: false, isImage: false }));
  for (const r of after) expect(r.code).toBe(0);
  return after.map((r) => r.stdout).join('');
}

it('git clean -fdx: the settings holding ckpt\'s hooks are put back (recorded), and the next prompt is recorded', async () => {
  const text = await readFile(settings, 'utf8');
  const said = await bash('git clean -fdxq');
  expect(JSON.parse(said).systemMessage).toMatch(/\.claude\/settings\.json held ckpt's hooks and was removed by 1\.1; ckpt put it back/);
  expect(await readFile(settings, 'utf8')).toBe(text);
  await hooks.fire(ev.userPromptSubmit(s, 'two'));
  const log = (await ckpt(['log', '--json'])).json();
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual(['one', 'two']);
  expect(log.checkpoints.map((c: { tag: string; type?: string }) => c.tag)).toEqual(['1.1', '1.2']);
  // Turn 2 starts with the file there, as it was at prompt 1.
  expect((await ckpt(['restore', '1', '--json'])).code).toBe(0);
  expect(await readFile(settings, 'utf8')).toBe(text);
});

it('git stash -u: not put back (git stash pop brings it back and would fail on a copy); the agent is told', async () => {
  const text = await readFile(settings, 'utf8');
  const said = await bash('git stash -u -q');
  expect(JSON.parse(said).systemMessage).toMatch(/\.claude\/settings\.json held ckpt's hooks and was stashed by 1\.1 \(git stash -u\)/);
  await expect(readFile(settings, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  sh('git stash pop -q');
  expect(await readFile(settings, 'utf8')).toBe(text);
});
