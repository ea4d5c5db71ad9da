// Codex CLI's hook payloads replayed through the hooks `ckpt init codex --project` installs (issue 30):
// the payload shapes are the ones the real binary sent (@openai/codex 0.169.0; its real runs are in
// test/agents/codex.test.ts). Here the hostile and odd cases, which a real model is not scripted to
// send: a patch naming a file outside the project, a patch that is not a string, a NUL in a header,
// text that is no patch at all (recorded by a scan), a patch Codex could not apply (no PostToolUse:
// settled at Stop).
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { loadInstalledHooks, type InstalledHooks } from './helpers/agent-hooks.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

// The in-process path of `ckpt hook` (what the thin client falls back to); test/agents/ runs the daemon path.
process.env.CKPT_NO_DAEMON = '1';

let dirs: TempDirs;
let hooks: InstalledHooks;
const SID = '01a234ba-294a-7483-864b-32bdc4e1a81d';
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace, env: { HOME: join(dirs.base, 'home') } });

const base = (hook_event_name: string) => ({
  session_id: SID,
  transcript_path: `/home/u/.codex/sessions/2026/12/02/rollout-${SID}.jsonl`,
  cwd: dirs.workspace,
  hook_event_name,
  model: 'gpt-5.5',
  permission_mode: 'bypassPermissions',
});
const turnId = '01a234ba-29ae-7582-86d4-6dae482d3664';
const pre = (tool_name: string, tool_input: Record<string, unknown>, id: string) => ({ ...base('PreToolUse'), turn_id: turnId, tool_name, tool_input, tool_use_id: id });
const post = (tool_name: string, tool_input: Record<string, unknown>, id: string) => ({ ...pre(tool_name, tool_input, id), hook_event_name: 'PostToolUse', tool_response: 'Exit code: 0\nOutput:\n' });
const patch = (...lines: string[]) => ({ command: ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n') });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-codex-');
  await mkdir(join(dirs.workspace, '.codex'));
  // The user's own hooks.json: kept, in its formatting.
  await writeFile(join(dirs.workspace, '.codex', 'hooks.json'), '{\n    "hooks": {\n        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]\n    }\n}\n');
  const init = await ckpt(['init', 'codex', '--project', '--json']);
  expect(init.code, init.stderr).toBe(0);
  hooks = await loadInstalledHooks(join(dirs.workspace, '.codex', 'hooks.json'), dirs.workspace, 'CODEX_HAS_NO_PROJECT_DIR_VARIABLE');
  await writeFile(join(dirs.workspace, 'a.txt'), 'alpha\n');
  await quiet({ ...base('SessionStart'), source: 'startup' });
  await quiet({ ...base('UserPromptSubmit'), turn_id: turnId, prompt: 'go' });
});
afterEach(() => dirs.cleanup());

async function quiet(event: Record<string, unknown>): Promise<void> {
  for (const r of await hooks.fire(event)) expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
}

async function eventsOf(): Promise<{ type: string; [k: string]: unknown }[]> {
  const [wid] = await readdir(join(dirs.store, 'workspaces'));
  const text = await readFile(join(dirs.store, 'workspaces', wid!, 'sessions', `codex-${SID}`, 'events.jsonl'), 'utf8').catch(() => '');
  return text.trim() === '' ? [] : text.trim().split('\n').map((l) => JSON.parse(l));
}
const hookLog = async () => (await readFile(join(dirs.store, 'hooks.log'), 'utf8').catch(() => '')).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { code: string; reason?: string });

it('init keeps the user hooks and formatting; a second init changes nothing; uninstall gives the file back', async () => {
  const text = await readFile(join(dirs.workspace, '.codex', 'hooks.json'), 'utf8');
  expect(text).toMatch(/^\{\n {4}"hooks": \{\n {8}"Stop"/);
  expect(Object.keys(JSON.parse(text).hooks)).toEqual(['Stop', 'SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PreCompact']);
  expect((await ckpt(['init', 'codex', '--project', '--json'])).json().changed).toBe(false);
  expect((await ckpt(['init', 'codex', '--uninstall', '--dry-run', '--json'])).json()).toMatchObject({ changed: true, dryRun: true });
  expect(await readFile(join(dirs.workspace, '.codex', 'hooks.json'), 'utf8')).toBe(text);
  expect((await ckpt(['init', 'codex', '--uninstall', '--json'])).json().changed).toBe(true);
  expect(JSON.parse(await readFile(join(dirs.workspace, '.codex', 'hooks.json'), 'utf8'))).toEqual({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }] } });
});

it('--local is refused with the scopes Codex has', async () => {
  const r = await ckpt(['init', 'codex', '--local']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('Codex CLI has no local settings file: install with --project (.codex/hooks.json) or --user (~/.codex/hooks.json)');
});

it('hostile patches never break Codex and record nothing; their reason is in the hook log', async () => {
  const before = await eventsOf();
  const outside = join(dirs.base, 'outside.txt');
  await writeFile(outside, 'secret\n');
  const hostile = [
    pre('apply_patch', patch('*** Update File: ../outside.txt', '@@', '-secret', '+owned'), 'c1'),
    pre('apply_patch', patch(`*** Add File: ${outside}`, '+x'), 'c2'),
    pre('apply_patch', patch('*** Update File: a.txt', `*** Move to: ${outside}`), 'c3'),
    pre('apply_patch', { command: 42 }, 'c4'),
    pre('apply_patch', patch('*** Delete File: a\0b.txt'), 'c5'),
    pre('apply_patch', {}, 'c6'),
  ];
  for (const event of hostile) {
    const runs = await hooks.fire(event);
    expect(runs.map((r) => r.code)).toEqual([0]);
    expect(JSON.parse(runs[0]!.stdout).systemMessage).toMatch(/^ckpt /);
  }
  expect(await eventsOf()).toEqual(before);
  expect((await hookLog()).map((e) => `${e.code}${e.reason ? `:${e.reason}` : ''}`)).toEqual([
    'PATH_ESCAPE', 'PATH_ESCAPE', 'PATH_ESCAPE', 'INVALID_ARGUMENT:bad-patch', 'INVALID_ARGUMENT:bad-path', 'INVALID_ARGUMENT:bad-patch',
  ]);
  expect(await readFile(outside, 'utf8')).toBe('secret\n');
});

it('text that is no patch is scanned after it ran; a patch Codex could not apply is settled at Stop', async () => {
  const odd = { command: 'cat > b.txt <<EOF\nbravo\nEOF' };
  await quiet(pre('apply_patch', odd, 'c1'));
  await writeFile(join(dirs.workspace, 'b.txt'), 'bravo\n');
  await quiet(post('apply_patch', odd, 'c1'));
  // Codex fires no PostToolUse for a patch it could not apply: its capture stayed in flight for good
  // (status listed it, and later captures of the path took a hand edit for the agent's write). Stop,
  // which Codex sends once every call of the turn has ended, settles it as the file is.
  await quiet(pre('apply_patch', patch('*** Update File: a.txt', '@@', '-not in the file', '+y'), 'c2'));
  const status = async () => (await ckpt(['--session', `codex-${SID}`, 'status', '--json'])).json().unsettled;
  expect(await status()).toEqual(['a.txt']);
  // (The user's own Stop hook, `notify-send`, runs too: only ckpt's is looked at.)
  const stop = (await hooks.fire({ ...base('Stop'), turn_id: turnId, stop_hook_active: false, last_assistant_message: 'Done.' })).filter((r) => !r.command.includes('notify-send'));
  expect(stop.map((r) => ({ code: r.code, stdout: r.stdout, stderr: r.stderr }))).toEqual([{ code: 0, stdout: '', stderr: '' }]);
  expect(await status()).toEqual([]);
  const settles = (await eventsOf()).filter((e) => e.type === 'settle').map((e) => [e.tag, (e.files as { path: string }[]).map((f) => f.path)]);
  expect(settles).toEqual([['1.1', ['b.txt']], ['1.2', ['a.txt']]]);
  const log = (await ckpt(['--session', `codex-${SID}`, 'log', '--files', '--json'])).json();
  expect(log.checkpoints.map((c: { tag: string; reason?: string; files: { path: string }[] }) => [c.tag, c.reason ?? 'capture', c.files.map((f) => f.path)])).toEqual([
    ['1.1', 'scan', ['b.txt']],
    ['1.2', 'capture', ['a.txt']],
  ]);
  expect(await hookLog()).toEqual([]);
});

it("a shell call whose workdir is outside the project (Codex sends it as cwd) records into the session's workspace, and makes none there (real-Codex probe D3)", async () => {
  const outside = join(dirs.base, 'elsewhere');
  await mkdir(outside);
  await writeFile(join(outside, 'big.bin'), 'not the project\n');
  const away = (e: Record<string, unknown>) => ({ ...e, cwd: outside });
  const cmd = { command: `echo changed > ${join(dirs.workspace, 'a.txt')}` };
  await quiet(away(pre('Bash', cmd, 'call-out')));
  await writeFile(join(dirs.workspace, 'a.txt'), 'changed\n');
  await quiet(away(post('Bash', cmd, 'call-out')));
  expect(await readdir(join(dirs.store, 'workspaces'))).toHaveLength(1);
  const captures = (await eventsOf()).filter((e) => e.type === 'capture') as unknown as { files: { path: string }[] }[];
  expect(captures.flatMap((c) => c.files.map((f) => f.path))).toContain('a.txt');
  const r = await ckpt(['restore', '1', '--yes', '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect(await readFile(join(dirs.workspace, 'a.txt'), 'utf8')).toBe('alpha\n');
});
