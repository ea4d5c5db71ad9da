// Claude Code integration end to end (issue 11): `ckpt init claude --project` writes the settings,
// and a Claude-Code-style session is replayed through the *installed* hook commands (sh -c, JSON on
// stdin, project cwd, CLAUDE_PROJECT_DIR, no CKPT_HOME) — Write, Edit, MultiEdit and Bash calls with
// rm, mv, a generator, chmod and ln -s — then the workspace is restored to every turn and compared
// byte for byte, modes and symlinks included. Then the failure cases: nothing breaks the agent.
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEvents as ev, claudeSession, type ClaudeSession } from './fixtures/claude-events.js';
import { treeOf } from './fixtures/scan-world.js';
import { loadInstalledHooks, type InstalledHooks } from './helpers/agent-hooks.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

// These tests cover the in-process path of `ckpt hook` (what the thin client falls back to): no daemon
// is forwarded to or started by the installed `--daemon` hooks (test/agents/ covers the daemon path).
process.env.CKPT_NO_DAEMON = '1';

let dirs: TempDirs;
let project: string;
let hooks: InstalledHooks;
let s: ClaudeSession;
let callN = 0;

const ckpt = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(['--store', dirs.store, ...args], { cwd: project, env });
const at = (rel: string) => join(project, rel);

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-hooks-');
  project = dirs.workspace;
  const init = await ckpt(['init', 'claude', '--project', '--json']);
  expect(init.code, init.stderr).toBe(0);
  hooks = await loadInstalledHooks(join(project, '.claude', 'settings.json'), project, 'CLAUDE_PROJECT_DIR');
  s = claudeSession(project);
});
afterEach(() => dirs.cleanup());

/** Fires an event; every configured command must succeed silently (no warning). */
async function quiet(event: Record<string, unknown>): Promise<void> {
  const runs = await hooks.fire(event);
  for (const r of runs) expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
}

/** One tool call as Claude Code makes it: PreToolUse, the tool's effect, PostToolUse. */
async function tool(name: string, input: Record<string, unknown>, effect: () => Promise<void> | void): Promise<void> {
  const id = `toolu_${String(++callN).padStart(4, '0')}`;
  await quiet(ev.preToolUse(s, name, input, id));
  await effect();
  await quiet(ev.postToolUse(s, name, input, id, name === 'Bash' ? { stdout: '', stderr: '', interrupted: false, isImage: false } : { filePath: input.file_path, success: true }));
}

const bash = (command: string) => tool('Bash', { command, description: command }, () => void execSync(command, { cwd: project, shell: '/bin/sh' }));

describe('ckpt hook claude through the installed settings', () => {
  it('records a session of prompts and tool calls; restoring to every turn gives back each tree exactly', async () => {
    await mkdir(at('src'));
    await writeFile(at('src/a.txt'), 'alpha\n');
    await writeFile(at('src/b.txt'), 'one\ntwo\nthree\n');
    await writeFile(at('run.sh'), '#!/bin/sh\necho run\n', { mode: 0o755 });
    await chmod(at('run.sh'), 0o755);

    await quiet(ev.sessionStart(s, 'startup'));
    const trees: Record<string, Awaited<ReturnType<typeof treeOf>>> = { '0': await treeOf(project) };

    trees['1'] = await treeOf(project);
    await quiet(ev.userPromptSubmit(s, 'Add a README and fix the greeting in a.txt'));
    await tool('Write', { file_path: at('README.md'), content: '# demo\n' }, () => writeFile(at('README.md'), '# demo\n'));
    await tool('Edit', { file_path: at('src/a.txt'), old_string: 'alpha', new_string: 'ALPHA', replace_all: false }, () => writeFile(at('src/a.txt'), 'ALPHA\n'));

    trees['2'] = await treeOf(project);
    await quiet(ev.userPromptSubmit(s, 'Refactor: merge the two files'));
    await tool('MultiEdit', { file_path: 'src/b.txt', edits: [{ old_string: 'one', new_string: '1', replace_all: false }, { old_string: 'three', new_string: '3', replace_all: false }] }, () =>
      writeFile(at('src/b.txt'), '1\ntwo\n3\n'),
    );
    await bash('rm src/a.txt && mv src/b.txt src/c.txt');

    trees['3'] = await treeOf(project);
    await quiet(ev.userPromptSubmit(s, 'Generate fixtures, lock down run.sh and link the readme'));
    await bash('mkdir -p gen && i=0; while [ $i -lt 60 ]; do echo "fixture $i" > gen/f$i.txt; i=$((i+1)); done');
    await bash('chmod 700 run.sh');
    await bash('ln -s README.md docs.md');

    trees['4'] = await treeOf(project);
    await quiet(ev.userPromptSubmit(s, 'Start over on the readme'));
    await tool('Write', { file_path: at('README.md'), content: '# demo, take two\n' }, () => writeFile(at('README.md'), '# demo, take two\n'));
    await bash('rm -r gen && rm docs.md && ln -s src/c.txt docs.md');
    await quiet(ev.preCompact(s, 'manual', 'keep the file list'));
    await quiet(ev.stop(s));
    await quiet(ev.sessionEnd(s));
    const end = await treeOf(project);

    // The log reads like the conversation: each turn with its prompt; the session is tied to Claude's id.
    const sid = `claude-${s.session_id}`;
    const log = (await ckpt(['--session', sid, 'log', '--json'])).json();
    expect(log.turns.map((t: { turn: number; text: string }) => [t.turn, t.text])).toEqual([
      [1, 'Add a README and fix the greeting in a.txt'],
      [2, 'Refactor: merge the two files'],
      [3, 'Generate fixtures, lock down run.sh and link the readme'],
      [4, 'Start over on the readme'],
    ]);
    expect(log.checkpoints.map((c: { tag: string; tool: string }) => `${c.tag}:${c.tool}`)).toEqual([
      '1.1:Write', '1.2:Edit', '2.1:MultiEdit', '2.2:Bash', '3.1:Bash', '3.2:Bash', '3.3:Bash', '4.1:Write', '4.2:Bash',
    ]);
    const shown = (await ckpt(['session', 'show', sid, '--json'])).json();
    expect(shown.session).toMatchObject({ id: sid, title: 'Add a README and fix the greeting in a.txt', agent: 'claude', externalId: s.session_id, cwd: project, transcriptPath: s.transcript_path });
    expect((await eventsOf(sid)).filter((e) => e.type === 'agent_compaction')).toMatchObject([{ trigger: 'manual', instructions: 'keep the file list', agent: 'claude' }]);

    await expectRestoresThenBack(sid, ['4', '1', '3', '0', '2'], trees, end);
  });
});

/** Restores `order`'s turns one after another (each tree as snapshotted), then undoes them all: back to `end`. */
async function expectRestoresThenBack(sid: string, order: string[], trees: Record<string, unknown>, end: unknown): Promise<void> {
  for (const turn of order) {
    const r = await ckpt(['--session', sid, 'restore', turn, '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(await treeOf(project), `tree at turn ${turn}`).toEqual(trees[turn]);
  }
  const back = await ckpt(['--session', sid, 'restore', '@' + String(await lastCaptureSeqBeforeRestores(sid)), '--yes', '--json']);
  expect(back.code, back.stderr).toBe(0);
  expect(await treeOf(project)).toEqual(end);
}

describe('turn starts are exact snapshots (issue 26 items 1, 2)', () => {
  it("a background Task's <task-notification>, which Claude Code submits as a prompt, starts no turn: restore N stays the user's prompt N", async () => {
    await writeFile(at('f.txt'), 'base\n');
    await quiet(ev.sessionStart(s));
    await quiet(ev.userPromptSubmit(s, 'Delegate the job'));
    await quiet(ev.userPromptSubmit(s, '<task-notification>\n<task-id>b7x</task-id>\n<status>completed</status>\n</task-notification>'));
    await tool('Write', { file_path: at('late.txt'), content: 'late\n' }, () => writeFile(at('late.txt'), 'late\n'));
    const before2 = await readFile(at('f.txt'), 'utf8');
    await quiet(ev.userPromptSubmit(s, 'Second prompt'));
    await tool('Write', { file_path: at('two.txt'), content: '2\n' }, () => writeFile(at('two.txt'), '2\n'));
    const log = (await ckpt(['log', '--json'])).json();
    expect(log.turns.map((t: { text: string }) => t.text)).toEqual(['Delegate the job', 'Second prompt']);
    expect((await ckpt(['restore', '2', '--force', '--json'])).code).toBe(0);
    expect(await readFile(at('late.txt'), 'utf8')).toBe('late\n'); // written before prompt 2
    expect(await readFile(at('f.txt'), 'utf8')).toBe(before2);
    await expect(readFile(at('two.txt'), 'utf8')).rejects.toThrow();
  });

  it('hand edits, a new untracked file and a deleted file between prompts are the user\'s; a failing command\'s write is recorded; every turn restores exactly', async () => {
    await writeFile(at('a.txt'), 'one\n');
    await writeFile(at('gone.txt'), 'doomed\n');
    await quiet(ev.sessionStart(s, 'startup'));
    const trees: Record<string, Awaited<ReturnType<typeof treeOf>>> = {};
    trees['1'] = await treeOf(project);
    await quiet(ev.userPromptSubmit(s, 'first'));
    await tool('Write', { file_path: at('a.txt'), content: 'agent\n' }, () => writeFile(at('a.txt'), 'agent\n'));

    // The user, in their own terminal: edits a.txt, adds an untracked file, removes one.
    await writeFile(at('a.txt'), 'hand\n');
    await writeFile(at('notes.txt'), 'mine\n');
    execSync('rm gone.txt', { cwd: project });
    trees['2'] = await treeOf(project);
    await quiet(ev.userPromptSubmit(s, 'second'));
    await bash('echo bash > a.txt && rm notes.txt');

    trees['3'] = await treeOf(project);
    await quiet(ev.userPromptSubmit(s, 'third'));
    // A shell command that writes, then fails: Claude Code sends PostToolUseFailure, not PostToolUse.
    const input = { command: 'echo half > out.txt && false', description: 'fails' };
    await quiet(ev.preToolUse(s, 'Bash', input, 'toolu_fail'));
    await writeFile(at('out.txt'), 'half\n');
    await quiet(ev.postToolUseFailure(s, 'Bash', input, 'toolu_fail', 'Exit code 1'));

    const sid = `claude-${s.session_id}`;
    const log = (await ckpt(['--session', sid, 'log', '--json'])).json();
    // The hand edits are one record of the user's, before turn 2's event (so restore 2 keeps them).
    expect(log.checkpoints.map((c: { tag: string; tool: string }) => `${c.tag}:${c.tool}`)).toEqual(['1.1:Write', '1.2:user', '2.1:Bash', '3.1:Bash']);
    const user = log.checkpoints[1];
    expect(user.files.map((f: { path: string; state: string }) => `${f.path}:${f.state}`).sort()).toEqual(['a.txt:file', 'gone.txt:file', 'notes.txt:absent']);
    expect(user.seq).toBeLessThan(log.turns[1].seq);
    expect(log.checkpoints[3].files.map((f: { path: string }) => f.path)).toEqual(['out.txt']);

    const end = await treeOf(project);
    await expectRestoresThenBack(sid, ['2', '1', '3', '2'], trees, end);
  });
});

describe('a hook never breaks the agent', () => {
  const sid = () => `claude-${s.session_id}`;
  const hookLog = async () => (await readFile(join(dirs.store, 'hooks.log'), 'utf8').catch(() => '')).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));

  /** Fires a hostile or failing event: exit 0, one JSON systemMessage naming `code`, logged, nothing recorded. */
  async function refused(event: Record<string, unknown> | string | Buffer, code: string, options: Parameters<InstalledHooks['fire']>[1] = {}) {
    const before = await eventsOf(sid());
    const runs = await hooks.fire(event, options);
    expect(runs.length).toBeGreaterThan(0);
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { systemMessage: string };
      expect(out.systemMessage).toContain(`[${code}]`);
    }
    expect(await eventsOf(sid())).toEqual(before);
  }

  beforeEach(async () => {
    await writeFile(at('a.txt'), 'a\n');
    await quiet(ev.sessionStart(s));
    await quiet(ev.userPromptSubmit(s, 'go'));
  });

  it('malformed JSON, wrong types and unknown shapes: rejected with their code in the hook log', async () => {
    await refused('{"session_id": "x", "hook_event_name": "PreToolUse", ', 'INVALID_ARGUMENT', { eventName: 'PreToolUse', tool: 'Edit' });
    await refused({ ...ev.preToolUse(s, 'Edit', { file_path: 42 }, 't1') }, 'INVALID_ARGUMENT');
    await refused({ ...ev.preToolUse(s, 'Edit', {}, 't1'), session_id: 7 }, 'INVALID_ARGUMENT');
    await refused({ ...ev.preToolUse(s, 'Write', {}, 't1'), tool_input: 'rm -rf /' }, 'INVALID_ARGUMENT');
    await refused({ ...ev.preToolUse(s, 'Write', { file_path: at('a.txt') }, 't1'), cwd: 'relative/dir' }, 'INVALID_ARGUMENT');
    expect((await hookLog()).map((e: { code: string; reason: string }) => `${e.code}:${e.reason}`)).toEqual([
      'INVALID_ARGUMENT:malformed-json',
      'INVALID_ARGUMENT:bad-path',
      'INVALID_ARGUMENT:wrong-type',
      'INVALID_ARGUMENT:bad-tool-input',
      'INVALID_ARGUMENT:bad-cwd',
    ]);
  });

  it('a file_path outside the project is PATH_ESCAPE: nothing captured, the file untouched by ckpt', async () => {
    const outside = join(dirs.base, 'outside.txt');
    await writeFile(outside, 'secret\n');
    await refused(ev.preToolUse(s, 'Write', { file_path: outside, content: 'x' }, 't1'), 'PATH_ESCAPE');
    await refused(ev.preToolUse(s, 'Edit', { file_path: '../outside.txt', old_string: 'a', new_string: 'b' }, 't2'), 'PATH_ESCAPE');
    expect((await hookLog()).map((e: { code: string }) => e.code)).toEqual(['PATH_ESCAPE', 'PATH_ESCAPE']);
    // Strict mode: the same event blocks the tool call (exit 2, the reason on stderr).
    const strict = await hooks.fire(ev.preToolUse(s, 'Write', { file_path: outside, content: 'x' }, 't3'), { env: { CKPT_HOOK_STRICT: '1' } });
    expect(strict.map((r) => r.code)).toEqual([2]);
    expect(strict[0]!.stderr).toContain('PATH_ESCAPE');
    expect(strict[0]!.stdout).toBe('');
  });

  it('a 20 MB tool_input is rejected unread', async () => {
    const huge = ev.preToolUse(s, 'Write', { file_path: at('big.txt'), content: 'x'.repeat(20 * 1024 * 1024) }, 't1');
    await refused(huge, 'INVALID_ARGUMENT');
    expect((await hookLog()).map((e: { reason: string }) => e.reason)).toEqual(['input-too-large']);
  });

  it('a locked session: LOCKED after the hook lock timeout, exit 0, nothing recorded; the next call records again', async () => {
    const [wid] = await readdir(join(dirs.store, 'workspaces'));
    const holder = await holdLock(dirs.store, `workspaces/${wid}/sessions/${sid()}/events.jsonl`);
    try {
      await refused(ev.preToolUse(s, 'Edit', { file_path: at('a.txt'), old_string: 'a', new_string: 'b' }, 't1'), 'LOCKED', { env: { CKPT_HOOK_LOCK_TIMEOUT_MS: '300' } });
    } finally {
      holder.kill('SIGKILL');
    }
    expect((await hookLog()).map((e: { code: string }) => e.code)).toEqual(['LOCKED']);
    await quiet(ev.preToolUse(s, 'Edit', { file_path: at('a.txt'), old_string: 'a', new_string: 'b' }, 't2'));
  });

  it('strict mode blocks only a tool call whose before-image could not be recorded; prompts and everything else warn (issue 26 item 5)', async () => {
    const [wid] = await readdir(join(dirs.store, 'workspaces'));
    const holder = await holdLock(dirs.store, `workspaces/${wid}/sessions/${sid()}/events.jsonl`);
    const env = { CKPT_HOOK_STRICT: '1', CKPT_HOOK_LOCK_TIMEOUT_MS: '300' };
    try {
      const edit = { file_path: at('a.txt'), old_string: 'a', new_string: 'b' };
      const outcomes: Record<string, number[]> = {};
      for (const [name, event] of [
        ['UserPromptSubmit', ev.userPromptSubmit(s, 'next')],
        ['PostToolUse', ev.postToolUse(s, 'Edit', edit, 't9', {})],
        ['PreCompact', { ...ev.userPromptSubmit(s, ''), hook_event_name: 'PreCompact', trigger: 'manual', custom_instructions: '' }],
        ['PreToolUse', ev.preToolUse(s, 'Edit', edit, 't8')],
      ] as const) {
        const runs = await hooks.fire(event, { env });
        outcomes[name] = runs.map((r) => r.code);
        if (name !== 'PreToolUse') for (const r of runs) expect(JSON.parse(r.stdout).systemMessage, name).toContain('[LOCKED]');
      }
      expect(outcomes).toEqual({ UserPromptSubmit: [0], PostToolUse: [0], PreCompact: [0], PreToolUse: [2] });
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it.runIf(process.platform === 'linux')('a read-only store: exit 0 with a warning saying the hook log could not be written either', async () => {
    const dropDac = process.getuid?.() === 0; // root writes anywhere: run the hook without that capability
    execSync(`chmod -R a-w ${JSON.stringify(dirs.store)}`);
    try {
      const before = await eventsOf(sid());
      const runs = await hooks.fire(ev.preToolUse(s, 'Edit', { file_path: at('a.txt'), old_string: 'a', new_string: 'b' }, 't1'), { dropDac });
      expect(runs.map((r) => r.code)).toEqual([0]);
      const msg = (JSON.parse(runs[0]!.stdout) as { systemMessage: string }).systemMessage;
      expect(msg).toMatch(/\[(IO|LOCKED)\]/);
      expect(msg).toContain('hook log could not be written');
      expect(await eventsOf(sid())).toEqual(before);
    } finally {
      execSync(`chmod -R u+w ${JSON.stringify(dirs.store)}`);
    }
  });
});

const holderScript = fileURLToPath(new URL('./fixtures/storage-lock-holder.ts', import.meta.url));

/** A child process holding a store lock until killed. */
async function holdLock(store: string, key: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', holderScript, store, key, 'hold'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => String(d).includes('locked') && resolve());
    child.on('exit', () => reject(new Error('lock holder exited')));
  });
  return child;
}

/** The session's events, read straight from its log file. */
async function eventsOf(sid: string): Promise<{ seq: number; type: string; [k: string]: unknown }[]> {
  const [wid] = await readdir(join(dirs.store, 'workspaces'));
  const file = join(dirs.store, 'workspaces', wid!, 'sessions', sid, 'events.jsonl');
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.trim() === '' ? [] : text.trim().split('\n').map((l) => JSON.parse(l));
}

/** The seq of the last event before the first restore: the end of the agent's session. */
async function lastCaptureSeqBeforeRestores(sid: string): Promise<number> {
  const firstRestore = (await eventsOf(sid)).find((e) => e.type === 'capture' && e.tool === 'restore')!;
  return firstRestore.seq - 1;
}
