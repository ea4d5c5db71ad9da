// The real Claude Code CLI and a conversation left behind by `/clear` (DESIGN §10 "Sessions left
// behind retire"): the next conversation's prompt holds it to the retention policy, as its own next
// prompt would have. Command hooks (in-process, in Claude Code's environment), so the age limit can
// be set for the second conversation's hooks alone.
import { describe, expect, it } from 'vitest';
import { makeAgentWorld } from './harness/agent-world.js';
import { tool } from './harness/fake-anthropic-server.js';
import { diffTrees, snapshotTree } from './harness/tree-snapshot.js';

const FILES = { 'README.md': '# Project\n' };

describe('Claude Code 2.1.328, command hooks: a conversation left by /clear', () => {
  it("retires at the next conversation's prompt by CKPT_KEEP_AGE: its earlier turns answer TAG_PRUNED and change nothing, its last turn and the new one restore exactly", async () => {
    const w = await makeAgentWorld({ kind: 'plain', mode: 'command', files: FILES });
    try {
      const f = (p: string) => `${w.ws}/${p}`;
      await w.prompt('A1', [[tool.write(f('a.txt'), 'a1\n')]]);
      await w.prompt('A2', [[tool.edit(f('a.txt'), 'a1', 'a2')]]);
      await w.prompt('A3', [[tool.write(f('b.txt'), 'b\n')]]);
      const left = ((await w.ckpt.json(['session', 'list'])).sessions as { id: string }[])[0]!.id;
      await w.slash('/clear');
      await new Promise((r) => setTimeout(r, 1_500));
      w.ckpt.agentEnv.CKPT_KEEP_AGE = '1s';
      await w.prompt('B1', [[tool.edit(f('a.txt'), 'a2', 'b1')], [tool.bash('rm b.txt')]]);
      const tree = await snapshotTree(w.ws);
      for (const prompt of ['A1', 'A2']) {
        const r = await w.ckpt.ckpt(['--session', left, 'restore', await w.turnOf(prompt, left), '--yes', '--json']);
        expect(r.code, `restore ${prompt}: ${r.stderr}`).toBe(3);
        expect(JSON.parse(r.stderr).error.code).toBe('TAG_PRUNED');
        expect(diffTrees(tree, await snapshotTree(w.ws))).toEqual([]);
      }
      expect(await w.checkRestores([{ prompt: 'B1' }, { prompt: 'A3', session: left }])).toEqual([]);
      expect(await w.hookFailures()).toEqual([]);
    } finally {
      await w.close();
    }
  });
});
