// The real GitHub Copilot CLI (@github/copilot 1.0.102) running a subagent (its `task` tool): the
// subagent gets a session id of its own, and its hook events carry the user's session as
// `parent_agent_id`. Its tool calls belong to the user's turn; its prompt is the model's. A probe
// (2026-12-07) found the subagent recorded as a root session of its own that became the default:
// `ckpt log` showed the model's task prompt as turn 1, and `ckpt restore 2` failed TAG_NOT_FOUND.
import { expect, it, afterAll, beforeAll } from 'vitest';
import { makeCliAgentWorld, type CliAgentWorld } from './harness/cli-agents.js';

const P1 = 'Start the notes';
const P2 = 'Have a helper write the docs';
const SUB = 'Helper job: write docs.md and add a line to notes.txt';

let w: CliAgentWorld;

beforeAll(async () => {
  w = await makeCliAgentWorld('copilot', {
    files: { 'notes.txt': 'v0\n' },
    script: (ws) => ({
      [P1]: [{ tool: 'create', args: { path: `${ws}/one.txt`, file_text: 'one\n' } }, { text: 'Done.' }],
      [P2]: [{ tool: 'task', args: { description: 'docs', prompt: SUB, agent_type: 'general-purpose', name: 'docs' } }, { text: 'Done.' }],
      [SUB]: [
        { tool: 'create', args: { path: `${ws}/docs.md`, file_text: '# docs\n' } },
        { tool: 'bash', args: { command: 'echo sub >> notes.txt', description: 'append' } },
        { text: 'Helper done.' },
      ],
    }),
  });
}, 600_000);
afterAll(() => w?.close());

it("records a Copilot subagent's tool calls in the user's session and turn; restore N is the user's prompt N", async () => {
  await w.prompt(P1);
  await w.prompt(P2);
  const sessions = (await w.json(['session', 'list'])).sessions as { title: string }[];
  expect(sessions.map((s) => s.title)).toEqual([P1]);
  const log = await w.json(['log', '--files']);
  expect(log.turns.map((t: { text: string }) => t.text)).toEqual([P1, P2]);
  const paths = (log.checkpoints as { tag: string; files: { path: string }[] }[]).filter((c) => c.tag.startsWith('2.')).flatMap((c) => c.files.map((f) => f.path));
  expect(paths).toEqual(expect.arrayContaining(['docs.md', 'notes.txt']));
  expect(await w.checkRestores([P2, P1])).toEqual([]);
  expect(await w.hookFailures()).toEqual([]);
}, 1_200_000);
