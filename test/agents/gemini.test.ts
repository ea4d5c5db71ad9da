// The real Gemini CLI (@google/gemini-cli 0.61.0) against a scripted fake model (streamGenerateContent
// SSE), with ckpt's hooks installed by `ckpt init gemini --project`: three prompts of write_file and
// replace edits (relative and absolute paths) and run_shell_command calls (a generator, chmod, a
// symlink, a failing command that still wrote a file). Every turn restores exactly; each restore undoes.
import { execSync } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeCliAgentWorld, type CliAgentWorld } from './harness/cli-agents.js';

const P1 = 'Add a README, fix the greeting and generate fixtures';
const P2 = 'Rename b to c, drop a, lock down run.sh and link the readme';
const P3 = 'Clean up the fixtures and rewrite the readme';

let w: CliAgentWorld;

beforeAll(async () => {
  w = await makeCliAgentWorld('gemini', {
    files: { 'src/a.txt': 'alpha\n', 'src/b.txt': 'one\ntwo\nthree\n', 'run.sh': '#!/bin/sh\necho run\n' },
    script: (ws) => ({
      [P1]: [
        { tool: 'write_file', args: { file_path: `${ws}/README.md`, content: '# demo\n' } },
        { tool: 'replace', args: { file_path: `${ws}/src/a.txt`, instruction: 'Capitalise the greeting', old_string: 'alpha', new_string: 'ALPHA' } },
        { tool: 'run_shell_command', args: { command: 'mkdir -p gen && for i in 1 2 3 4 5; do echo "fixture $i" > gen/f$i.txt; done' } },
        { text: 'Done.' },
      ],
      [P2]: [
        { tool: 'run_shell_command', args: { command: 'mv src/b.txt src/c.txt && rm src/a.txt' } },
        { tool: 'run_shell_command', args: { command: 'chmod 700 run.sh && ln -s README.md docs.md' } },
        { tool: 'run_shell_command', args: { command: 'echo partial > partial.txt && ls does-not-exist' } },
        { text: 'Done.' },
      ],
      [P3]: [
        { tool: 'run_shell_command', args: { command: 'rm -r gen && rm docs.md partial.txt' } },
        { tool: 'write_file', args: { file_path: `${ws}/README.md`, content: '# demo, take two\n' } },
        { text: 'Done.' },
      ],
    }),
  });
}, 600_000);
afterAll(() => w?.close());

it('records a Gemini CLI session: every turn restores exactly, every restore undoes', async () => {
  await w.prompt(P1);
  await w.prompt(P2);
  await w.prompt(P3);
  const log = await w.json(['log', '--files']);
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual([P1, P2, P3]);
  const files = log.checkpoints.map((c: { tag: string; tool: string; reason?: string; files: { path: string; state: string }[] }) => [
    c.tag,
    c.tool,
    c.reason ?? 'capture',
    c.files.map((f) => `${f.path}:${f.state}`).join(' '),
  ]);
  expect(files).toEqual([
    ['1.1', 'write_file', 'capture', 'README.md:absent'],
    ['1.2', 'replace', 'capture', 'src/a.txt:file'],
    ['1.3', 'run_shell_command', 'scan', 'gen:absent gen/f1.txt:absent gen/f2.txt:absent gen/f3.txt:absent gen/f4.txt:absent gen/f5.txt:absent'],
    ['2.1', 'run_shell_command', 'scan', 'src/a.txt:file src/b.txt:file src/c.txt:absent'],
    ['2.2', 'run_shell_command', 'scan', 'docs.md:absent run.sh:file'],
    ['2.3', 'run_shell_command', 'scan', 'partial.txt:absent'],
    ['3.1', 'run_shell_command', 'scan', 'docs.md:symlink gen:dir gen/f1.txt:file gen/f2.txt:file gen/f3.txt:file gen/f4.txt:file gen/f5.txt:file partial.txt:file'],
    ['3.2', 'write_file', 'capture', 'README.md:file'],
  ]);
  expect(await w.checkRestores([P3, P1, P2])).toEqual([]);
  expect(await w.hookFailures()).toEqual([]);
}, 1_200_000);

it('Gemini CLI started in a subfolder of a git project (--user hooks) records the whole project: writes and shell changes above the subfolder restore exactly', async () => {
  const P = 'Tidy up above src';
  const g = await makeCliAgentWorld('gemini', {
    files: { 'src/a.txt': 'alpha\n', 'top.txt': 'top\n', 'run.sh': '#!/bin/sh\necho run\n' },
    setup: (ws) => execSync('git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm init', { cwd: ws, shell: '/bin/sh' }),
    initScope: '--user',
    startIn: 'src',
    script: (ws) => ({
      [P]: [
        { tool: 'write_file', args: { file_path: `${ws}/NEWTOP.md`, content: 'x\n' } },
        { tool: 'run_shell_command', args: { command: 'rm ../run.sh && echo changed > ../top.txt && echo here > local.txt' } },
        { text: 'Done.' },
      ],
    }),
  });
  try {
    await g.prompt(P);
    expect(await g.checkRestores([P])).toEqual([]);
    expect(await g.hookFailures()).toEqual([]);
  } finally {
    await g.close();
  }
}, 1_200_000);

it('write_file and replace naming a symlink change its target (Gemini writes through it): the target is captured, every turn restores exactly (round-9 probe)', async () => {
  const P1 = 'Rewrite the linked notes';
  const P2 = 'Edit the linked notes again';
  const g = await makeCliAgentWorld('gemini', {
    files: { 'notes.txt': 'alpha\n' },
    setup: (ws) => execSync('ln -s notes.txt link.txt', { cwd: ws, shell: '/bin/sh' }),
    script: (ws) => ({
      [P1]: [{ tool: 'write_file', args: { file_path: 'link.txt', content: 'via link\n' } }, { text: 'Done.' }],
      [P2]: [{ tool: 'replace', args: { file_path: `${ws}/link.txt`, instruction: 'Shout', old_string: 'via', new_string: 'VIA' } }, { text: 'Done.' }],
    }),
  });
  try {
    await g.prompt(P1);
    await g.prompt(P2);
    expect(await g.checkRestores([P1, P2, P1])).toEqual([]);
    expect(await g.hookFailures()).toEqual([]);
  } finally {
    await g.close();
  }
}, 1_200_000);
