// GitHub Copilot's hooks as `ckpt init copilot` installs them (issue 30), replayed: payload shapes as
// the real Copilot CLI sent them (@github/copilot 1.0.102 — its real runs are test/agents/copilot.test.ts)
// and as VS Code's hooks reference documents them (VS Code's own tools: createFile {filePath},
// editFiles {files}, a tool_use_id). Here what a scripted model does not send: hostile payloads (each
// answered with exit 0 — for Copilot any other exit denies the tool — and nothing recorded), a ckpt that
// crashes (the installed command line still exits 0), strict mode's deliberate deny (exit 2 kept).
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { loadFlatHooks, type FlatHooks } from './helpers/flat-hooks.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

// The in-process path of `ckpt hook` (what the thin client falls back to); test/agents/ runs the daemon path.
process.env.CKPT_NO_DAEMON = '1';

let dirs: TempDirs;
let hooks: FlatHooks;
const SID = '427b8389-6fd3-47f8-ac92-cd70d3ced4f9';
const home = () => join(dirs.base, 'home');
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace, env: { HOME: home() } });
const hookFile = () => join(dirs.workspace, '.github', 'hooks', 'ckpt.json');

const base = (hook_event_name: string) => ({ hook_event_name, session_id: SID, timestamp: '2026-12-02T05:52:44.151Z', cwd: dirs.workspace });
const pre = (tool_name: string, tool_input: Record<string, unknown>) => ({ ...base('PreToolUse'), tool_name, tool_input });
const post = (tool_name: string, tool_input: Record<string, unknown>) => ({ ...base('PostToolUse'), tool_name, tool_input, tool_result: { result_type: 'success', text_result_for_llm: 'ok' } });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-copilot-');
  // The user's own hook file beside ckpt's: never touched.
  await mkdir(join(dirs.workspace, '.github', 'hooks'), { recursive: true });
  await writeFile(join(dirs.workspace, '.github', 'hooks', 'lint.json'), '{"version": 1, "hooks": {"PostToolUse": [{"type": "command", "bash": "npm run lint"}]}}');
  const init = await ckpt(['init', 'copilot', '--json']);
  expect(init.code, init.stderr).toBe(0);
  hooks = await loadFlatHooks(hookFile(), dirs.workspace, 'COPILOT_PROJECT_DIR', 'bash');
  await writeFile(join(dirs.workspace, 'a.txt'), 'alpha\n');
  await quiet('SessionStart', { ...base('SessionStart'), source: 'new', initial_prompt: 'go' });
  await quiet('UserPromptSubmit', { ...base('UserPromptSubmit'), prompt: 'go' });
});
afterEach(() => dirs.cleanup());

async function quiet(event: string, payload: Record<string, unknown>): Promise<void> {
  for (const r of await hooks.fire(event, payload)) expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
}
async function eventsOf(): Promise<unknown[]> {
  const [wid] = await readdir(join(dirs.store, 'workspaces'));
  const text = await readFile(join(dirs.store, 'workspaces', wid!, 'sessions', `copilot-${SID}`, 'events.jsonl'), 'utf8').catch(() => '');
  return text.trim() === '' ? [] : text.trim().split('\n').map((l) => JSON.parse(l));
}
const hookLog = async () => (await readFile(join(dirs.store, 'hooks.log'), 'utf8').catch(() => '')).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { code: string; reason?: string });
const checkpoints = async () =>
  (await ckpt(['--session', `copilot-${SID}`, 'log', '--files', '--json'])).json().checkpoints.map((c: { tag: string; tool: string; reason?: string; files: { path: string }[] }) => [c.tag, c.tool, c.reason ?? 'capture', c.files.map((f) => f.path).join(' ')]);

it('init --project: .github/hooks/ckpt.json in the format both the CLI and VS Code read; idempotent; dry run; uninstall', async () => {
  const text = await readFile(hookFile(), 'utf8');
  const file = JSON.parse(text);
  expect(Object.keys(file)).toEqual(['version', 'hooks']);
  expect(file.version).toBe(1);
  expect(Object.keys(file.hooks)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PreCompact', 'Stop']);
  for (const list of Object.values(file.hooks) as Record<string, unknown>[][]) {
    expect(list).toHaveLength(1);
    // Above the thin client's 120 s wait for the daemon, so its in-process fallback runs before Copilot's kill (a deny).
    expect(list[0]).toMatchObject({ type: 'command', timeoutSec: 180, timeout: 180 });
    expect(list[0]!.bash).toBe(list[0]!.command);
    expect(list[0]!.bash).toMatch(/ hook copilot --daemon \|\| \[ \$\? -ne 2 \] \|\| exit 2$/);
  }
  expect((await ckpt(['init', 'copilot', '--json'])).json().changed).toBe(false);
  expect((await ckpt(['init', 'copilot', '--uninstall', '--dry-run', '--json'])).json()).toMatchObject({ changed: true, dryRun: true });
  expect(await readFile(hookFile(), 'utf8')).toBe(text);
  const removed = (await ckpt(['init', 'copilot', '--uninstall', '--json'])).json();
  expect(removed.changed).toBe(true);
  // ckpt's own file, left with only the version init set: removed, as the README says (nothing else was in it).
  expect(removed.changes).toContain('removed the file (nothing else was in it)');
  expect(existsSync(hookFile())).toBe(false);
  expect(await readFile(join(dirs.workspace, '.github', 'hooks', 'lint.json'), 'utf8')).toContain('npm run lint');
});

it("init --user merges into ~/.copilot/settings.json, keeping the user's settings, hooks and formatting", async () => {
  const settings = join(home(), '.copilot', 'settings.json');
  await mkdir(join(home(), '.copilot'), { recursive: true });
  const mine = '{\n\t"model": "gpt-5.5",\n\t"hooks": {\n\t\t"PreToolUse": [{"type": "command", "bash": "./guard.sh"}]\n\t}\n}\n';
  await writeFile(settings, mine);
  expect((await ckpt(['init', 'copilot', '--user', '--json'])).json()).toMatchObject({ file: settings, changed: true });
  const text = await readFile(settings, 'utf8');
  expect(text).toMatch(/^\{\n\t"model": "gpt-5.5",\n\t"hooks": \{\n\t\t"PreToolUse": \[\n/);
  const v = JSON.parse(text);
  expect(v.version).toBeUndefined();
  expect(v.hooks.PreToolUse).toHaveLength(2);
  expect(v.hooks.PreToolUse[0]).toEqual({ type: 'command', bash: './guard.sh' });
  expect((await ckpt(['init', 'copilot', '--user', '--json'])).json().changed).toBe(false);
  await ckpt(['init', 'copilot', '--user', '--uninstall', '--json']);
  expect(JSON.parse(await readFile(settings, 'utf8'))).toEqual(JSON.parse(mine));
});

it('records the CLI\'s tools and VS Code\'s documented ones: edits captured before, the rest scanned after', async () => {
  const b = join(dirs.workspace, 'b.txt');
  // The CLI (as it sent them): Write {path, file_text} for create, Edit {path, …}; no tool-call id.
  await quiet('PreToolUse', pre('Write', { path: b, file_text: 'bravo\n' }));
  await writeFile(b, 'bravo\n');
  await quiet('PostToolUse', post('Write', { path: b, file_text: 'bravo\n' }));
  // VS Code (as its hooks reference shows them): editFiles {files}, a tool_use_id.
  await quiet('PreToolUse', { ...pre('editFiles', { files: ['a.txt', 'b.txt'] }), tool_use_id: 'tool-123' });
  await writeFile(join(dirs.workspace, 'a.txt'), 'ALPHA\n');
  await quiet('PostToolUse', { ...post('editFiles', { files: ['a.txt', 'b.txt'] }), tool_use_id: 'tool-123', hook_event_name: 'PostToolUse' });
  // A failed tool: PostToolUseFailure, handled like PostToolUse.
  await quiet('PreToolUse', pre('Edit', { path: join(dirs.workspace, 'missing.txt'), old_str: 'q', new_str: 'r' }));
  await quiet('PostToolUseFailure', { ...base('PostToolUseFailure'), tool_name: 'Edit', tool_input: { path: join(dirs.workspace, 'missing.txt'), old_str: 'q', new_str: 'r' }, error: 'ENOENT' });
  // A read-only tool records nothing.
  await quiet('PreToolUse', pre('view', { path: b }));
  expect(await checkpoints()).toEqual([
    ['1.1', 'Write', 'capture', 'b.txt'],
    ['1.2', 'editFiles', 'capture', 'a.txt b.txt'],
    // Not a file tool (its input is not known field by field): the scan after it records what it did.
    ['1.3', 'editFiles', 'scan', 'a.txt'],
    ['1.4', 'Edit', 'capture', 'missing.txt'],
  ]);
  await quiet('Stop', { ...base('Stop'), transcript_path: join(home(), '.copilot', 'session-state', SID, 'events.jsonl'), stop_reason: 'end_turn' });
  expect(await hookLog()).toEqual([]);
  const r = await ckpt(['--session', `copilot-${SID}`, 'restore', '1', '--yes', '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect(await readFile(join(dirs.workspace, 'a.txt'), 'utf8')).toBe('alpha\n');
});

it('hostile payloads exit 0 (any other exit denies the tool in Copilot) and record nothing', async () => {
  const before = await eventsOf();
  const outside = join(dirs.base, 'outside.txt');
  const hostile: [string, string | Record<string, unknown>][] = [
    ['PreToolUse', '{not json'],
    ['PreToolUse', '[]'],
    ['PreToolUse', { ...pre('Edit', { path: '../outside.txt' }) }],
    ['PreToolUse', { ...pre('Write', { path: outside }) }],
    ['PreToolUse', { ...pre('Edit', { path: 'a\0b' }) }],
    ['PreToolUse', { ...pre('editFiles', { files: ['a.txt', 42] }) }],
    ['PreToolUse', { ...pre('Edit', {}), tool_input: 'not json either' }],
    ['PreToolUse', { ...pre('Edit', { path: 'a.txt' }), session_id: 7 }],
    ['PreToolUse', { ...pre('Edit', { path: 'a.txt' }), cwd: 'relative' }],
  ];
  for (const [event, payload] of hostile) {
    const runs = await hooks.fire(event, payload);
    expect(runs.map((r) => r.code)).toEqual([0]);
    expect(JSON.parse(runs[0]!.stdout).systemMessage).toMatch(/^ckpt /);
  }
  expect(await eventsOf()).toEqual(before);
  expect((await hookLog()).map((e) => `${e.code}${e.reason ? `:${e.reason}` : ''}`)).toEqual([
    'INVALID_ARGUMENT:malformed-json', 'INVALID_ARGUMENT:not-an-object', 'PATH_ESCAPE', 'PATH_ESCAPE', 'INVALID_ARGUMENT:bad-path', 'INVALID_ARGUMENT:bad-path',
    'INVALID_ARGUMENT:bad-tool-input', 'INVALID_ARGUMENT:wrong-type', 'INVALID_ARGUMENT:bad-cwd',
  ]);
});

it('the installed command line exits 0 when ckpt itself crashes, and keeps strict mode\'s deliberate deny (exit 2)', async () => {
  const line = hooks.file.hooks.PreToolUse![0]!.bash!;
  const { runShell } = await import('./helpers/agent-hooks.js');
  const env: NodeJS.ProcessEnv = { ...process.env, COPILOT_PROJECT_DIR: dirs.workspace };
  delete env.CKPT_HOME;
  const payload = JSON.stringify(pre('Edit', { path: 'a.txt' }));
  // ckpt gone (sh exits 127 on a missing script, node 1): the tool call still runs.
  const broken = line.replace(/\S*ckpt(?:\.js|-hook\.sh)'?/, join(dirs.base, 'no-such-ckpt'));
  expect(broken).not.toBe(line);
  expect((await runShell(broken, { cwd: dirs.workspace, env, input: payload })).code).toBe(0);
  expect((await runShell(`sh -c 'exit 1' ${line.slice(line.indexOf(' ||'))}`, { cwd: dirs.workspace, env, input: '' })).code).toBe(0);
  // Strict mode, a before-image that cannot be recorded: exit 2, the deny the user asked for.
  const strict = await runShell(line, { cwd: dirs.workspace, env: { ...env, CKPT_HOOK_STRICT: '1' }, input: JSON.stringify(pre('Edit', { path: '../outside.txt' })) });
  expect(strict.code).toBe(2);
  expect(strict.stderr).toMatch(/PATH_ESCAPE/);
});
