// Cursor's hooks as `ckpt init cursor` installs them (issue 30), driven with payloads shaped as Cursor's
// hooks documentation shows them (https://cursor.com/docs/agent/hooks): no Cursor binary runs here, so
// these replays are all the verification Cursor gets. Both generations: Cursor 2.x's tool events
// (preToolUse / postToolUse / postToolUseFailure for every tool, with tool_use_id and cwd) and the
// older shell and file events (beforeShellExecution / afterShellExecution, afterFileEdit) that Cursor
// 1.7–2.3 and the cursor-agent CLI send instead. Every hook answers JSON (`{}`) with exit 0; hostile
// payloads record nothing.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { loadFlatHooks, type FlatHooks } from './helpers/flat-hooks.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';
import { snapshotTree, diffTrees } from './agents/harness/tree-snapshot.js';
import { startDaemon, type RunningDaemon } from '../src/http/daemon.js';
import { openStore } from '../src/store.js';

// The in-process path of `ckpt hook` (what the thin client falls back to) unless a test starts the
// store's daemon: then the installed command forwards each event to it (the thin client), as it does
// where a daemon runs — and answers `{}` for Cursor through that path too.
process.env.CKPT_NO_DAEMON = '1';
let daemon: RunningDaemon | undefined;
let viaDaemon: NodeJS.ProcessEnv = {};
async function withDaemon(): Promise<void> {
  const store = await openStore({ dir: dirs.store });
  await store.openWorkspace(dirs.workspace);
  daemon = await startDaemon({ store, version: 'test' });
  viaDaemon = { CKPT_NO_DAEMON: '' };
}

let dirs: TempDirs;
let hooks: FlatHooks;
const CID = '6f0f8a5e-1c1d-4e55-9d5f-0c2b9a1d7e31';
const home = () => join(dirs.base, 'home');
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace, env: { HOME: home() } });
const hookFile = () => join(dirs.workspace, '.cursor', 'hooks.json');

// The common fields every Cursor hook gets (no cwd: only tool and shell events carry one).
const common = (hook_event_name: string) => ({
  conversation_id: CID,
  generation_id: 'b3d5c2a0-7f11-4a3e-8c55-2f7e0d9a4b10',
  model: 'claude-4-sonnet',
  hook_event_name,
  cursor_version: '2.4.21',
  workspace_roots: [dirs.workspace],
  user_email: 'dev@example.com',
  transcript_path: join(home(), '.cursor', 'projects', 'ws', 'agent-transcripts', `${CID}.txt`),
});
let n = 0;
const pre = (tool_name: string, tool_input: Record<string, unknown>) => ({ ...common('preToolUse'), tool_name, tool_input, tool_use_id: `tool-${++n}`, cwd: dirs.workspace, agent_message: '' });
const post = (p: ReturnType<typeof pre>) => ({ ...p, hook_event_name: 'postToolUse', tool_output: '{"ok":true}', duration: 12 });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-cursor-');
  await mkdir(join(dirs.workspace, '.cursor'));
  // The user's own hooks.json: kept, in its formatting.
  await writeFile(hookFile(), '{\n    "version": 1,\n    "hooks": {\n        "afterFileEdit": [{"command": "./hooks/format.sh"}]\n    }\n}\n');
  const init = await ckpt(['init', 'cursor', '--json']);
  expect(init.code, init.stderr).toBe(0);
  hooks = await loadFlatHooks(hookFile(), dirs.workspace, 'CURSOR_PROJECT_DIR');
  await writeFile(join(dirs.workspace, 'a.txt'), 'alpha\n');
});
afterEach(async () => {
  await daemon?.close();
  daemon = undefined;
  viaDaemon = {};
  await dirs.cleanup();
});

/** Fires ckpt's hook for the event (the user's own hooks are left out: ./hooks/format.sh does not exist here). */
async function fire(event: string, payload: Record<string, unknown> | string): Promise<{ code: number; stdout: string; stderr: string }> {
  const runs = (await hooks.fire(event, payload, viaDaemon)).filter((r) => / hook cursor /.test(r.command));
  expect(runs).toHaveLength(1);
  return runs[0]!;
}
async function quiet(event: string, payload: Record<string, unknown>): Promise<void> {
  const r = await fire(event, payload);
  expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: '{}\n', stderr: '' });
}
async function eventsOf(): Promise<unknown[]> {
  const [wid] = await readdir(join(dirs.store, 'workspaces')).catch(() => [] as string[]);
  if (!wid) return [];
  const text = await readFile(join(dirs.store, 'workspaces', wid, 'sessions', `cursor-${CID}`, 'events.jsonl'), 'utf8').catch(() => '');
  return text.trim() === '' ? [] : text.trim().split('\n').map((l) => JSON.parse(l));
}
const hookLog = async () => (await readFile(join(dirs.store, 'hooks.log'), 'utf8').catch(() => '')).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { code: string; reason?: string });
const log = async () => (await ckpt(['--session', `cursor-${CID}`, 'log', '--files', '--json'])).json();
const checkpoints = async () => (await log()).checkpoints.map((c: { tag: string; tool: string; reason?: string; files: { path: string }[] }) => [c.tag, c.tool, c.reason ?? 'capture', c.files.map((f) => f.path).join(' ')]);
const ignore = ['.cursor'];

it('init: .cursor/hooks.json keeps the user hooks and formatting; idempotent; dry run; uninstall gives the file back; --user', async () => {
  const text = await readFile(hookFile(), 'utf8');
  expect(text).toMatch(/^\{\n {4}"version": 1,\n {4}"hooks": \{\n {8}"afterFileEdit": \[\n/);
  const file = JSON.parse(text);
  expect(Object.keys(file.hooks)).toEqual([
    'afterFileEdit', 'sessionStart', 'beforeSubmitPrompt', 'preToolUse', 'postToolUse', 'postToolUseFailure', 'beforeShellExecution', 'afterShellExecution', 'preCompact', 'stop',
  ]);
  // The user's hook stays first; ckpt's is a plain command entry.
  expect(file.hooks.afterFileEdit[0]).toEqual({ command: './hooks/format.sh' });
  expect(Object.keys(file.hooks.afterFileEdit[1])).toEqual(['command']);
  expect((await ckpt(['init', 'cursor', '--json'])).json().changed).toBe(false);
  expect((await ckpt(['init', 'cursor', '--uninstall', '--dry-run', '--json'])).json()).toMatchObject({ changed: true, dryRun: true });
  expect(await readFile(hookFile(), 'utf8')).toBe(text);
  expect((await ckpt(['init', 'cursor', '--uninstall', '--json'])).json().changed).toBe(true);
  expect(await readFile(hookFile(), 'utf8')).toBe('{\n    "version": 1,\n    "hooks": {\n        "afterFileEdit": [\n            {\n                "command": "./hooks/format.sh"\n            }\n        ]\n    }\n}\n');
  const user = await ckpt(['init', 'cursor', '--user', '--json']);
  expect(user.json()).toMatchObject({ file: join(home(), '.cursor', 'hooks.json'), changed: true });
  expect(JSON.parse(await readFile(join(home(), '.cursor', 'hooks.json'), 'utf8')).version).toBe(1);
  // A file init made: the uninstall leaves no `{"version": 1}` behind, it removes the file.
  expect((await ckpt(['init', 'cursor', '--user', '--uninstall', '--json'])).json().changes).toContain('removed the file (nothing else was in it)');
  expect(existsSync(join(home(), '.cursor', 'hooks.json'))).toBe(false);
});

it('Cursor 2.x, through the daemon: a prompt starts a turn with its text; a named file is captured before, every tool scanned after; the turn restores exactly', async () => {
  await withDaemon();
  await quiet('sessionStart', { ...common('sessionStart'), session_id: CID, is_background_agent: false, composer_mode: 'agent' });
  const before = await snapshotTree(dirs.workspace, ignore);
  await quiet('beforeSubmitPrompt', { ...common('beforeSubmitPrompt'), prompt: 'Fix the bug in a.txt', attachments: [{ type: 'file', file_path: join(dirs.workspace, 'a.txt') }] });
  // Write names its file: captured before it runs.
  const write = pre('Write', { file_path: join(dirs.workspace, 'a.txt'), contents: 'ALPHA\n' });
  await quiet('preToolUse', write);
  await writeFile(join(dirs.workspace, 'a.txt'), 'ALPHA\n');
  await quiet('postToolUse', post(write));
  await quiet('afterFileEdit', { ...common('afterFileEdit'), file_path: join(dirs.workspace, 'a.txt'), edits: [{ old_string: 'alpha', new_string: 'ALPHA' }] });
  // A shell command: preToolUse (Shell) and beforeShellExecution both fire; so do both after-events.
  const shell = pre('Shell', { command: 'mkdir gen && echo x > gen/x.txt && ln -s a.txt link' });
  await quiet('preToolUse', shell);
  await quiet('beforeShellExecution', { ...common('beforeShellExecution'), command: shell.tool_input.command, cwd: dirs.workspace, sandbox: false });
  await mkdir(join(dirs.workspace, 'gen'));
  await writeFile(join(dirs.workspace, 'gen', 'x.txt'), 'x\n');
  await symlink('a.txt', join(dirs.workspace, 'link'));
  await quiet('afterShellExecution', { ...common('afterShellExecution'), command: shell.tool_input.command, output: '', duration: 40, sandbox: false });
  await quiet('postToolUse', post(shell));
  // A tool that failed after it wrote: postToolUseFailure, scanned the same.
  const failing = pre('Shell', { command: 'echo partial > partial.txt && false' });
  await quiet('preToolUse', failing);
  await writeFile(join(dirs.workspace, 'partial.txt'), 'partial\n');
  await quiet('postToolUseFailure', { ...failing, hook_event_name: 'postToolUseFailure', error_message: 'exit code 1', failure_type: 'error', duration: 5, is_interrupt: false });
  // Delete names its file; Read is passive (no record at all).
  const del = pre('Delete', { file_path: join(dirs.workspace, 'gen', 'x.txt') });
  await quiet('preToolUse', del);
  await rm(join(dirs.workspace, 'gen', 'x.txt'));
  await quiet('postToolUse', post(del));
  await quiet('preToolUse', pre('Read', { file_path: join(dirs.workspace, 'a.txt') }));
  await quiet('preCompact', { ...common('preCompact'), trigger: 'auto', context_usage_percent: 91, context_tokens: 182000, context_window_size: 200000, message_count: 40, messages_to_compact: 30, is_first_compaction: true });
  await quiet('stop', { ...common('stop'), status: 'completed', loop_count: 0 });

  const l = await log();
  expect(l.turns.map((t: { text: string }) => t.text)).toEqual(['Fix the bug in a.txt']);
  // Each named file captured before its tool, every tool scanned after (no Cursor tool is trusted to
  // touch only the file it names); the second events of a pair (afterFileEdit, afterShellExecution)
  // find nothing new and record nothing.
  expect(await checkpoints()).toEqual([
    ['1.1', 'Write', 'capture', 'a.txt'],
    ['1.2', 'Write', 'scan', 'a.txt'],
    ['1.3', 'Shell', 'scan', 'gen gen/x.txt link'],
    ['1.4', 'Shell', 'scan', 'partial.txt'],
    ['1.5', 'Delete', 'capture', 'gen/x.txt'],
    ['1.6', 'Delete', 'scan', 'gen/x.txt'],
  ]);
  expect((await eventsOf()).filter((e) => (e as { type: string }).type === 'agent_compaction')).toHaveLength(1);
  expect(await hookLog()).toEqual([]);
  const after = await snapshotTree(dirs.workspace, ignore);
  const r = await ckpt(['--session', `cursor-${CID}`, 'restore', '1', '--yes', '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect(diffTrees(before, await snapshotTree(dirs.workspace, ignore))).toEqual([]);
  const u = await ckpt(['--session', `cursor-${CID}`, 'restore', r.json().undo, '--yes', '--json']);
  expect(u.code, u.stderr).toBe(0);
  expect(diffTrees(after, await snapshotTree(dirs.workspace, ignore))).toEqual([]);
});

it('Cursor 1.7–2.3 and cursor-agent (shell and file-edit events only): every step still recorded, the turn restores exactly', async () => {
  const before = await snapshotTree(dirs.workspace, ignore);
  await quiet('beforeSubmitPrompt', { ...common('beforeSubmitPrompt'), prompt: 'Generate fixtures', attachments: [] });
  // The old shell events carry no tool name and (afterShellExecution) no cwd.
  await quiet('beforeShellExecution', { ...common('beforeShellExecution'), command: 'echo f > f.txt', cwd: dirs.workspace });
  await writeFile(join(dirs.workspace, 'f.txt'), 'f\n');
  await quiet('afterShellExecution', { ...common('afterShellExecution'), command: 'echo f > f.txt', output: '', duration: 3 });
  // An agent edit reported after the fact only: scanned.
  await writeFile(join(dirs.workspace, 'a.txt'), 'edited\n');
  await quiet('afterFileEdit', { ...common('afterFileEdit'), file_path: join(dirs.workspace, 'a.txt'), edits: [{ old_string: 'alpha', new_string: 'edited' }] });
  await quiet('stop', { ...common('stop'), status: 'completed' });
  expect(await checkpoints()).toEqual([
    ['1.1', 'Shell', 'scan', 'f.txt'],
    ['1.2', 'afterFileEdit', 'scan', 'a.txt'],
  ]);
  const r = await ckpt(['--session', `cursor-${CID}`, 'restore', '1', '--yes', '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect(diffTrees(before, await snapshotTree(dirs.workspace, ignore))).toEqual([]);
  expect(await hookLog()).toEqual([]);
});

it('hostile payloads never break Cursor (exit 0, a JSON answer) and record nothing, through the daemon', async () => {
  await withDaemon();
  await quiet('beforeSubmitPrompt', { ...common('beforeSubmitPrompt'), prompt: 'go', attachments: [] });
  const before = await eventsOf();
  const outside = join(dirs.base, 'outside.txt');
  await writeFile(outside, 'secret\n');
  const hostile: [string, string | Record<string, unknown>][] = [
    ['preToolUse', '{"conversation_id": '],
    ['preToolUse', 'null'],
    ['preToolUse', pre('Write', { file_path: outside })],
    ['preToolUse', pre('Write', { file_path: '../outside.txt' })],
    ['preToolUse', pre('Delete', { file_path: 'a\0b.txt' })],
    ['preToolUse', { ...pre('MCP:db:query', {}), tool_input: '{"query": ' }],
    ['preToolUse', { ...pre('Write', { file_path: 'a.txt' }), conversation_id: ['x'] }],
    ['beforeShellExecution', { ...common('beforeShellExecution'), workspace_roots: 'not a list', command: 'ls' }],
    ['beforeShellExecution', { ...common('beforeShellExecution'), workspace_roots: ['relative/dir'], command: 'ls' }],
    ['stop', { ...common('stop'), workspace_roots: [], status: 'completed' }],
  ];
  for (const [event, payload] of hostile) {
    const r = await fire(event, payload);
    expect(r.code, JSON.stringify(payload)).toBe(0);
    expect(JSON.parse(r.stdout).systemMessage).toMatch(/^ckpt /);
  }
  expect(await eventsOf()).toEqual(before);
  expect((await hookLog()).map((e) => `${e.code}${e.reason ? `:${e.reason}` : ''}`)).toEqual([
    'INVALID_ARGUMENT:malformed-json', 'INVALID_ARGUMENT:not-an-object', 'PATH_ESCAPE', 'PATH_ESCAPE', 'INVALID_ARGUMENT:bad-path', 'INVALID_ARGUMENT:bad-tool-input',
    'INVALID_ARGUMENT:wrong-type', 'INVALID_ARGUMENT:bad-cwd', 'INVALID_ARGUMENT:bad-cwd', 'INVALID_ARGUMENT:bad-cwd',
  ]);
  // An MCP tool whose input is JSON text is parsed and recorded as any unknown tool: scanned after.
  const mcp = pre('MCP:fs:write', {});
  const asText = { ...mcp, tool_input: JSON.stringify({ path: join(dirs.workspace, 'm.txt') }) };
  await quiet('preToolUse', asText);
  await writeFile(join(dirs.workspace, 'm.txt'), 'm\n');
  await quiet('postToolUse', { ...post(mcp), tool_input: asText.tool_input });
  expect(await checkpoints()).toEqual([
    ['1.1', 'MCP:fs:write', 'capture', 'm.txt'],
    ['1.2', 'MCP:fs:write', 'scan', 'm.txt'],
  ]);
});
