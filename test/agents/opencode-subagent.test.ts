// The real opencode (opencode-ai 1.18.33) running a subagent: the model's `task` call starts a child
// opencode session (its own session id, its own `chat.message` with the task's prompt) whose tool calls
// write files. The subagent works inside the user's turn: its writes belong to that turn of the
// user's session, as Claude Code's subagents' do, and `ckpt log` / `ckpt restore N` without
// `--session` still mean the user's session after the subagent was the last to write.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeCliAgentWorld, type CliAgentWorld } from './harness/cli-agents.js';

const P1 = 'Write the notes';
const P2 = 'Delegate the docs';
const SUB = 'Subagent: write docs/api.md and touch the notes';
const P3 = 'Check';

let w: CliAgentWorld;

beforeAll(async () => {
  w = await makeCliAgentWorld('opencode', {
    files: { 'notes.txt': 'one\n' },
    script: (ws) => ({
      [P1]: [{ tool: 'write', args: { filePath: `${ws}/notes.txt`, content: 'two\n' } }, { text: 'Done.' }],
      // The subagent's run is the parent's last tool call of the turn.
      [P2]: [{ tool: 'task', args: { description: 'write docs', prompt: SUB, subagent_type: 'general' } }, { text: 'Done.' }],
      [SUB]: [
        { tool: 'write', args: { filePath: `${ws}/docs/api.md`, content: '# api\n' } },
        { tool: 'bash', args: { command: 'echo three >> notes.txt', description: 'append' } },
        { text: 'Subagent done.' },
      ],
      [P3]: [{ text: 'Nothing to do.' }],
    }),
  });
}, 600_000);
afterAll(() => w?.close());

it('records a subagent\'s writes in the user\'s turn: restore N without --session means the user\'s session', async () => {
  await w.prompt(P1);
  await w.prompt(P2);
  const sessions = (await w.json(['session', 'list'])).sessions as { id: string; title: string }[];
  expect(sessions.map((s) => s.title)).toEqual([w.asSent(P1)]);
  const log = await w.json(['log', '--files']);
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual([P1, P2].map((p) => w.asSent(p)));
  expect(await w.checkRestores([P1, P2])).toEqual([]);
  // The user's session goes on after the subagent's turn.
  await w.prompt(P3);
  expect((await w.json(['log'])).turns.map((t: { text: string }) => t.text)).toEqual([P1, P2, P3].map((p) => w.asSent(p)));
  expect(await w.checkRestores([P2, P1])).toEqual([]);
  expect(await w.hookFailures()).toEqual([]);
}, 1_200_000);
