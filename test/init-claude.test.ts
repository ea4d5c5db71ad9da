// `ckpt init claude` (issue 11): merges ckpt's hooks into Claude Code settings files and takes exactly
// those out again — idempotent, keeping every other hook, setting and the file's formatting, atomic,
// refusing (unchanged) a file that is not JSON. Real files in temp folders, the real CLI.
import { mkdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon } from '../src/http/daemon.js';
import { agentSessionId, openStore } from '../src/index.js';
import { claudeEvents as ev, claudeSession } from './fixtures/claude-events.js';
import { loadInstalledHooks } from './helpers/agent-hooks.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let project: string;
let home: string;
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: project, env: { HOME: home } });
const projectFile = () => join(project, '.claude', 'settings.json');

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-init-');
  project = dirs.workspace;
  home = join(dirs.base, 'home');
  await mkdir(home);
});
afterEach(() => dirs.cleanup());

const OTHER = {
  model: 'opus',
  permissions: { allow: ['Bash(npm test:*)'] },
  hooks: {
    PostToolUse: [{ matcher: 'Write|Edit', hooks: [{ type: 'command', command: 'npx prettier --write "$CLAUDE_FILE"', timeout: 30 }] }],
    Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }],
  },
};

describe('ckpt init claude', () => {
  it('a missing file: created with the five hooks; running again changes nothing; --uninstall leaves no ckpt hook', async () => {
    const r = await ckpt(['init', 'claude', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ file: projectFile(), scope: 'project', changed: true });
    const written = JSON.parse(await readFile(projectFile(), 'utf8'));
    expect(Object.keys(written.hooks)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PreCompact']);
    expect(written.hooks.PreToolUse).toEqual([{ matcher: '*', hooks: [{ type: 'command', command: r.json().command }] }]);
    expect(r.json().command).toMatch(/ckpt\.js --store \S+ hook claude$/);
    const bytes = await readFile(projectFile());
    const again = await ckpt(['init', 'claude', '--project', '--json']);
    expect(again.json()).toMatchObject({ changed: false, changes: [] });
    expect(await readFile(projectFile())).toEqual(bytes);
    expect((await ckpt(['init', 'claude', '--uninstall', '--json'])).json()).toMatchObject({ changed: true });
    expect(JSON.parse(await readFile(projectFile(), 'utf8'))).toEqual({});
  });

  it('says which ckpt the hooks run (this checkout, its version, as package.json says)', async () => {
    const repo = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
    const pkg = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
    const r = await ckpt(['init', 'claude', '--json']);
    expect(r.json().ckpt).toEqual({ version: pkg.version, dir: await realpath(repo), from: 'checkout' });
    expect(r.json().command).toContain(join(await realpath(repo), 'bin', 'ckpt.js'));
    await ckpt(['init', 'claude', '--uninstall']);
    const text = await ckpt(['init', 'claude']);
    expect(text.stdout).toContain(`runs:    ckpt ${pkg.version}, the source checkout ${await realpath(repo)} (rebuilding it is safe`);
    expect((await ckpt(['--version'])).stdout.trim()).toBe(pkg.version);
  });

  it('keeps other hooks, settings and odd formatting (tabs, CRLF, no final newline); uninstall restores the bytes', async () => {
    await mkdir(join(project, '.claude'));
    const original = JSON.stringify(OTHER, null, '\t').replace(/\n/g, '\r\n');
    await writeFile(projectFile(), original);
    const r = await ckpt(['init', 'claude', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const text = await readFile(projectFile(), 'utf8');
    expect(text).toContain('\r\n\t"model": "opus"');
    expect(text.endsWith('}')).toBe(true);
    const merged = JSON.parse(text);
    expect(merged.model).toBe('opus');
    expect(merged.permissions).toEqual(OTHER.permissions);
    expect(merged.hooks.Stop).toEqual(OTHER.hooks.Stop);
    expect(merged.hooks.PostToolUse[0]).toEqual(OTHER.hooks.PostToolUse[0]);
    expect(merged.hooks.PostToolUse).toHaveLength(2);
    await ckpt(['init', 'claude', '--uninstall']);
    expect(await readFile(projectFile(), 'utf8')).toBe(original);
  });

  it('--dry-run prints the changes and writes nothing; a compact one-line file stays one line', async () => {
    await mkdir(join(project, '.claude'));
    await writeFile(projectFile(), '{"model":"opus"}');
    const dry = await ckpt(['init', 'claude', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('would change');
    expect(dry.stdout).toContain('added PreToolUse (matcher *)');
    expect(await readFile(projectFile(), 'utf8')).toBe('{"model":"opus"}');
    await ckpt(['init', 'claude']);
    const text = await readFile(projectFile(), 'utf8');
    expect(text.includes('\n')).toBe(false);
    expect(JSON.parse(text).model).toBe('opus');
  });

  it('refuses a file that is not JSON (or whose hooks are not an object) and changes nothing', async () => {
    await mkdir(join(project, '.claude'));
    for (const content of ['{ "model": "opus", // a comment\n}', '[1, 2]', '{"hooks": [1]}', '{"hooks": {"PreToolUse": {"matcher": "*"}}}']) {
      await writeFile(projectFile(), content);
      const before = await stat(projectFile());
      const r = await ckpt(['init', 'claude', '--json']);
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stderr).error.code).toBe('INVALID_ARGUMENT');
      expect(await readFile(projectFile(), 'utf8')).toBe(content);
      expect((await stat(projectFile())).mtimeMs).toBe(before.mtimeMs);
    }
  });

  it('--local and --user pick their files; an older ckpt command is updated in place, not duplicated', async () => {
    expect((await ckpt(['init', 'claude', '--local', '--json'])).json().file).toBe(join(project, '.claude', 'settings.local.json'));
    const user = (await ckpt(['init', 'claude', '--user', '--json'])).json();
    expect(user.file).toBe(join(home, '.claude', 'settings.json'));
    const file = user.file as string;
    const stale = (await readFile(file, 'utf8')).replaceAll(user.command, '/old/node /old/ckpt/bin/ckpt.js hook claude');
    await writeFile(file, stale);
    const updated = (await ckpt(['init', 'claude', '--user', '--json'])).json();
    expect(updated.changes).toEqual([
      'updated SessionStart',
      'updated UserPromptSubmit',
      'updated PreToolUse (matcher *)',
      'updated PostToolUse (matcher *)',
      'updated PostToolUseFailure (matcher *)',
      'updated PreCompact',
    ]);
    const hooks = JSON.parse(await readFile(file, 'utf8')).hooks;
    expect(hooks.PreToolUse).toEqual([{ matcher: '*', hooks: [{ type: 'command', command: user.command }] }]);
    expect((await ckpt(['init', 'claude', '--user', '--local'])).code).toBe(2);
  });
});

describe('ckpt init claude --http', () => {
  it('refuses without a running daemon (NOT_FOUND), writes nothing', async () => {
    const r = await ckpt(['init', 'claude', '--http', '--json']);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stderr).error).toMatchObject({ code: 'NOT_FOUND', data: { reason: 'no-daemon' } });
    await expect(stat(join(project, '.claude', 'settings.local.json'))).rejects.toThrow();
    expect((await ckpt(['init', 'gemini', '--http'])).code).toBe(2);
  });

  it("installs HTTP hooks to the daemon (token by reference, local settings); Claude Code's posts record a capture; command hooks swap in place; uninstall removes them", async () => {
    const store = await openStore({ dir: dirs.store });
    const daemon = await startDaemon({ store, version: 'test' });
    try {
      const r = await ckpt(['init', 'claude', '--http', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const localFile = join(project, '.claude', 'settings.local.json');
      const realProject = await realpath(project);
      expect(r.json()).toMatchObject({ file: localFile, scope: 'local', changed: true, url: `${daemon.url}/hooks/claude?workspace=${encodeURIComponent(realProject)}` });
      const text = await readFile(localFile, 'utf8');
      expect(text).not.toContain(daemon.token);
      const written = JSON.parse(text);
      expect(Object.keys(written.hooks)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PreCompact']);
      expect(written.hooks.PreToolUse).toEqual([
        { matcher: '*', hooks: [{ type: 'http', url: r.json().url, headers: { Authorization: 'Bearer $CKPT_DAEMON_TOKEN' }, allowedEnvVars: ['CKPT_DAEMON_TOKEN'] }] },
      ]);
      // Claude Code runs SessionStart hooks as commands only: it stays one (issue 26 item 6).
      expect(written.hooks.SessionStart).toEqual([{ hooks: [{ type: 'command', command: r.json().command }] }]);
      expect((await ckpt(['init', 'claude', '--http', '--json'])).json()).toMatchObject({ changed: false });

      // Claude Code posts the events, filling the header from the environment it runs in.
      const hooks = await loadInstalledHooks(localFile, project, 'CLAUDE_PROJECT_DIR');
      const env = { CKPT_DAEMON_TOKEN: daemon.token };
      const s = claudeSession(project);
      await writeFile(join(project, 'a.txt'), 'one\n');
      for (const run of await hooks.fire(ev.sessionStart(s), { env })) expect(run).toMatchObject({ code: 0, stdout: '' });
      const edit = { file_path: join(project, 'a.txt'), old_string: 'one', new_string: 'two' };
      const pre = await hooks.fire(ev.preToolUse(s, 'Edit', edit, 'toolu_1'), { env });
      expect(pre).toMatchObject([{ code: 200, stdout: '{}' }]);
      await writeFile(join(project, 'a.txt'), 'two\n');
      await hooks.fire(ev.postToolUse(s, 'Edit', edit, 'toolu_1', {}), { env });
      const session = await (await store.openWorkspace(project)).get(agentSessionId('claude', s.session_id));
      expect((await session.checkpoints()).map((c) => `${c.tag}:${c.tool}`)).toEqual(['0.1:Edit']);
      expect(await session.readFile('0.1', 'a.txt')).toMatchObject({ content: Buffer.from('one\n') });
      // Without the variable Claude Code sends an empty token: refused, nothing recorded.
      expect(await hooks.fire(ev.preToolUse(s, 'Edit', edit, 'toolu_2'))).toMatchObject([{ code: 401 }]);

      // Command hooks and HTTP hooks replace each other in place; uninstall removes either kind.
      const cmd = (await ckpt(['init', 'claude', '--local', '--json'])).json();
      expect(cmd.changes).toHaveLength(5); // SessionStart is a command hook already
      expect(JSON.parse(await readFile(localFile, 'utf8')).hooks.PreToolUse).toEqual([{ matcher: '*', hooks: [{ type: 'command', command: cmd.command }] }]);
      await ckpt(['init', 'claude', '--http']);
      expect((await ckpt(['init', 'claude', '--local', '--uninstall', '--json'])).json().changes).toHaveLength(6);
      expect(JSON.parse(await readFile(localFile, 'utf8'))).toEqual({});
    } finally {
      await daemon.close();
    }
  });
});
