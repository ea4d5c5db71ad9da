// The real opencode (opencode-ai 1.18.33): a tool call that fails gets no `tool.execute.after` (an
// `edit` whose old text is not in the file). ckpt's plugin settles it when its part turns to "error"
// — else its capture stayed in flight for good (`ckpt status` listed it unsettled), and every later
// capture of the path took a hand edit of it for the agent's own write in progress. Also a `write`
// to a symlink of the project: opencode writes through the link, and the target is settled with it.
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeCliAgentWorld, type CliAgentWorld } from './harness/cli-agents.js';

const P1 = 'Set the config through its link';
const P2 = 'Tweak the real config';
const P3 = 'Tweak it properly';

let w: CliAgentWorld;

beforeAll(async () => {
  w = await makeCliAgentWorld('opencode', {
    files: { 'conf/real.toml': 'mode = "real"\n' },
    setup: (ws) => symlinkSync('conf/real.toml', join(ws, 'config.toml')),
    script: (ws) => ({
      [P1]: [
        { tool: 'read', args: { filePath: `${ws}/config.toml` } },
        { tool: 'write', args: { filePath: `${ws}/config.toml`, content: 'mode = "own"\n' } },
        { text: 'Done.' },
      ],
      [P2]: [
        { tool: 'read', args: { filePath: `${ws}/conf/real.toml` } },
        { tool: 'edit', args: { filePath: `${ws}/conf/real.toml`, oldString: 'not in the file', newString: 'x' } },
        { text: 'That edit failed.' },
      ],
      [P3]: [
        { tool: 'read', args: { filePath: `${ws}/conf/real.toml` } },
        { tool: 'edit', args: { filePath: `${ws}/conf/real.toml`, oldString: 'own', newString: 'OWN' } },
        { text: 'Done.' },
      ],
    }),
  });
}, 600_000);
afterAll(() => w?.close());

it('settles a tool call that failed and a write through a link; every turn restores exactly', async () => {
  await w.prompt(P1);
  expect((await w.json(['status'])).unsettled).toEqual([]);
  await w.prompt(P2);
  expect((await w.json(['status'])).unsettled).toEqual([]);
  await w.prompt(P3);
  expect((await w.json(['status'])).unsettled).toEqual([]);
  expect(await w.checkRestores([P3, P1, P2])).toEqual([]);
  expect(await w.hookFailures()).toEqual([]);
}, 1_200_000);
