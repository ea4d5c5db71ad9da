// Gemini CLI through the same mechanism (issue 11 item 7): `ckpt init gemini` writes
// .gemini/settings.json, a Gemini-style session (write_file, replace, run_shell_command with rm, mv,
// a generator, chmod, ln -s) is replayed through the installed commands as Gemini CLI runs them
// (sh -c, JSON on stdin, GEMINI_PROJECT_DIR), and every turn is restored exactly.
import { execSync } from 'node:child_process';
import { chmod, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { geminiEvents as ev, geminiSession } from './fixtures/gemini-events.js';
import { treeOf } from './fixtures/scan-world.js';
import { loadInstalledHooks, runShell } from './helpers/agent-hooks.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

// These tests cover the in-process path of `ckpt hook` (what the thin client falls back to): no daemon
// is forwarded to or started by the installed `--daemon` hooks (test/agents/ covers the daemon path).
process.env.CKPT_NO_DAEMON = '1';

let dirs: TempDirs;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-gemini-');
});
afterEach(() => dirs.cleanup());

it('records a Gemini CLI session through the installed hooks; restoring to every turn gives back each tree', async () => {
  const project = dirs.workspace;
  const at = (rel: string) => join(project, rel);
  const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: project, env: { HOME: join(dirs.base, 'home') } });
  await mkdir(join(project, '.gemini'));
  await writeFile(join(project, '.gemini', 'settings.json'), JSON.stringify({ tools: { enableHooks: true }, hooks: { AfterAgent: [{ hooks: [{ type: 'command', command: 'true' }] }] } }, null, 4) + '\n');
  const init = await ckpt(['init', 'gemini', '--project']);
  expect(init.code, init.stderr).toBe(0);
  expect(init.stdout).toContain('tools.enableHooks');
  const settings = JSON.parse(await readFile(join(project, '.gemini', 'settings.json'), 'utf8'));
  expect(settings.tools).toEqual({ enableHooks: true });
  expect(settings.hooks.AfterAgent).toHaveLength(1);
  // Every tool but the passive ones (a read_file starts no hook process); PreCompress only for `/compress`.
  expect(settings.hooks.BeforeTool).toMatchObject([{ matcher: '^(?!(?:read_file|read_many_files|list_directory|glob|search_file_content|grep|google_web_search|web_fetch|write_todos|save_memory)$)', hooks: [{ type: 'command', name: 'ckpt-before-tool' }] }]);
  expect(settings.hooks.PreCompress).toMatchObject([{ matcher: 'manual', hooks: [{ type: 'command', name: 'ckpt-pre-compress' }] }]);
  const hooks = await loadInstalledHooks(join(project, '.gemini', 'settings.json'), project, 'GEMINI_PROJECT_DIR');
  const s = geminiSession(project);
  const quiet = async (event: Record<string, unknown>) => {
    for (const r of await hooks.fire(event)) expect({ code: r.code, out: r.stdout, err: r.stderr }).toEqual({ code: 0, out: '', err: '' });
  };
  const tool = async (name: string, input: Record<string, unknown>, effect: () => unknown) => {
    await quiet(ev.beforeTool(s, name, input));
    await effect();
    await quiet(ev.afterTool(s, name, input));
  };
  const shell = (command: string) => tool('run_shell_command', { command }, () => execSync(command, { cwd: project, shell: '/bin/sh' }));

  await writeFile(at('notes.txt'), 'one\n');
  await writeFile(at('tool.sh'), '#!/bin/sh\n');
  await chmod(at('tool.sh'), 0o755);
  await quiet(ev.sessionStart(s));
  const trees: Record<string, Awaited<ReturnType<typeof treeOf>>> = {};
  trees['1'] = await treeOf(project);
  await quiet(ev.beforeAgent(s, 'write a plan'));
  await tool('write_file', { file_path: at('plan.md'), content: '# plan\n' }, () => writeFile(at('plan.md'), '# plan\n'));
  await tool('replace', { file_path: 'notes.txt', old_string: 'one', new_string: 'two' }, () => writeFile(at('notes.txt'), 'two\n'));
  await tool('read_file', { file_path: at('notes.txt') }, () => undefined);
  trees['2'] = await treeOf(project);
  await quiet(ev.beforeAgent(s, 'shuffle things around'));
  await shell('mv notes.txt old-notes.txt && rm plan.md && mkdir -p out && for i in 1 2 3 4 5 6 7 8; do echo $i > out/$i.txt; done');
  await shell('chmod 600 tool.sh && ln -s old-notes.txt notes.txt');
  trees['3'] = await treeOf(project);
  await quiet(ev.beforeAgent(s, 'clean up'));
  await shell('rm -r out && rm notes.txt');
  await quiet(ev.preCompress(s, 'auto'));
  await quiet(ev.sessionEnd(s));

  const sid = `gemini-${s.session_id}`;
  const log = (await ckpt(['--session', sid, 'log', '--json'])).json();
  // Gemini fires an `auto` PreCompress before every model call: not taken for a compaction.
  expect((await ckpt(['--session', sid, 'log'])).stdout).not.toContain('compacted its context');
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual(['write a plan', 'shuffle things around', 'clean up']);
  expect(log.checkpoints.map((c: { tag: string; tool: string }) => `${c.tag}:${c.tool}`)).toEqual(['1.1:write_file', '1.2:replace', '2.1:run_shell_command', '2.2:run_shell_command', '3.1:run_shell_command']);
  for (const turn of ['3', '1', '2']) {
    const r = await ckpt(['--session', sid, 'restore', turn, '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(await treeOf(project), `turn ${turn}`).toEqual(trees[turn]);
  }
  const un = await ckpt(['init', 'gemini', '--uninstall', '--json']);
  expect(un.json().changed).toBe(true);
  expect(JSON.parse(await readFile(join(project, '.gemini', 'settings.json'), 'utf8'))).toEqual({ tools: { enableHooks: true }, hooks: { AfterAgent: [{ hooks: [{ type: 'command', command: 'true' }] }] } });
});

it('Gemini CLI started in a subfolder of a git project (--user hooks): the workspace is the git top, changes above the subfolder are restored too', async () => {
  // Found by a real-agent probe: GEMINI_PROJECT_DIR is the folder Gemini started in, so the workspace
  // was that subfolder — a write above it was PATH_ESCAPE, a shell `rm ../x` was never recorded.
  const project = dirs.workspace;
  const src = join(project, 'src');
  const home = join(dirs.base, 'home');
  await mkdir(src, { recursive: true });
  await writeFile(join(project, 'top.txt'), 'top\n');
  await writeFile(join(src, 'a.txt'), 'a\n');
  execSync('git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm init', { cwd: project, shell: '/bin/sh' });
  const ckpt = (args: string[], cwd = project) => runCli(['--store', dirs.store, ...args], { cwd, env: { HOME: home } });
  expect((await ckpt(['init', 'gemini', '--user'])).code).toBe(0);
  const hooks = await loadInstalledHooks(join(home, '.gemini', 'settings.json'), src, 'GEMINI_PROJECT_DIR');
  const s = geminiSession(src);
  const quiet = async (event: Record<string, unknown>) => {
    for (const r of await hooks.fire(event)) expect({ code: r.code, err: r.stderr }).toEqual({ code: 0, err: '' });
  };
  await quiet(ev.sessionStart(s));
  const before = await treeOf(project, ['.git']);
  await quiet(ev.beforeAgent(s, 'tidy up above src'));
  const input = { file_path: join(project, 'NEW.md'), content: 'new\n' };
  await quiet(ev.beforeTool(s, 'write_file', input));
  await writeFile(join(project, 'NEW.md'), 'new\n');
  await quiet(ev.afterTool(s, 'write_file', input));
  const shell = { command: 'rm ../top.txt' };
  await quiet(ev.beforeTool(s, 'run_shell_command', shell));
  execSync('rm ../top.txt', { cwd: src, shell: '/bin/sh' });
  await quiet(ev.afterTool(s, 'run_shell_command', shell));
  const r = await ckpt(['restore', '1', '--yes', '--json'], src);
  expect(r.code, r.stderr).toBe(0);
  expect(await treeOf(project, ['.git'])).toEqual(before);
});

it('a hook command that is gone (checkout moved, the node it names uninstalled) never blocks Gemini: exit 0, strict mode still 2', async () => {
  // Gemini CLI takes any exit but 0 and 1 that prints text for a deny: `sh: …: not found` (127) blocked
  // every prompt ("Agent execution blocked"). Run as Gemini runs a command hook (bash -c, JSON on stdin).
  const project = dirs.workspace;
  const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: project, env: { HOME: join(dirs.base, 'home') } });
  expect((await ckpt(['init', 'gemini', '--project'])).code).toBe(0);
  const settings = JSON.parse(await readFile(join(project, '.gemini', 'settings.json'), 'utf8'));
  const command = settings.hooks.BeforeAgent[0].hooks[0].command as string;
  const s = geminiSession(project);
  const run = (line: string, event: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) =>
    runShell(line, { cwd: project, env: { ...process.env, GEMINI_PROJECT_DIR: project, ...env }, input: JSON.stringify(event) });
  const client = /^\S*ckpt-hook\.sh/.exec(command)?.[0];
  const movedCheckout = client ? command.replace(client, '/nonexistent/ckpt/bin/ckpt-hook.sh') : command.replace(/\S*ckpt\.js/, '/nonexistent/ckpt/bin/ckpt.js');
  const goneNode = command.replace(process.execPath, '/nonexistent/node/bin/node');
  expect(movedCheckout).not.toBe(command);
  expect(goneNode).not.toBe(command);
  for (const line of [movedCheckout, goneNode]) {
    const r = await run(line, ev.beforeAgent(s, 'hello'));
    expect(r.code, `${line}: ${r.stderr}`).toBe(0);
  }
  // Strict mode's deliberate deny of a tool call whose before-image cannot be recorded still exits 2.
  const strict = await run(command, ev.beforeTool(s, 'write_file', { file_path: '/etc/ckpt-outside.txt', content: 'x' }), { CKPT_HOOK_STRICT: '1' });
  expect(strict.code, strict.stderr).toBe(2);
});

it('write_file and replace through a symlink the model names: the link target the tool wrote is captured, so restore 1 puts it back without drift (round-9 Gemini probe)', async () => {
  const project = dirs.workspace;
  const at = (rel: string) => join(project, rel);
  const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: project, env: { HOME: join(dirs.base, 'home') } });
  expect((await ckpt(['init', 'gemini', '--project'])).code).toBe(0);
  const hooks = await loadInstalledHooks(join(project, '.gemini', 'settings.json'), project, 'GEMINI_PROJECT_DIR');
  const s = geminiSession(project);
  const quiet = async (event: Record<string, unknown>) => {
    for (const r of await hooks.fire(event)) expect({ code: r.code, out: r.stdout, err: r.stderr }).toEqual({ code: 0, out: '', err: '' });
  };
  await writeFile(at('a.txt'), 'alpha\n');
  await symlink('a.txt', at('link.txt'));
  await symlink('chain.txt', at('link2.txt'));
  await symlink('b.txt', at('chain.txt')); // a chain ending at a file that does not exist yet
  await quiet(ev.sessionStart(s));
  const before = await treeOf(project);
  await quiet(ev.beforeAgent(s, 'edit through the links'));
  // Gemini CLI writes with fs.writeFile: through the link, to its target.
  const write = async (name: string, input: Record<string, unknown>, content: string) => {
    await quiet(ev.beforeTool(s, name, input));
    await writeFile(resolve(project, input.file_path as string), content);
    await quiet(ev.afterTool(s, name, input));
  };
  await write('write_file', { file_path: 'link.txt', content: 'via link\n' }, 'via link\n');
  await write('replace', { file_path: at('link.txt'), old_string: 'via', new_string: 'VIA' }, 'VIA link\n');
  await write('write_file', { file_path: 'link2.txt', content: 'made through a chain\n' }, 'made through a chain\n');
  const r = await ckpt(['restore', '1', '--yes', '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect(await treeOf(project)).toEqual(before);
  expect(await readFile(at('a.txt'), 'utf8')).toBe('alpha\n');
});
