// A prompt that arrives before its session's baseline (DESIGN §10 "A prompt before its session's
// baseline"): the real Copilot CLI fires SessionStart and UserPromptSubmit at once, so the first prompt's
// hook may find the session made but its baseline not yet written. That turn must still look at the
// workspace (`looked`): without it `ckpt restore 1` after a hand edit neither refused it as drift nor
// put it back — exit 0 with the hand edit left (a real-Copilot probe, seeds 2–4).
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { loadFlatHooks, type FlatHooks } from './helpers/flat-hooks.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

// The in-process path of `ckpt hook` (the daemon runs the same runHook).
process.env.CKPT_NO_DAEMON = '1';

let dirs: TempDirs;
let hooks: FlatHooks;
const SID = '5f0c1d2e-race-4b1a-9c3d-000000000001';
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace, env: { HOME: join(dirs.base, 'home') } });
const base = (hook_event_name: string) => ({ hook_event_name, session_id: SID, timestamp: '2026-12-06T07:09:17.961Z', cwd: dirs.workspace });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-turn-baseline-');
  await writeFile(join(dirs.workspace, 'notes.md'), 'original\n');
  expect((await ckpt(['init', 'copilot', '--json'])).code).toBe(0);
  hooks = await loadFlatHooks(join(dirs.workspace, '.github', 'hooks', 'ckpt.json'), dirs.workspace, 'COPILOT_PROJECT_DIR', 'bash');
});
afterEach(() => dirs.cleanup());

it('a prompt whose session has no baseline yet takes it and looks: restore 1 refuses a later hand edit as drift, --force puts it back', async () => {
  for (const r of await hooks.fire('SessionStart', { ...base('SessionStart'), source: 'new', initial_prompt: 'go' })) expect(r.code).toBe(0);
  // The state the concurrent UserPromptSubmit saw: the session exists, SessionStart's baseline is not written yet.
  const [wid] = await readdir(join(dirs.store, 'workspaces'));
  await rm(join(dirs.store, 'workspaces', wid!, 'scan-index.bin'));
  for (const r of await hooks.fire('UserPromptSubmit', { ...base('UserPromptSubmit'), prompt: 'go' })) expect(r.code).toBe(0);
  const events = (await readFile(join(dirs.store, 'workspaces', wid!, 'sessions', `copilot-${SID}`, 'events.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  expect(events.find((e) => e.type === 'turn')).toMatchObject({ turn: 1, looked: true });

  await writeFile(join(dirs.workspace, 'notes.md'), 'hand edit after prompt 1\n');
  const refused = await ckpt(['restore', '1', '--yes', '--json']);
  expect(refused.code).toBe(4);
  expect(JSON.parse(refused.stderr).error.code).toBe('DRIFT');
  expect(await readFile(join(dirs.workspace, 'notes.md'), 'utf8')).toBe('hand edit after prompt 1\n');
  const forced = await ckpt(['restore', '1', '--yes', '--force', '--json']);
  expect(forced.code).toBe(0);
  expect(await readFile(join(dirs.workspace, 'notes.md'), 'utf8')).toBe('original\n');
  expect((await ckpt(['restore', forced.json().undo, '--yes', '--json'])).code).toBe(0);
  expect(await readFile(join(dirs.workspace, 'notes.md'), 'utf8')).toBe('hand edit after prompt 1\n');
});
