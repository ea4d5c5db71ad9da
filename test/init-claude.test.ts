// `ckpt init claude` (issue 11): merges ckpt's hooks into Claude Code settings files and takes exactly
// those out again — idempotent, keeping every other hook, setting and the file's formatting, atomic,
// refusing (unchanged) a file that is not JSON. Real files in temp folders, the real CLI.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installEntries } from '../src/hooks/agent-spec.js';
import { claude } from '../src/hooks/agents/claude.js';
import { matcherText } from '../src/hooks/install/merge-hooks.js';
import { agentSessionId, openStore } from '../src/index.js';
import { claudeEvents as ev, claudeSession } from './fixtures/claude-events.js';
import { loadInstalledHooks } from './helpers/agent-hooks.js';
import { stopStoreDaemon } from './agents/harness/stop-store-daemon.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let project: string;
let home: string;
// A daemon `init` starts exits by itself after 60 s idle; afterEach stops it at once.
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: project, env: { HOME: home, CKPT_DAEMON_IDLE_EXIT: '60' } });
const TOOL_MATCHER = claude.events.PreToolUse!.matcher!;
const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PreCompact', 'Stop'];
const projectFile = () => join(project, '.claude', 'settings.json');

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-init-');
  project = dirs.workspace;
  home = join(dirs.base, 'home');
  await mkdir(home);
});
afterEach(async () => {
  await stopStoreDaemon(dirs.store); // the daemon `init` started, if any
  await dirs.cleanup();
});

const OTHER = {
  model: 'opus',
  permissions: { allow: ['Bash(npm test:*)'] },
  hooks: {
    PostToolUse: [{ matcher: 'Write|Edit', hooks: [{ type: 'command', command: 'npx prettier --write "$CLAUDE_FILE"', timeout: 30 }] }],
    Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }],
  },
};

describe('ckpt init claude', () => {
  it('a missing file (--project): created with the command hooks; running again changes nothing; --uninstall leaves no ckpt hook', async () => {
    const r = await ckpt(['init', 'claude', '--project', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ file: projectFile(), scope: 'project', changed: true });
    const written = JSON.parse(await readFile(projectFile(), 'utf8'));
    expect(Object.keys(written.hooks)).toEqual(EVENTS);
    expect(written.hooks.PreToolUse).toEqual([{ matcher: TOOL_MATCHER, hooks: [{ type: 'command', command: r.json().command }] }]);
    expect(r.json().command).toMatch(/^\S+\/bin\/ckpt-hook\.sh \S+ --store \S+ hook claude --daemon$/);
    const bytes = await readFile(projectFile());
    const again = await ckpt(['init', 'claude', '--project', '--json']);
    expect(again.json()).toMatchObject({ changed: false, changes: [] });
    expect(await readFile(projectFile())).toEqual(bytes);
    const removed = (await ckpt(['init', 'claude', '--project', '--uninstall', '--json'])).json();
    expect(removed).toMatchObject({ changed: true });
    expect(removed.changes.at(-1)).toBe('removed the file (nothing else was in it)');
    expect(existsSync(projectFile())).toBe(false);
  });

  it('says which ckpt the hooks run (this checkout, its version, as package.json says)', async () => {
    const repo = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
    const pkg = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
    const r = await ckpt(['init', 'claude', '--project', '--json']);
    expect(r.json().ckpt).toEqual({ version: pkg.version, dir: await realpath(repo), from: 'checkout' });
    // The shell hook client beside this checkout's bin/ckpt.js, with node's absolute path.
    expect(r.json().command).toContain(`${join(await realpath(repo), 'bin', 'ckpt-hook.sh')} ${process.execPath} `);
    await ckpt(['init', 'claude', '--project', '--uninstall']);
    const text = await ckpt(['init', 'claude', '--project']);
    expect(text.stdout).toContain(`runs:    ckpt ${pkg.version}, the source checkout ${await realpath(repo)} (rebuilding it is safe`);
    expect((await ckpt(['--version'])).stdout.trim()).toBe(pkg.version);
  });

  it('the tool matcher skips exactly the read-only tools (no hook runs for them); any other tool, an MCP one too, is recorded', () => {
    const m = new RegExp(TOOL_MATCHER);
    for (const t of claude.passiveTools) expect(m.test(t), t).toBe(false);
    for (const t of ['Write', 'Edit', 'Bash', 'NotebookEdit', 'Task', 'mcp__fs__write_file', 'ReadX', 'XRead']) expect(m.test(t), t).toBe(true);
  });

  it("Claude Code 2.1.328 matches a tool's legacy names too: no name of a passive tool gets through (round-6 probe)", () => {
    const m = new RegExp(TOOL_MATCHER);
    // Its alias map (legacy name -> tool). A hook runs when the matcher accepts the tool's name or any legacy name
    // of it: ListAgents ran ckpt's hooks with only "ListAgents" listed (its old name ListPeers matched).
    const LEGACY: Record<string, string> = { Task: 'Agent', KillShell: 'TaskStop', KillBash: 'TaskStop', ListPeers: 'ListAgents', ListMcpResources: 'ListMcpResourcesTool', ReadMcpResource: 'ReadMcpResourceTool', ReadMcpResourceDir: 'ReadMcpResourceDirTool' };
    const runsHook = (tool: string) => [tool, ...Object.keys(LEGACY).filter((old) => LEGACY[old] === tool)].some((n) => m.test(n));
    // Its read-only tools (listing agents, reporting review findings, pacing /loop, MCP resources, stopping a task),
    // and every tool a passive legacy name stands for now.
    for (const t of ['Read', 'ListAgents', 'ReportFindings', 'ScheduleWakeup', 'ListMcpResourcesTool', 'ReadMcpResourceTool', 'ReadMcpResourceDirTool', 'TaskStop']) expect(runsHook(t), t).toBe(false);
    for (const t of claude.passiveTools) expect(runsHook(LEGACY[t] ?? t), `${t} (${LEGACY[t] ?? t})`).toBe(false);
    for (const t of ['Write', 'Edit', 'Bash', 'NotebookEdit', 'Agent', 'Workflow', 'SendMessage', 'mcp__fs__write_file']) expect(runsHook(t), t).toBe(true);
  });

  it('keeps other hooks, settings and odd formatting (tabs, CRLF, no final newline); uninstall restores the bytes', async () => {
    await mkdir(join(project, '.claude'));
    const original = JSON.stringify(OTHER, null, '\t').replace(/\n/g, '\r\n');
    await writeFile(projectFile(), original);
    const r = await ckpt(['init', 'claude', '--project', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const text = await readFile(projectFile(), 'utf8');
    expect(text).toContain('\r\n\t"model": "opus"');
    expect(text.endsWith('}')).toBe(true);
    const merged = JSON.parse(text);
    expect(merged.model).toBe('opus');
    expect(merged.permissions).toEqual(OTHER.permissions);
    expect(merged.hooks.Stop[0]).toEqual(OTHER.hooks.Stop[0]);
    expect(merged.hooks.Stop).toHaveLength(2);
    expect(merged.hooks.PostToolUse[0]).toEqual(OTHER.hooks.PostToolUse[0]);
    expect(merged.hooks.PostToolUse).toHaveLength(2);
    await ckpt(['init', 'claude', '--project', '--uninstall']);
    expect(await readFile(projectFile(), 'utf8')).toBe(original);
  });

  it('--dry-run prints the changes and writes nothing; a compact one-line file stays one line', async () => {
    await mkdir(join(project, '.claude'));
    await writeFile(projectFile(), '{"model":"opus"}');
    const dry = await ckpt(['init', 'claude', '--project', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('would change');
    // The read-only tools' matcher (~700 characters) is said in words (a newcomer saw it three times).
    expect(dry.stdout).toMatch(/added PreToolUse \(every tool but \d+ read-only ones: Read, Glob, Grep, LS, …\)/);
    expect(dry.stdout).not.toContain(TOOL_MATCHER);
    expect(await readFile(projectFile(), 'utf8')).toBe('{"model":"opus"}');
    await ckpt(['init', 'claude', '--project']);
    const text = await readFile(projectFile(), 'utf8');
    expect(text.includes('\n')).toBe(false);
    expect(JSON.parse(text).model).toBe('opus');
  });

  it('refuses a file that is not JSON (or whose hooks are not an object) and changes nothing', async () => {
    await mkdir(join(project, '.claude'));
    for (const content of ['{ "model": "opus", // a comment\n}', '[1, 2]', '{"hooks": [1]}', '{"hooks": {"PreToolUse": {"matcher": "*"}}}']) {
      await writeFile(projectFile(), content);
      const before = await stat(projectFile());
      const r = await ckpt(['init', 'claude', '--project', '--json']);
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stderr).error.code).toBe('INVALID_ARGUMENT');
      expect(await readFile(projectFile(), 'utf8')).toBe(content);
      expect((await stat(projectFile())).mtimeMs).toBe(before.mtimeMs);
    }
  });

  it('--local and --user pick their files; an older ckpt command is updated in place, not duplicated', async () => {
    expect((await ckpt(['init', 'claude', '--local', '--command', '--json'])).json().file).toBe(join(project, '.claude', 'settings.local.json'));
    const user = (await ckpt(['init', 'claude', '--user', '--json'])).json();
    expect(user.file).toBe(join(home, '.claude', 'settings.json'));
    const file = user.file as string;
    const stale = (await readFile(file, 'utf8')).replaceAll(user.command, '/old/node /old/ckpt/bin/ckpt.js hook claude');
    await writeFile(file, stale);
    const updated = (await ckpt(['init', 'claude', '--user', '--json'])).json();
    expect(updated.changes).toEqual(installEntries(claude).map((e) => `updated ${e.event}${e.matcher ? ` (${matcherText(e.matcher)})` : ''}`));
    const hooks = JSON.parse(await readFile(file, 'utf8')).hooks;
    expect(hooks.PreToolUse).toEqual([{ matcher: TOOL_MATCHER, hooks: [{ type: 'command', command: user.command }] }]);
    expect((await ckpt(['init', 'claude', '--user', '--local'])).code).toBe(2);
  });

  it("says when ckpt's hooks are also in another of Claude Code's files (both would run: every event recorded twice)", async () => {
    const local = join(project, '.claude', 'settings.local.json');
    const first = (await ckpt(['init', 'claude', '--local', '--command', '--json'])).json();
    expect(first.notes ?? []).not.toContainEqual(expect.stringContaining('also in'));
    // The README's old advice: plain --command, which writes the shared file and leaves the local one.
    expect((await ckpt(['init', 'claude', '--command'])).stdout).toContain(`note: ckpt's Claude Code hooks are also in ${local}`);
    const shared = await ckpt(['init', 'claude', '--command', '--json']);
    expect(shared.json().file).toBe(join(project, '.claude', 'settings.json'));
    expect(shared.json().notes).toContainEqual(
      `ckpt's Claude Code hooks are also in ${local}: Claude Code runs both, so every event would be recorded twice; remove them there with \`ckpt init claude --local --uninstall\``,
    );
    // Removed there, the note is gone; an uninstall never says it.
    expect((await ckpt(['init', 'claude', '--local', '--uninstall', '--json'])).json().notes ?? []).toEqual([]);
    expect((await ckpt(['init', 'claude', '--command', '--json'])).json().notes ?? []).not.toContainEqual(expect.stringContaining('also in'));
  });
});

describe('ckpt init claude: the default install (issue 28)', () => {
  it('CKPT_DISABLE=1 in the agent\'s environment records no capture through the daemon (command hooks by the thin client, tool events by HTTP); turns still are, and capture resumes without it', async () => {
    expect((await ckpt(['init', 'claude', '--json'])).code).toBe(0);
    const hooks = await loadInstalledHooks(join(project, '.claude', 'settings.local.json'), project, 'CLAUDE_PROJECT_DIR');
    const s = claudeSession(project);
    await writeFile(join(project, 'a.txt'), 'one\n');
    const off = { env: { CKPT_DISABLE: '1' } };
    for (const run of await hooks.fire(ev.sessionStart(s), off)) expect(run).toMatchObject({ code: 0, stderr: '' });
    for (const run of await hooks.fire(ev.userPromptSubmit(s, 'while off'), off)) expect(run).toMatchObject({ code: 0, stderr: '' });
    const edit = { file_path: join(project, 'a.txt'), old_string: 'one', new_string: 'two' };
    expect(await hooks.fire(ev.preToolUse(s, 'Edit', edit, 'toolu_1'), off)).toMatchObject([{ code: 200 }]);
    await writeFile(join(project, 'a.txt'), 'two\n');
    expect(await hooks.fire(ev.postToolUse(s, 'Edit', edit, 'toolu_1', {}), off)).toMatchObject([{ code: 200 }]);
    await writeFile(join(project, 'b.txt'), 'by the shell\n');
    for (const run of await hooks.fire({ ...ev.sessionStart(s), hook_event_name: 'Stop' }, off)) expect(run).toMatchObject({ code: 0 });
    const store = await openStore({ dir: dirs.store });
    const session = await (await store.openWorkspace(project)).get(agentSessionId('claude', s.session_id));
    const types = async () => (await session.events()).map((e) => e.type);
    expect(await types()).not.toContain('capture');
    expect(await types()).toEqual(['session', 'turn', 'title']);
    // Switched back on: the next tool call records again.
    await writeFile(join(project, 'a.txt'), 'three\n');
    const edit2 = { file_path: join(project, 'a.txt'), old_string: 'three', new_string: 'four' };
    expect(await hooks.fire(ev.preToolUse(s, 'Edit', edit2, 'toolu_2'))).toMatchObject([{ code: 200 }]);
    expect(await types()).toContain('capture');
    await store.close();
  });

  it("starts the daemon; per-tool-call events are HTTP hooks with this workspace's credential (no token; only CKPT_DISABLE by env reference), once-per-prompt ones command hooks; both record; Stop scans what no tool hook saw", async () => {
    const r = await ckpt(['init', 'claude', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const localFile = join(project, '.claude', 'settings.local.json');
    const realProject = await realpath(project);
    const claim = JSON.parse(await readFile(join(dirs.store, 'daemon', 'daemon.json'), 'utf8')) as { url: string; pid: number };
    expect(r.json()).toMatchObject({ file: localFile, scope: 'local', changed: true, url: `${claim.url}/hooks/claude?workspace=${encodeURIComponent(realProject)}` });
    const text = await readFile(localFile, 'utf8');
    const token = (await readFile(join(dirs.store, 'daemon', 'token'), 'utf8')).trim();
    expect(text).not.toContain(token);
    const written = JSON.parse(text);
    expect(Object.keys(written.hooks)).toEqual(EVENTS);
    const credential = written.hooks.PreToolUse[0].hooks[0].headers.Authorization as string;
    expect(credential).toMatch(/^Bearer ckh1\.[\w-]{43}$/);
    for (const e of ['PreToolUse', 'PostToolUse', 'PostToolUseFailure']) {
      expect(written.hooks[e]).toEqual([{ matcher: TOOL_MATCHER, hooks: [{ type: 'http', url: r.json().url, headers: { Authorization: credential, 'X-Ckpt-Disable': '$CKPT_DISABLE' }, allowedEnvVars: ['CKPT_DISABLE'] }] }]);
    }
    for (const e of ['SessionStart', 'UserPromptSubmit', 'PreCompact', 'Stop']) expect(written.hooks[e]).toEqual([{ hooks: [{ type: 'command', command: r.json().command }] }]);
    expect((await ckpt(['init', 'claude', '--json'])).json()).toMatchObject({ changed: false });

    const hooks = await loadInstalledHooks(localFile, project, 'CLAUDE_PROJECT_DIR');
    const s = claudeSession(project);
    await writeFile(join(project, 'a.txt'), 'one\n');
    // The command hooks go through the thin client to the running daemon: silent, nothing said.
    for (const run of await hooks.fire(ev.sessionStart(s))) expect(run).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const edit = { file_path: join(project, 'a.txt'), old_string: 'one', new_string: 'two' };
    expect(await hooks.fire(ev.preToolUse(s, 'Edit', edit, 'toolu_1'))).toMatchObject([{ code: 200, stdout: '{}' }]);
    await writeFile(join(project, 'a.txt'), 'two\n');
    expect(await hooks.fire(ev.postToolUse(s, 'Edit', edit, 'toolu_1', {}))).toMatchObject([{ code: 200, stdout: '{}' }]);
    // A read-only tool: no hook at all.
    expect(await hooks.fire(ev.preToolUse(s, 'Read', { file_path: join(project, 'a.txt') }, 'toolu_2'))).toEqual([]);
    // A change no tool hook reported (an HTTP hook lost while the daemon was down): the Stop hook's scan records it.
    await writeFile(join(project, 'b.txt'), 'unseen\n');
    for (const run of await hooks.fire({ ...ev.sessionStart(s), hook_event_name: 'Stop' })) expect(run).toMatchObject({ code: 0, stdout: '' });
    const store = await openStore({ dir: dirs.store });
    const session = await (await store.openWorkspace(project)).get(agentSessionId('claude', s.session_id));
    expect((await session.checkpoints()).map((c) => `${c.tag}:${c.tool}`)).toEqual(['0.1:Edit', '0.2:Stop']);
    expect(await session.readFile('0.1', 'a.txt')).toMatchObject({ content: Buffer.from('one\n') });

    // The credential records into its workspace only: another workspace, or any other route, is refused.
    const other = `${claim.url}/hooks/claude?workspace=${encodeURIComponent(dirs.base)}`;
    const post = (url: string, auth: string, body = '{}') => fetch(url, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body });
    expect((await post(other, credential)).status).toBe(401);
    expect((await fetch(`${claim.url}/sessions?workspace=${encodeURIComponent(realProject)}`, { headers: { authorization: credential } })).status).toBe(401);
    expect((await post(`${claim.url}/sessions/${session.id}/scan`, credential, JSON.stringify({ workspace: realProject }))).status).toBe(401);
    expect((await post(r.json().url, credential.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')))).status).toBe(401);

    expect((await ckpt(['init', 'claude', '--uninstall', '--json'])).json().changes).toHaveLength(EVENTS.length + 1);
    expect(existsSync(localFile)).toBe(false);
  });

  it('whatever the umask, nothing it writes is writable by others, and the file holding the credential is the owner\'s alone', async () => {
    // An existing local settings file readable by all (0644) gets the credential: it becomes 0600.
    await mkdir(join(project, '.claude'));
    await writeFile(join(project, '.claude', 'settings.local.json'), '{"model":"opus"}', { mode: 0o644 });
    const before = process.umask(0);
    let r;
    try {
      r = await ckpt(['init', 'claude', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect((await stat(join(project, '.claude', 'settings.local.json'))).mode & 0o777).toBe(0o600);
      // New files and folders under umask 000: the project-scope command hooks, and Codex's.
      expect((await ckpt(['init', 'claude', '--project', '--command', '--json'])).code).toBe(0);
      expect((await ckpt(['init', 'codex', '--json'])).code).toBe(0);
    } finally {
      process.umask(before);
    }
    expect((await stat(projectFile())).mode & 0o777).toBe(0o644);
    expect((await stat(join(project, '.codex'))).mode & 0o777).toBe(0o755);
    expect((await stat(join(project, '.codex', 'hooks.json'))).mode & 0o777).toBe(0o644);
  });

  it('in a git work tree that does not ignore it, a note says to keep the credential file out of git', async () => {
    execFileSync('git', ['init', '-q', project]);
    const note = (json: { notes?: string[] }) => (json.notes ?? []).filter((n) => n.includes("hook credential: keep it out of git"));
    expect(note((await ckpt(['init', 'claude', '--json'])).json())).toHaveLength(1);
    await writeFile(join(project, '.gitignore'), '.claude/settings.local.json\n');
    expect(note((await ckpt(['init', 'claude', '--json'])).json())).toHaveLength(0);
  });

  it('--dry-run with no daemon running says the real run starts one (HTTP hooks), starts none, writes nothing; --http --dry-run is no error', async () => {
    const localFile = join(project, '.claude', 'settings.local.json');
    for (const args of [['init', 'claude', '--dry-run'], ['init', 'claude', '--http', '--dry-run']]) {
      const text = await ckpt(args);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toContain(`no ckpt daemon runs for the store ${dirs.store} yet: without --dry-run, init starts one`);
      expect(text.stdout).not.toContain('command hooks only');
      expect(text.stdout).not.toContain('ckpt serve');
      const json = (await ckpt([...args, '--json'])).json();
      expect(json).toMatchObject({ dryRun: true, changed: true, file: localFile });
      expect(json.notes).toEqual([expect.stringContaining('init starts one')]);
    }
    await expect(stat(join(dirs.store, 'daemon', 'daemon.json'))).rejects.toThrow();
    await expect(stat(localFile)).rejects.toThrow();
    // With the store from $CKPT_STORE, the dry run shows the command hooks the real run writes (the store pinned).
    const fromEnv = (args: string[]) => runCli(args, { cwd: project, env: { HOME: home, CKPT_DAEMON_IDLE_EXIT: '60', CKPT_STORE: dirs.store } });
    const dry = (await fromEnv(['init', 'claude', '--dry-run', '--json'])).json();
    // The real run does what the dry run said: HTTP hooks to the daemon it started.
    const real = (await fromEnv(['init', 'claude', '--json'])).json();
    expect(real.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/claude\?workspace=/);
    expect(dry.command).toBe(real.command);
    expect(real.command).toContain(`--store ${dirs.store}`);
  });

  it('a daemon back on another port (its port taken): the next prompt hook re-points the HTTP hooks at it, and stops the prompts of the agent process that still posts to the old port until it restarts; its log holds no login code', async () => {
    expect((await ckpt(['init', 'claude', '--json'])).code).toBe(0);
    const localFile = join(project, '.claude', 'settings.local.json');
    const claimFile = join(dirs.store, 'daemon', 'daemon.json');
    const logFile = join(dirs.store, 'daemon', 'serve.log');
    const first = JSON.parse(await readFile(claimFile, 'utf8')) as { port: number };
    /** The daemon's log once it says where it listens (it prints that after its claim). */
    const logOnce = async (port: number): Promise<string> => {
      let text = '';
      for (let i = 0; i < 200 && !text.includes(`listening on http://127.0.0.1:${port}`); i++) {
        await new Promise((r) => setTimeout(r, 50));
        text = await readFile(logFile, 'utf8').catch(() => '');
      }
      return text;
    };
    // The daemon hooks start logs to a file: no one-time login code there (it is a secret at rest).
    const log1 = await logOnce(first.port);
    expect(log1).toContain(`listening on http://127.0.0.1:${first.port}`);
    expect(log1).not.toMatch(/code=/);
    const before = JSON.parse(await readFile(localFile, 'utf8'));
    await writeFile(localFile, JSON.stringify({ ...before, hooks: { ...before.hooks, Stop: [...before.hooks.Stop, ...OTHER.hooks.Stop] } }, null, 2));
    // The daemon stops; another process takes its port; the next prompt's hook starts a new daemon, elsewhere.
    await stopStoreDaemon(dirs.store); // the daemon `init` started, if any
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(first.port, '127.0.0.1', r));
    try {
      const s = claudeSession(project);
      let hooks = await loadInstalledHooks(localFile, project, 'CLAUDE_PROJECT_DIR');
      // No daemon runs, yet the port this agent process's HTTP hooks post to answers: its prompt is
      // stopped (the hook starts the daemon, elsewhere).
      const [first1] = await hooks.fire(ev.userPromptSubmit(s, 'one'));
      expect(first1).toMatchObject({ code: 2, stderr: expect.stringContaining(`its daemon is not running, yet something listens on port ${first.port}`) });
      let claim: { port?: number } = {};
      for (let i = 0; i < 200 && !(claim.port && claim.port !== first.port); i++) {
        await new Promise((r) => setTimeout(r, 100));
        claim = JSON.parse((await readFile(claimFile, 'utf8').catch(() => undefined)) ?? '{}') as { port?: number };
      }
      expect(claim.port).toBeGreaterThan(0);
      expect(claim.port).not.toBe(first.port);
      // Its HTTP hooks still post to the old port (the squatter): the prompt hook reaches the new daemon and re-points them.
      // That agent process (it read its hooks when it started) would send its tool calls to the
      // squatter, which could answer for ckpt (found by a daemon probe): its prompt is stopped.
      const [said] = await hooks.fire(ev.userPromptSubmit(s, 'two'));
      const stopped = new RegExp(`sends its tool calls' HTTP hooks to port ${first.port}, which ckpt's daemon does not hold \\(it listens on port ${claim.port}.*Restart Claude Code`);
      expect(said).toMatchObject({ code: 2, stderr: expect.stringMatching(stopped) }); // the command hook's way to block a prompt
      const after = JSON.parse(await readFile(localFile, 'utf8'));
      for (const e of ['PreToolUse', 'PostToolUse', 'PostToolUseFailure']) {
        expect(after.hooks[e][0].hooks[0].url).toBe(before.hooks[e][0].hooks[0].url.replace(`:${first.port}/`, `:${claim.port}/`));
        expect(after.hooks[e][0].hooks[0].headers).toEqual(before.hooks[e][0].hooks[0].headers);
      }
      expect(after.hooks.Stop).toEqual([...before.hooks.Stop, ...OTHER.hooks.Stop]); // everything else as it was
      // So is its next one (nothing left to re-point), and its /clear is no restart.
      expect((await hooks.fire(ev.userPromptSubmit(s, 'three')))[0]).toMatchObject({ code: 2 });
      await hooks.fire(ev.sessionStart(s, 'clear'));
      expect((await hooks.fire(ev.userPromptSubmit(s, 'four')))[0]).toMatchObject({ code: 2 });
      // Restarted, it reads the re-pointed hooks: its prompts go on, and its HTTP hooks reach the daemon and record.
      hooks = await loadInstalledHooks(localFile, project, 'CLAUDE_PROJECT_DIR');
      expect((await hooks.fire(ev.sessionStart(s, 'resume')))[0]).toMatchObject({ code: 0 });
      expect((await hooks.fire(ev.userPromptSubmit(s, 'five')))[0]).toMatchObject({ code: 0, stdout: '' });
      await writeFile(join(project, 'a.txt'), 'one\n');
      const edit = { file_path: join(project, 'a.txt'), old_string: 'one', new_string: 'two' };
      expect(await hooks.fire(ev.preToolUse(s, 'Edit', edit, 'toolu_9'))).toMatchObject([{ code: 200, stdout: '{}' }]);
      const log2 = await logOnce(claim.port!);
      expect(log2).toContain(`listening on http://127.0.0.1:${claim.port}`);
      expect(log2).not.toMatch(/code=/);
      // The stopped prompts made no turn (they never reached the model): only the last one did.
      const session = await (await (await openStore({ dir: dirs.store })).openWorkspace(project)).get(agentSessionId('claude', s.session_id));
      expect((await session.events()).filter((e) => e.type === 'turn').map((e) => e.text)).toEqual(['five']);
    } finally {
      await new Promise((r) => squatter.close(r));
    }
  });

  it('--http: every event but SessionStart as an HTTP hook; --command swaps them in place; --user --http sends the token by env reference; gemini has no HTTP hooks', async () => {
    const localFile = join(project, '.claude', 'settings.local.json');
    const r = await ckpt(['init', 'claude', '--http', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const hooks = JSON.parse(await readFile(localFile, 'utf8')).hooks;
    expect(hooks.SessionStart[0].hooks[0].type).toBe('command');
    for (const e of EVENTS.slice(1)) expect(hooks[e][0].hooks[0]).toMatchObject({ type: 'http', url: r.json().url });
    const cmd = (await ckpt(['init', 'claude', '--local', '--command', '--json'])).json();
    expect(cmd.changes).toHaveLength(EVENTS.length - 1);
    expect(JSON.parse(await readFile(localFile, 'utf8')).hooks.PreToolUse).toEqual([{ matcher: TOOL_MATCHER, hooks: [{ type: 'command', command: cmd.command }] }]);
    const user = (await ckpt(['init', 'claude', '--user', '--http', '--json'])).json();
    const userHooks = JSON.parse(await readFile(user.file, 'utf8')).hooks;
    expect(userHooks.PreToolUse[0].hooks[0]).toMatchObject({ type: 'http', headers: { Authorization: 'Bearer $CKPT_DAEMON_TOKEN', 'X-Ckpt-Disable': '$CKPT_DISABLE' }, allowedEnvVars: ['CKPT_DAEMON_TOKEN', 'CKPT_DISABLE'] });
    expect((await ckpt(['init', 'gemini', '--http'])).code).toBe(2);
    expect((await ckpt(['init', 'claude', '--http', '--command'])).code).toBe(2);
  });
});

describe('ckpt init: which store the command hooks use', () => {
  it('--store with a shared store URL is written into the hooks as it is (it was resolved as a folder path)', async () => {
    const url = 'postgres://ckpt@127.0.0.1:1/ckpt?blobs=s3://team-ckpt';
    const r = await runCli(['--store', url, 'init', 'claude', '--command', '--dry-run', '--json'], { cwd: project, env: { HOME: home } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().command).toMatch(/ --store 'postgres:\/\/ckpt@127\.0\.0\.1:1\/ckpt\?blobs=s3:\/\/team-ckpt' hook claude --daemon$/);
    // A folder is resolved against the working directory, as before.
    const rel = await runCli(['--store', 'rel-store', 'init', 'claude', '--command', '--dry-run', '--json'], { cwd: project, env: { HOME: home } });
    expect(rel.json().command).toContain(` --store ${join(project, 'rel-store')} hook claude`);
  });

  it('a store from $CKPT_HOME (no --store): a note says the hooks find it from the agent\'s environment', async () => {
    const r = await runCli(['init', 'claude', '--command', '--dry-run', '--json'], { cwd: project, env: { HOME: home, CKPT_HOME: dirs.store, CKPT_STORE: '' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().command).not.toContain('--store');
    expect(r.json().notes).toEqual([expect.stringContaining('the command hooks find the store from $CKPT_HOME as ckpt does: start Claude Code where it is set')]);
    const withFlag = await runCli(['--store', dirs.store, 'init', 'claude', '--command', '--dry-run', '--json'], { cwd: project, env: { HOME: home, CKPT_HOME: dirs.store } });
    expect(withFlag.json().notes).toBeUndefined();
  });

  it('a store from $CKPT_HOME with HTTP hooks (the default install): the command hooks are pinned to the store whose daemon the HTTP hooks name', async () => {
    const r = await runCli(['init', 'claude', '--json'], { cwd: project, env: { HOME: home, CKPT_HOME: dirs.store, CKPT_STORE: '', CKPT_DAEMON_IDLE_EXIT: '60' } });
    expect(r.code, r.stderr).toBe(0);
    const hooks = JSON.parse(await readFile(r.json().file, 'utf8')).hooks;
    expect(hooks.PreToolUse[0].hooks[0].type).toBe('http');
    expect(hooks.SessionStart[0].hooks[0].command).toContain(` --store ${dirs.store} hook claude`);
    expect(r.json().notes).toEqual([expect.stringContaining(`started ckpt's daemon for the store ${dirs.store}`), expect.stringContaining(`the hooks use the store ${dirs.store} (from $CKPT_HOME)`)]);
  });
});
