// The real Codex CLI (@openai/codex 0.169.0) against a scripted fake model (Responses API SSE), with
// ckpt's hooks installed by `ckpt init codex --user`: three prompts of apply_patch edits (adds, updates,
// a move written with an absolute path, a delete) and shell commands (a generator, chmod, a symlink, a
// failing command that still wrote a file). Every turn is restored exactly, and each restore undone.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Step } from './fake-model.js';
import { makeCliAgentWorld, type CliAgentWorld } from './harness/cli-agents.js';
import { runCli } from '../helpers/cli.js';
import { processAlive } from '../../src/process-alive.js';

const P1 = 'Add a README, fix the greeting and generate fixtures';
const P2 = 'Rename b to c, drop a, lock down run.sh and link the readme';
const P3 = 'Clean up the fixtures and rewrite the readme';
/** In a second project, while the daemon the first one's hooks started runs. */
const P4 = 'Second project: fix the title and add notes';

let w: CliAgentWorld;

beforeAll(async () => {
  const patch = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');
  w = await makeCliAgentWorld('codex', {
    files: { 'src/a.txt': 'alpha\n', 'src/b.txt': 'one\ntwo\nthree\n', 'run.sh': '#!/bin/sh\necho run\n' },
    script: (ws) => ({
      [P1]: [
        { custom: 'apply_patch', input: patch('*** Add File: README.md', '+# demo', '*** Update File: src/a.txt', '@@', '-alpha', '+ALPHA') },
        { tool: 'exec_command', args: { cmd: 'mkdir -p gen && for i in 1 2 3 4 5; do echo "fixture $i" > gen/f$i.txt; done' } },
        { text: 'Done.' },
      ],
      [P2]: [
        // The model may write absolute paths: the hook reads them from the patch headers as they are.
        { custom: 'apply_patch', input: patch(`*** Update File: ${ws}/src/b.txt`, '*** Move to: src/c.txt', '@@', '-two', '+2', '*** Delete File: src/a.txt') },
        { tool: 'exec_command', args: { cmd: 'chmod 700 run.sh && ln -s README.md docs.md' } },
        { tool: 'exec_command', args: { cmd: 'echo partial > partial.txt && ls does-not-exist' } },
        { text: 'Done.' },
      ],
      [P3]: [
        { tool: 'exec_command', args: { cmd: 'rm -r gen && rm docs.md partial.txt' } },
        { custom: 'apply_patch', input: patch('*** Update File: README.md', '@@', '-# demo', '+# demo, take two') },
        { text: 'Done.' },
      ],
      [P4]: [
        { custom: 'apply_patch', input: patch('*** Update File: title.txt', '@@', '-old title', '+new title') },
        { tool: 'exec_command', args: { cmd: 'echo notes > notes.txt && rm scratch.txt' } },
        { text: 'Done.' },
      ],
    }),
  });
}, 600_000);
afterAll(() => w?.close());

it('records a Codex CLI session: every turn restores exactly, every restore undoes', async () => {
  await w.prompt(P1);
  await w.prompt(P2);
  await w.prompt(P3);
  const log = await w.json(['log']);
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual([P1, P2, P3]);
  expect(log.checkpoints.map((c: { tag: string; tool: string }) => `${c.tag}:${c.tool}`)).toEqual([
    '1.1:apply_patch', '1.2:Bash', '2.1:apply_patch', '2.2:Bash', '2.3:Bash', '3.1:Bash', '3.2:apply_patch',
  ]);
  // Edits are captured before Codex applies them (no `reason`: not a scan), naming the patch's files —
  // a move's source and destination, a delete, a path written absolute; shell calls are scanned after,
  // a failing one too.
  const files = (await w.json(['log', '--files'])).checkpoints.map((c: { tag: string; reason?: string; files: { path: string; state: string }[] }) => [
    c.tag,
    c.reason ?? 'capture',
    c.files.map((f) => `${f.path}:${f.state}`).join(' '),
  ]);
  expect(files).toEqual([
    ['1.1', 'capture', 'README.md:absent src/a.txt:file'],
    ['1.2', 'scan', 'gen:absent gen/f1.txt:absent gen/f2.txt:absent gen/f3.txt:absent gen/f4.txt:absent gen/f5.txt:absent'],
    ['2.1', 'capture', 'src/b.txt:file src/c.txt:absent src/a.txt:file'],
    ['2.2', 'scan', 'docs.md:absent run.sh:file'],
    ['2.3', 'scan', 'partial.txt:absent'],
    ['3.1', 'scan', 'docs.md:symlink gen:dir gen/f1.txt:file gen/f2.txt:file gen/f3.txt:file gen/f4.txt:file gen/f5.txt:file partial.txt:file'],
    ['3.2', 'capture', 'README.md:file'],
  ]);
  expect(await w.checkRestores([P3, P1, P2])).toEqual([]);
  expect(await w.hookFailures()).toEqual([]);
}, 1_200_000);

it('a second project of the user-scope install, while the daemon runs: recorded, and restored exactly', async () => {
  // The daemon the first project's hooks started must be running (it refused such a folder, and the
  // project was recorded nowhere: DESIGN §10, fourth session).
  const claim = JSON.parse(readFileSync(join(w.store, 'daemon', 'daemon.json'), 'utf8')) as { pid: number };
  expect(processAlive(claim.pid)).toBe(true);
  const second = join(dirname(w.ws), 'second');
  mkdirSync(second);
  writeFileSync(join(second, 'title.txt'), 'old title\n');
  writeFileSync(join(second, 'scratch.txt'), 'scratch\n');
  await w.promptIn(second, P4);
  expect(readFileSync(join(second, 'title.txt'), 'utf8')).toBe('new title\n');
  const ckpt = (args: string[]) => runCli(['--store', w.store, ...args, '--json'], { cwd: second, env: { HOME: w.home, CKPT_HOME: '', CKPT_STORE: '' } });
  const log = (await ckpt(['log'])).json();
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual([P4]);
  expect(log.checkpoints.map((c: { tag: string; tool: string }) => `${c.tag}:${c.tool}`)).toEqual(['1.1:apply_patch', '1.2:Bash']);
  const r = await ckpt(['restore', '1', '--yes']);
  expect(r.code, r.stderr).toBe(0);
  expect(readFileSync(join(second, 'title.txt'), 'utf8')).toBe('old title\n');
  expect(readFileSync(join(second, 'scratch.txt'), 'utf8')).toBe('scratch\n');
  expect(existsSync(join(second, 'notes.txt'))).toBe(false);
  expect(JSON.parse(readFileSync(join(w.store, 'daemon', 'daemon.json'), 'utf8')).pid).toBe(claim.pid);
  expect(await w.hookFailures()).toEqual([]);
}, 1_200_000);

it('records `codex exec --ephemeral` (no transcript: its hooks send transcript_path null)', async () => {
  const P = 'Ephemeral: add a note and drop b';
  const e = await makeCliAgentWorld('codex', {
    files: { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' },
    script: () => ({
      [P]: [
        { custom: 'apply_patch', input: '*** Begin Patch\n*** Add File: note.txt\n+hello\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** End Patch\n' },
        { tool: 'exec_command', args: { cmd: 'rm b.txt && echo gen > gen.txt' } },
        { text: 'Done.' },
      ],
    }),
    argv: ([sub, ...rest]) => [sub!, '--ephemeral', ...rest],
  });
  try {
    await e.prompt(P);
    expect((await e.json(['log'])).checkpoints.map((c: { tag: string; tool: string }) => `${c.tag}:${c.tool}`)).toEqual(['1.1:apply_patch', '1.2:Bash']);
    expect(await e.checkRestores([P])).toEqual([]);
    expect(await e.hookFailures()).toEqual([]);
  } finally {
    await e.close();
  }
}, 1_200_000);

it('a hand edit during the turn of a file ckpt knows only from its baseline, then an apply_patch of it: restore 1 gives prompt 1\'s content', async () => {
  // Found by a real-agent probe on every agent: the patch's capture took the hand-edited file for the
  // state at prompt 1. The hand edit is made while the model "thinks" before the patch.
  const P1 = 'Please edit b now';
  const P2 = 'Second prompt here';
  let b = '';
  let edited = false;
  const steps: Step[] = [
    { tool: 'exec_command', args: { cmd: 'echo hi' } },
    { custom: 'apply_patch', input: '*** Begin Patch\n*** Update File: src/b.txt\n@@\n-one\n+ONE\n*** End Patch\n' },
    { text: 'Done.' },
  ];
  const handEditFirst = new Proxy(steps, {
    get(target, key, receiver) {
      if (key === '1' && !edited) {
        edited = true;
        appendFileSync(b, 'hand line\n');
      }
      return Reflect.get(target, key, receiver);
    },
  });
  const m = await makeCliAgentWorld('codex', {
    files: { 'src/a.txt': 'alpha\n', 'src/b.txt': 'one\ntwo\n' },
    script: (ws) => {
      b = join(ws, 'src/b.txt');
      return { [P1]: handEditFirst, [P2]: [{ tool: 'exec_command', args: { cmd: 'echo two > two.txt' } }, { text: 'Done.' }] };
    },
  });
  try {
    await m.prompt(P1);
    expect(readFileSync(b, 'utf8')).toBe('ONE\ntwo\nhand line\n');
    await m.prompt(P2);
    expect(await m.checkRestores([P1, P2])).toEqual([]);
    expect(await m.hookFailures()).toEqual([]);
  } finally {
    await m.close();
  }
}, 1_200_000);

it('an apply_patch through a symlink to a file of the project: the target is recorded, `restore N` puts it back without DRIFT', async () => {
  // Found by the real-Codex probe: Codex writes the link's target, ckpt recorded only the link, and
  // with no scan after the last prompt (Codex has no Stop hook) the edit read as the user's: restore
  // of either prompt refused DRIFT.
  const P1 = 'Make a link to the target';
  const P2 = 'Edit the target through the link';
  const l = await makeCliAgentWorld('codex', {
    files: { 'real/t.txt': 'target\n' },
    script: () => ({
      [P1]: [{ tool: 'exec_command', args: { cmd: 'ln -s real/t.txt tl && ln -s real/new.txt dangling' } }, { text: 'Done.' }],
      [P2]: [
        { custom: 'apply_patch', input: '*** Begin Patch\n*** Update File: tl\n@@\n-target\n+TARGET via link\n*** End Patch\n' },
        { text: 'Done.' },
      ],
    }),
  });
  try {
    await l.prompt(P1);
    await l.prompt(P2);
    expect(readFileSync(join(l.ws, 'real/t.txt'), 'utf8')).toBe('TARGET via link\n');
    expect(await l.checkRestores([P2, P1])).toEqual([]);
    expect(await l.hookFailures()).toEqual([]);
  } finally {
    await l.close();
  }
}, 1_200_000);

it('a patch the model applies through the shell (`apply_patch <<EOF`, no PostToolUse): the Stop scan records it, `restore N` exact', async () => {
  // Found by the real-Codex probe: Codex intercepts the heredoc and applies the patch itself, firing
  // PreToolUse "Bash" and no PostToolUse; the edit read as the user's, and after the last prompt
  // restore of either prompt refused DRIFT.
  const P1 = 'Patch through the shell';
  const P2 = 'Now the file of sub';
  const heredoc = (...l: string[]) => ["apply_patch <<'EOF'", '*** Begin Patch', ...l, '*** End Patch', 'EOF', ''].join('\n');
  const s = await makeCliAgentWorld('codex', {
    files: { 'sub/s.txt': 's\n', 'top.txt': 't\n' },
    script: (ws) => ({
      [P1]: [{ tool: 'exec_command', args: { cmd: heredoc('*** Add File: hp.txt', '+hp', '*** Update File: top.txt', '@@', '-t', '+T') } }, { text: 'Done.' }],
      [P2]: [{ tool: 'exec_command', args: { cmd: heredoc('*** Update File: s.txt', '@@', '-s', '+S', '*** Add File: new.txt', '+n'), workdir: join(ws, 'sub') } }, { text: 'Done.' }],
    }),
  });
  try {
    await s.prompt(P1);
    await s.prompt(P2);
    expect(readFileSync(join(s.ws, 'sub/s.txt'), 'utf8')).toBe('S\n');
    expect((await s.json(['log'])).checkpoints.map((c: { tag: string; tool: string }) => `${c.tag}:${c.tool}`)).toEqual(['1.1:Stop', '2.1:Stop']);
    expect(await s.checkRestores([P2, P1])).toEqual([]);
    expect(await s.hookFailures()).toEqual([]);
  } finally {
    await s.close();
  }
}, 1_200_000);
