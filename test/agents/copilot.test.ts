// The real GitHub Copilot CLI (@github/copilot 1.0.102) against a scripted fake model (Chat Completions
// SSE, BYOK offline mode), with ckpt's hooks installed by `ckpt init copilot --project` into
// .github/hooks/ckpt.json (the file VS Code's agent hooks read too): three prompts of file creations and
// edits (absolute paths, as Copilot's tools take them), shell commands (a generator, a move, chmod, a
// symlink, a failing command that still wrote a file) and an edit Copilot fails (PostToolUseFailure).
// Every turn is restored exactly, each restore undone, and no hook failed — a failing hook would have
// denied its tool call (Copilot treats any non-zero exit as a deny).
import { mkdirSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeCliAgentWorld, type AgentRun, type CliAgentWorld } from './harness/cli-agents.js';

const P1 = 'Add a README, fix the greeting and generate fixtures';
const P2 = 'Rename b to c, drop a, lock down run.sh and link the readme';
const P3 = 'Clean up the fixtures and rewrite the readme';

let w: CliAgentWorld;
const runs: AgentRun[] = [];

beforeAll(async () => {
  w = await makeCliAgentWorld('copilot', {
    files: { 'src/a.txt': 'alpha\n', 'src/b.txt': 'one\ntwo\nthree\n', 'run.sh': '#!/bin/sh\necho run\n' },
    // 3,000 files the agent never touches: the session start's baseline takes long enough that the first
    // prompt's hook, which Copilot runs at the same time, finds none (DESIGN "A prompt before its
    // session's baseline"; without the fix the first turn did not look).
    setup: (ws) => {
      for (let i = 0; i < 3000; i++) {
        mkdirSync(join(ws, 'vendor', `d${i % 50}`), { recursive: true });
        writeFileSync(join(ws, 'vendor', `d${i % 50}`, `f${i}.txt`), `file ${i}\n`);
      }
    },
    script: (ws) => ({
      [P1]: [
        { tool: 'create', args: { path: `${ws}/README.md`, file_text: '# demo\n' } },
        { tool: 'edit', args: { path: `${ws}/src/a.txt`, old_str: 'alpha', new_str: 'ALPHA' } },
        { tool: 'view', args: { path: `${ws}/src/a.txt` } },
        { tool: 'bash', args: { command: 'mkdir -p gen && for i in 1 2 3 4 5; do echo "fixture $i" > gen/f$i.txt; done', description: 'generate fixtures' } },
        { text: 'Done.' },
      ],
      [P2]: [
        { tool: 'edit', args: { path: `${ws}/src/b.txt`, old_str: 'two', new_str: '2' } },
        { tool: 'bash', args: { command: 'mv src/b.txt src/c.txt && rm src/a.txt', description: 'rename and drop' } },
        { tool: 'bash', args: { command: 'chmod 700 run.sh && ln -s README.md docs.md', description: 'lock and link' } },
        // Copilot fails this edit (no such file): PostToolUseFailure, nothing changed.
        { tool: 'edit', args: { path: `${ws}/src/missing.txt`, old_str: 'q', new_str: 'r' } },
        { tool: 'bash', args: { command: 'echo partial > partial.txt && ls does-not-exist', description: 'fails after a write' } },
        { text: 'Done.' },
      ],
      [P3]: [
        { tool: 'bash', args: { command: 'rm -r gen && rm docs.md partial.txt', description: 'clean up' } },
        { tool: 'edit', args: { path: `${ws}/README.md`, old_str: '# demo', new_str: '# demo, take two' } },
        { text: 'Done.' },
      ],
    }),
  });
}, 600_000);
afterAll(() => w?.close());

it('records a GitHub Copilot CLI session: every turn restores exactly, every restore undoes', async () => {
  runs.push(await w.prompt(P1));
  runs.push(await w.prompt(P2));
  runs.push(await w.prompt(P3));
  // Every tool call ran: none was denied by a hook.
  const denied = runs.flatMap((r) => r.stdout.split('\n').filter((l) => /denied/i.test(l)));
  expect(denied).toEqual([]);
  const log = await w.json(['log']);
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual([P1, P2, P3]);
  // Every turn looked at the workspace first (the first too, whose SessionStart ran beside it).
  const [wid] = await readdir(join(w.store, 'workspaces'));
  const sessions = join(w.store, 'workspaces', wid!, 'sessions');
  const turns = (await Promise.all((await readdir(sessions)).map((s) => readFile(join(sessions, s, 'events.jsonl'), 'utf8'))))
    .flatMap((t) => t.trim().split('\n').map((l) => JSON.parse(l) as { type: string; turn?: number; looked?: boolean }))
    .filter((e) => e.type === 'turn');
  expect(turns.map((e) => [e.turn, e.looked])).toEqual([[1, true], [2, true], [3, true]]);
  // Edits are captured before Copilot applies them (no `reason`: not a scan); shell calls are scanned
  // after, a failing one too; the failed edit's capture stands alone (the file stayed absent).
  const files = (await w.json(['log', '--files'])).checkpoints.map((c: { tag: string; tool: string; reason?: string; files: { path: string; state: string }[] }) => [
    c.tag,
    c.tool,
    c.reason ?? 'capture',
    c.files.map((f) => `${f.path}:${f.state}`).join(' '),
  ]);
  expect(files).toEqual([
    ['1.1', 'Write', 'capture', 'README.md:absent'],
    ['1.2', 'Edit', 'capture', 'src/a.txt:file'],
    ['1.3', 'Bash', 'scan', 'gen:absent gen/f1.txt:absent gen/f2.txt:absent gen/f3.txt:absent gen/f4.txt:absent gen/f5.txt:absent'],
    ['2.1', 'Edit', 'capture', 'src/b.txt:file'],
    ['2.2', 'Bash', 'scan', 'src/a.txt:file src/b.txt:file src/c.txt:absent'],
    ['2.3', 'Bash', 'scan', 'docs.md:absent run.sh:file'],
    ['2.4', 'Edit', 'capture', 'src/missing.txt:absent'],
    ['2.5', 'Bash', 'scan', 'partial.txt:absent'],
    ['3.1', 'Bash', 'scan', 'docs.md:symlink gen:dir gen/f1.txt:file gen/f2.txt:file gen/f3.txt:file gen/f4.txt:file gen/f5.txt:file partial.txt:file'],
    ['3.2', 'Edit', 'capture', 'README.md:file'],
  ]);
  expect(await w.checkRestores([P3, P1, P2])).toEqual([]);
  expect(await w.hookFailures()).toEqual([]);
}, 1_200_000);
