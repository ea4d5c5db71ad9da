// The real Codex CLI (@openai/codex 0.169.0): an `apply_patch` whose context is not in the file fails,
// and Codex sends PreToolUse but no PostToolUse for it. Its capture must be settled (at Stop): one left
// in flight stays listed by `ckpt status` for good, and a later capture of the path takes a hand edit
// of it for the agent's own write in progress (DESIGN "Codex's failed patches are settled at Stop").
// A hand edit between the prompts and one during the next turn (made when the model is asked, after
// the turn's look, before the tool call), then a real patch of the same file: `status` lists nothing
// unsettled after each prompt and every turn restores exactly — without the fix `restore` of the last
// turn gave back the hand edit made during it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { failedCallRun, makeCliAgentWorld, type CliAgentWorld } from './harness/cli-agents.js';

const P1 = 'Set the mode';
const P2 = 'Tweak the config';
const P3 = 'Tweak it properly';

let w: CliAgentWorld;

beforeAll(async () => {
  const patch = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');
  w = await makeCliAgentWorld('codex', {
    files: { 'config.toml': 'mode = "real"\n' },
    script: () => ({
      [P1]: [{ custom: 'apply_patch', input: patch('*** Update File: config.toml', '@@', '-mode = "real"', '+mode = "own"') }, { text: 'Done.' }],
      [P2]: [{ custom: 'apply_patch', input: patch('*** Update File: config.toml', '@@', '-not in the file', '+x') }, { text: 'That patch failed.' }],
      [P3]: [{ custom: 'apply_patch', input: patch('*** Update File: config.toml', '@@', '-mode = "by hand"', '+MODE = "by hand"') }, { text: 'Done.' }],
    }),
  });
}, 600_000);
afterAll(() => w?.close());

it('settles an apply_patch that failed: nothing unsettled, hand edits are recorded, every turn restores exactly', async () => {
  expect(await failedCallRun(w, [P1, P2, P3])).toEqual({ unsettled: [[], [], []], restores: [], hookFailures: [] });
}, 1_200_000);
