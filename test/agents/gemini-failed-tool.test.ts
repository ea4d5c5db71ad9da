// The real Gemini CLI (@google/gemini-cli 0.61.0): a `replace` whose old text is not in the file fails.
// Its capture must be settled — a capture left in flight stays listed by `ckpt status` for good, and
// every later capture of the path takes a hand edit of it for the agent's own write in progress (DESIGN
// "opencode's failed tool calls are settled"). A hand edit between the prompts and one during the next
// turn (made when the model is asked, before the tool call), then a real edit of the same file:
// `status` lists nothing unsettled after each prompt and every turn restores exactly.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { failedCallRun, makeCliAgentWorld, type CliAgentWorld } from './harness/cli-agents.js';

const P1 = 'Set the mode';
const P2 = 'Tweak the config';
const P3 = 'Tweak it properly';

let w: CliAgentWorld;

beforeAll(async () => {
  w = await makeCliAgentWorld('gemini', {
    files: { 'config.toml': 'mode = "real"\n' },
    script: (ws) => ({
      [P1]: [{ tool: 'write_file', args: { file_path: `${ws}/config.toml`, content: 'mode = "own"\n' } }, { text: 'Done.' }],
      [P2]: [
        { tool: 'replace', args: { file_path: `${ws}/config.toml`, instruction: 'Change it', old_string: 'not in the file', new_string: 'x' } },
        { text: 'That edit failed.' },
      ],
      [P3]: [{ tool: 'replace', args: { file_path: `${ws}/config.toml`, instruction: 'Shout', old_string: 'mode', new_string: 'MODE' } }, { text: 'Done.' }],
    }),
  });
}, 600_000);
afterAll(() => w?.close());

it('settles a replace that failed: nothing unsettled, hand edits are recorded, every turn restores exactly', async () => {
  expect(await failedCallRun(w, [P1, P2, P3])).toEqual({ unsettled: [[], [], []], restores: [], hookFailures: [] });
}, 1_200_000);
