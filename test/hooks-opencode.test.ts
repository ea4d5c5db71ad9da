// opencode's plugin as `ckpt init opencode` writes it (issue 30), loaded in Node and called the way
// opencode calls it (the event shapes the real opencode 1.18.33 passes; its real runs are in
// test/agents/opencode.test.ts): install, idempotence, dry run, uninstall, a foreign file refused; a
// session of prompts and tool calls recorded and restored; hostile inputs never throw, record nothing;
// a subagent's session recorded as its root's.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { opencode } from '../src/hooks/agents/opencode.js';
import { opencodePluginSource } from '../src/hooks/install/opencode-plugin.js';
import { treeOf } from './fixtures/scan-world.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

// The in-process path of `ckpt hook` (what the thin client falls back to).
process.env.CKPT_NO_DAEMON = '1';

let dirs: TempDirs;
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace, env: { HOME: join(dirs.base, 'home') } });
const pluginFile = () => join(dirs.workspace, '.opencode', 'plugins', 'ckpt.js');
type Hooks = Record<string, (input: unknown, output?: unknown) => Promise<void>>;
const load = async (): Promise<Hooks> => {
  const mod = (await import(`${pathToFileURL(pluginFile()).href}?${Date.now()}`)) as { CkptPlugin: (ctx: { directory: string }) => Promise<Hooks> };
  return mod.CkptPlugin({ directory: dirs.workspace });
};

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-opencode-');
});
afterEach(() => dirs.cleanup());

it('init writes the plugin once; dry run and uninstall; a file of that name that is not ckpt\'s is refused', async () => {
  expect((await ckpt(['init', 'opencode', '--dry-run', '--json'])).json()).toMatchObject({ changed: true, dryRun: true });
  await expect(readFile(pluginFile())).rejects.toThrow();
  expect((await ckpt(['init', 'opencode', '--json'])).json()).toMatchObject({ changed: true, changes: ['added the plugin'] });
  const text = await readFile(pluginFile(), 'utf8');
  // Every event the table handles is one the plugin sends.
  for (const name of Object.keys(opencode.events)) expect(text, name).toContain(`'${name}'`);
  expect((await ckpt(['init', 'opencode', '--json'])).json().changed).toBe(false);
  expect((await ckpt(['init', 'opencode', '--uninstall', '--json'])).json()).toMatchObject({ changed: true, changes: ['removed the plugin'] });
  await expect(readFile(pluginFile())).rejects.toThrow();
  await mkdir(join(dirs.workspace, '.opencode', 'plugins'), { recursive: true });
  await writeFile(pluginFile(), 'export const Mine = async () => ({});\n');
  const r = await ckpt(['init', 'opencode', '--json']);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain("not ckpt's plugin");
  expect(await readFile(pluginFile(), 'utf8')).toBe('export const Mine = async () => ({});\n');
});

it('records prompts, edits before they happen and shell calls; every turn restores exactly; hostile inputs never throw and record nothing', async () => {
  expect((await ckpt(['init', 'opencode', '--json'])).code).toBe(0);
  const at = (rel: string) => join(dirs.workspace, rel);
  await writeFile(at('a.txt'), 'alpha\n');
  const p = await load();
  const sid = 'ses_dcb0ca663ffeYf6wmqDtEyouIJ';
  let n = 0;
  const tool = async (name: string, args: Record<string, unknown>, effect: () => Promise<void>) => {
    const callID = `call_${++n}`;
    await p['tool.execute.before']!({ tool: name, sessionID: sid, callID }, { args });
    await effect();
    await p['tool.execute.after']!({ tool: name, sessionID: sid, callID, args }, { title: '', output: '', metadata: {} });
  };
  const prompt = (text: string) => p['chat.message']!({ sessionID: sid, messageID: `msg_${++n}` }, { message: {}, parts: [{ type: 'text', text }, { type: 'text', text: 'context', synthetic: true }] });
  const trees: Record<string, unknown> = {};
  trees['1'] = await treeOf(dirs.workspace, ['.opencode']);
  await prompt('write a plan');
  await tool('write', { filePath: at('plan.md'), content: '# plan\n' }, () => writeFile(at('plan.md'), '# plan\n'));
  await tool('edit', { filePath: 'a.txt', oldString: 'alpha', newString: 'ALPHA' }, () => writeFile(at('a.txt'), 'ALPHA\n'));
  trees['2'] = await treeOf(dirs.workspace, ['.opencode']);
  await prompt('patch and shell');
  await tool('apply_patch', { patchText: '*** Begin Patch\n*** Update File: plan.md\n*** Move to: PLAN.md\n@@\n-# plan\n+# PLAN\n*** End Patch\n' }, async () => {
    await writeFile(at('PLAN.md'), '# PLAN\n');
    await (await import('node:fs/promises')).rm(at('plan.md'));
  });
  await tool('bash', { command: 'mkdir out && echo 1 > out/1.txt' }, async () => {
    await mkdir(at('out'));
    await writeFile(at('out/1.txt'), '1\n');
  });
  // Hostile or broken inputs: the plugin swallows everything, ckpt records nothing from them.
  const [wid] = await readdir(join(dirs.store, 'workspaces'));
  const events = () => readFile(join(dirs.store, 'workspaces', wid!, 'sessions', `opencode-${sid}`, 'events.jsonl'), 'utf8');
  const before = await events();
  for (const [input, output] of [
    [{ tool: 'write', sessionID: sid, callID: 'h1' }, { args: { filePath: '../outside.txt', content: 'x' } }],
    [{ tool: 'write', sessionID: sid, callID: 'h2' }, { args: { filePath: 42 } }],
    [{ tool: 'apply_patch', sessionID: sid, callID: 'h3' }, { args: { patchText: '*** Begin Patch\n*** Delete File: /etc/passwd\n*** End Patch\n' } }],
    [{ tool: 'edit', sessionID: 7, callID: 'h4' }, { args: {} }],
    [null, null],
  ] as const) {
    await expect(p['tool.execute.before']!(input, output)).resolves.toBeUndefined();
  }
  await expect(p['chat.message']!(null, null)).resolves.toBeUndefined();
  expect(await events()).toBe(before);

  const log = (await ckpt(['--session', `opencode-${sid}`, 'log', '--json'])).json();
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual(['write a plan', 'patch and shell']);
  expect(log.checkpoints.map((c: { tag: string; tool: string }) => `${c.tag}:${c.tool}`)).toEqual(['1.1:write', '1.2:edit', '2.1:apply_patch', '2.2:bash']);
  for (const turn of ['1', '2']) {
    const r = await ckpt(['--session', `opencode-${sid}`, 'restore', turn, '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(await treeOf(dirs.workspace, ['.opencode']), `turn ${turn}`).toEqual(trees[turn]);
  }
}, 180_000);

it('the plugin starts no hook process for a passive tool (read, grep, glob…), and one for every other tool', async () => {
  // Each hook run is a process (sh + the thin client, or a node start): a read cost two, for nothing.
  const log = join(dirs.base, 'events.log');
  await mkdir(join(dirs.workspace, '.opencode', 'plugins'), { recursive: true });
  await writeFile(pluginFile(), opencodePluginSource(`cat >> '${log}' && echo >> '${log}'`, opencode.passiveTools));
  const hooks = await load();
  await hooks['chat.message']!({ sessionID: 'ses_p' }, { parts: [{ type: 'text', text: 'go' }] });
  for (const [tool, callID] of [['read', 'c1'], ['grep', 'c2'], ['glob', 'c3'], ['list', 'c4'], ['edit', 'c5'], ['bash', 'c6'], ['some_mcp_tool', 'c7']] as const) {
    await hooks['tool.execute.before']!({ tool, sessionID: 'ses_p', callID }, { args: { filePath: join(dirs.workspace, 'a.txt') } });
    await hooks['tool.execute.after']!({ tool, sessionID: 'ses_p', callID }, {});
  }
  const sent = (await readFile(log, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { hook_event_name: string; tool_name?: string });
  expect(sent.map((e) => `${e.hook_event_name}${e.tool_name ? ` ${e.tool_name}` : ''}`)).toEqual([
    'session.start',
    'chat.message',
    'tool.execute.before edit',
    'tool.execute.after edit',
    'tool.execute.before bash',
    'tool.execute.after bash',
    'tool.execute.before some_mcp_tool',
    'tool.execute.after some_mcp_tool',
  ]);
});

it('a tool call that fails (no tool.execute.after) is sent as ended once its part turns to "error"; a completed call is sent once', async () => {
  const log = join(dirs.base, 'events.log');
  await mkdir(join(dirs.workspace, '.opencode', 'plugins'), { recursive: true });
  await writeFile(pluginFile(), opencodePluginSource(`cat >> '${log}' && echo >> '${log}'`, opencode.passiveTools));
  const hooks = await load();
  const part = (callID: string, status: string, tool = 'edit') => ({ event: { type: 'message.part.updated', properties: { part: { type: 'tool', tool, callID, sessionID: 'ses_p', state: { status } } } } });
  const filePath = join(dirs.workspace, 'a.txt');
  await hooks['tool.execute.before']!({ tool: 'edit', sessionID: 'ses_p', callID: 'bad' }, { args: { filePath } });
  await hooks.event!(part('bad', 'running'));
  await hooks.event!(part('bad', 'error'));
  await hooks.event!(part('bad', 'error')); // repeated: sent once
  await hooks['tool.execute.before']!({ tool: 'write', sessionID: 'ses_p', callID: 'ok' }, { args: { filePath } });
  await hooks['tool.execute.after']!({ tool: 'write', sessionID: 'ses_p', callID: 'ok' }, {});
  await hooks.event!(part('ok', 'completed', 'write'));
  await hooks.event!(part('never-started', 'error')); // no before sent for it: nothing to end
  for (const odd of [undefined, {}, { event: null }, { event: { type: 'message.part.updated' } }, { event: { type: 'message.part.updated', properties: { part: { type: 'tool' } } } }]) {
    await hooks.event!(odd);
  }
  const sent = (await readFile(log, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { hook_event_name: string; tool_name?: string; tool_use_id?: string; tool_input?: unknown });
  expect(sent.filter((e) => e.tool_use_id).map((e) => `${e.hook_event_name} ${e.tool_name} ${e.tool_use_id}`)).toEqual([
    'tool.execute.before edit bad',
    'tool.execute.after edit bad',
    'tool.execute.before write ok',
    'tool.execute.after write ok',
  ]);
  expect(sent.find((e) => e.hook_event_name === 'tool.execute.after' && e.tool_use_id === 'bad')?.tool_input).toEqual({ filePath });
});

it('a subagent\'s session (parentID) sends its tool calls as its root session\'s and its prompt starts no turn; a failing lookup keeps the id', async () => {
  const log = join(dirs.base, 'events.log');
  await mkdir(join(dirs.workspace, '.opencode', 'plugins'), { recursive: true });
  await writeFile(pluginFile(), opencodePluginSource(`cat >> '${log}' && echo >> '${log}'`, opencode.passiveTools));
  const mod = (await import(`${pathToFileURL(pluginFile()).href}?${Date.now()}`)) as { CkptPlugin: (ctx: unknown) => Promise<Hooks> };
  // opencode's SDK client: session.get → {data: Session}; a subagent's session names its parent.
  const parents: Record<string, string | undefined> = { ses_p: undefined, ses_child: 'ses_p', ses_grandchild: 'ses_child' };
  const client = {
    session: {
      get: async ({ path }: { path: { id: string } }) => {
        if (path.id === 'ses_broken') throw new Error('server gone');
        return { data: { id: path.id, ...(parents[path.id] ? { parentID: parents[path.id] } : {}) } };
      },
    },
  };
  const hooks = await mod.CkptPlugin({ directory: dirs.workspace, client });
  await hooks['chat.message']!({ sessionID: 'ses_p' }, { parts: [{ type: 'text', text: 'go' }] });
  await hooks['chat.message']!({ sessionID: 'ses_child' }, { parts: [{ type: 'text', text: 'the task prompt' }] });
  for (const [sessionID, callID] of [['ses_child', 'c1'], ['ses_grandchild', 'c2'], ['ses_broken', 'c3']] as const) {
    await hooks['tool.execute.before']!({ tool: 'write', sessionID, callID }, { args: { filePath: join(dirs.workspace, 'a.txt') } });
    await hooks['tool.execute.after']!({ tool: 'write', sessionID, callID }, {});
  }
  await hooks['experimental.session.compacting']!({ sessionID: 'ses_child' });
  // Without a client (an older opencode), every session is its own.
  const plain = await mod.CkptPlugin({ directory: dirs.workspace });
  await plain['tool.execute.before']!({ tool: 'bash', sessionID: 'ses_child', callID: 'c4' }, { args: { command: 'true' } });
  const sent = (await readFile(log, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { hook_event_name: string; session_id: string; tool_use_id?: string });
  expect(sent.map((e) => `${e.hook_event_name} ${e.session_id}${e.tool_use_id ? ` ${e.tool_use_id}` : ''}`)).toEqual([
    'session.start ses_p',
    'chat.message ses_p',
    'tool.execute.before ses_p c1',
    'tool.execute.after ses_p c1',
    'tool.execute.before ses_p c2',
    'tool.execute.after ses_p c2',
    'session.start ses_broken',
    'tool.execute.before ses_broken c3',
    'tool.execute.after ses_broken c3',
    'session.start ses_child',
    'tool.execute.before ses_child c4',
  ]);
});

it('a write through a symlink the tool names records the file it leads to: restore N puts it back, no DRIFT (opencode probe)', async () => {
  // opencode's write and edit follow a link they are given: the link stays, its target changes.
  expect((await ckpt(['init', 'opencode', '--json'])).code).toBe(0);
  const { symlink } = await import('node:fs/promises');
  const at = (rel: string) => join(dirs.workspace, rel);
  await writeFile(at('a.txt'), 'one\n');
  await symlink('a.txt', at('link'));
  await symlink('new.txt', at('dangling'));
  await symlink(join(dirs.base, 'outside.txt'), at('out-link'));
  await writeFile(join(dirs.base, 'outside.txt'), 'out\n');
  const p = await load();
  const sid = 'ses_links';
  await p['chat.message']!({ sessionID: sid }, { parts: [{ type: 'text', text: 'write through links' }] });
  const before = await treeOf(dirs.workspace, ['.opencode']);
  let n = 0;
  for (const [name, content] of [['link', 'two\n'], ['dangling', 'created\n'], ['out-link', 'out 2\n']] as const) {
    const args = { filePath: at(name), content };
    await p['tool.execute.before']!({ tool: 'write', sessionID: sid, callID: `c${++n}` }, { args });
    await writeFile(at(name), content);
    await p['tool.execute.after']!({ tool: 'write', sessionID: sid, callID: `c${n}` }, {});
  }
  const after = await treeOf(dirs.workspace, ['.opencode']);
  const r = await ckpt(['restore', '1', '--yes', '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect(await treeOf(dirs.workspace, ['.opencode'])).toEqual(before);
  const u = await ckpt(['restore', r.json().undo, '--yes', '--json']);
  expect(u.code, u.stderr).toBe(0);
  expect(await treeOf(dirs.workspace, ['.opencode'])).toEqual(after);
  expect(await readFile(join(dirs.store, 'hooks.log'), 'utf8').catch(() => '')).toBe('');
}, 120_000);
