// The real GitHub Copilot CLI (@github/copilot 1.0.102): an `edit` whose old text is not in the file
// fails. Its capture must be settled — a capture left in flight stays listed by `ckpt status` for good,
// and every later capture of the path takes a hand edit of it for the agent's own write in progress
// (DESIGN "opencode's failed tool calls are settled"). A hand edit between the prompts and one during
// the next turn (made when the model is asked, before the tool call), then a real edit of the same
// file: `status` lists nothing unsettled after each prompt and every turn restores exactly. Without
// PostToolUseFailure installed, `status` lists the file after the failed edit.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { failedCallRun, makeCliAgentWorld, type CliAgentWorld } from './harness/cli-agents.js';

const P1 = 'Set the mode';
const P2 = 'Tweak the config';
const P3 = 'Tweak it properly';

let w: CliAgentWorld;

beforeAll(async () => {
  w = await makeCliAgentWorld('copilot', {
    files: { 'config.toml': 'mode = "real"\n' },
    script: (ws) => ({
      [P1]: [{ tool: 'edit', args: { path: `${ws}/config.toml`, old_str: 'real', new_str: 'own' } }, { text: 'Done.' }],
      [P2]: [{ tool: 'edit', args: { path: `${ws}/config.toml`, old_str: 'not in the file', new_str: 'x' } }, { text: 'That edit failed.' }],
      [P3]: [{ tool: 'edit', args: { path: `${ws}/config.toml`, old_str: 'mode', new_str: 'MODE' } }, { text: 'Done.' }],
    }),
  });
}, 600_000);
afterAll(() => w?.close());

it('settles an edit that failed: nothing unsettled, hand edits are recorded, every turn restores exactly', async () => {
  expect(await failedCallRun(w, [P1, P2, P3])).toEqual({ unsettled: [[], [], []], restores: [], hookFailures: [] });
}, 1_200_000);
