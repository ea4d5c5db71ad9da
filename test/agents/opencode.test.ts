// The real opencode (opencode-ai 1.18.33) against a scripted fake model (Chat Completions SSE through
// @ai-sdk/openai-compatible), with ckpt's plugin installed by `ckpt init opencode`: three prompts of
// write and edit calls and bash commands (a generator, chmod, a symlink, a failing command that still
// wrote a file). Every turn restores exactly; each restore undoes. opencode.json is the user's file and
// .opencode/ opencode's own (its plugin dependencies): both left out of the comparison.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeCliAgentWorld, type CliAgentWorld } from './harness/cli-agents.js';

const P1 = 'Add a README, fix the greeting and generate fixtures';
const P2 = 'Rename b to c, drop a, lock down run.sh and link the readme';
const P3 = 'Clean up the fixtures and rewrite the readme';

let w: CliAgentWorld;

beforeAll(async () => {
  w = await makeCliAgentWorld('opencode', {
    files: { 'src/a.txt': 'alpha\n', 'src/b.txt': 'one\ntwo\nthree\n', 'run.sh': '#!/bin/sh\necho run\n' },
    script: (ws) => ({
      [P1]: [
        { tool: 'write', args: { filePath: `${ws}/README.md`, content: '# demo\n' } },
        { tool: 'read', args: { filePath: `${ws}/src/a.txt` } },
        { tool: 'edit', args: { filePath: `${ws}/src/a.txt`, oldString: 'alpha', newString: 'ALPHA' } },
        { tool: 'bash', args: { command: 'mkdir -p gen && for i in 1 2 3 4 5; do echo "fixture $i" > gen/f$i.txt; done', description: 'generate fixtures' } },
        { text: 'Done.' },
      ],
      [P2]: [
        { tool: 'bash', args: { command: 'mv src/b.txt src/c.txt && rm src/a.txt', description: 'rename' } },
        { tool: 'bash', args: { command: 'chmod 700 run.sh && ln -s README.md docs.md', description: 'lock and link' } },
        { tool: 'bash', args: { command: 'echo partial > partial.txt && ls does-not-exist', description: 'fails' } },
        { text: 'Done.' },
      ],
      [P3]: [
        { tool: 'bash', args: { command: 'rm -r gen && rm docs.md partial.txt', description: 'clean up' } },
        { tool: 'read', args: { filePath: `${ws}/README.md` } },
        { tool: 'write', args: { filePath: `${ws}/README.md`, content: '# demo, take two\n' } },
        { text: 'Done.' },
      ],
    }),
  });
}, 600_000);
afterAll(() => w?.close());

it('records an opencode session through its plugin: every turn restores exactly, every restore undoes', async () => {
  await w.prompt(P1);
  await w.prompt(P2);
  await w.prompt(P3);
  const log = await w.json(['log', '--files']);
  // `opencode run` quotes a message argument with spaces: that is the text the model and ckpt get.
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual([P1, P2, P3].map((p) => w.asSent(p)));
  const files = log.checkpoints.map((c: { tag: string; tool: string; reason?: string; files: { path: string; state: string }[] }) => [
    c.tag,
    c.tool,
    c.reason ?? 'capture',
    c.files.map((f) => `${f.path}:${f.state}`).filter((f) => !f.startsWith('.opencode/')).join(' '),
  ]);
  expect(files.filter((f: string[]) => f[1] !== 'bash')).toEqual([
    ['1.1', 'write', 'capture', 'README.md:absent'],
    ['1.2', 'edit', 'capture', 'src/a.txt:file'],
    [expect.any(String), 'write', 'capture', 'README.md:file'],
  ]);
  expect(await w.checkRestores([P3, P1, P2])).toEqual([]);
  expect(await w.hookFailures()).toEqual([]);
}, 1_200_000);
