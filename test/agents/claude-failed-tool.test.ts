// The real Claude Code CLI with ckpt's default install: file-tool calls that fail — an `Edit` whose old
// text is not in the file, a `Write` to a path that is a folder, a `Write` below a file. A capture of a
// failed call must be settled (PostToolUseFailure): one left in flight stays listed by `ckpt status` for
// good, and every later capture of the path takes a hand edit of it for the agent's own write in
// progress (DESIGN "opencode's failed tool calls are settled"). Claude Code 2.1.328 refuses all three
// in its input check, before PreToolUse: nothing is captured (the log has no capture in that turn).
// Hand edits between the prompts, then real edits of the same paths: `status` lists nothing unsettled
// after each prompt and every turn restores exactly.
import { expect, it } from 'vitest';
import { makeAgentWorld } from './harness/agent-world.js';
import { tool } from './harness/fake-anthropic-server.js';

it('Claude Code 2.1.328, default hooks: a failed Edit and two failed Writes leave nothing unsettled, later hand edits are recorded, every turn restores exactly', async () => {
  const w = await makeAgentWorld({ kind: 'plain', mode: 'default', files: { 'config.toml': 'mode = "real"\n', 'conf/keep.txt': 'keep\n' } });
  try {
    const f = (p: string) => `${w.ws}/${p}`;
    const unsettled = async () => (await w.ckpt.json(['status'])).unsettled;
    await w.prompt('P1', [[tool.read(f('config.toml'))], [tool.edit(f('config.toml'), 'real', 'own')]]);
    expect(await unsettled()).toEqual([]);
    await w.prompt('P2', [[tool.read(f('config.toml'))], [tool.edit(f('config.toml'), 'not in the file', 'x')], [tool.write(f('conf'), 'over a folder\n')], [tool.write(f('config.toml/under.txt'), 'under a file\n')]]);
    const results = w.fake.requests.flatMap((r) => r.body.messages.at(-1).content).filter((c: { type: string }) => c.type === 'tool_result');
    expect(results.slice(-3).map((c: { is_error?: boolean }) => c.is_error), 'Claude Code reported the three calls as failed').toEqual([true, true, true]);
    expect(await unsettled()).toEqual([]);
    // Refused before PreToolUse: the turn has no tool capture (only the look at its start, if any).
    const turn2 = (await w.ckpt.json(['log'])).checkpoints.filter((c: { tag: string; tool: string }) => c.tag.startsWith('2.') && c.tool !== 'user');
    expect(turn2).toEqual([]);
    await w.sh('echo \'mode = "by hand"\' > config.toml && echo hand > conf/keep.txt');
    await w.prompt('P3', [[tool.read(f('config.toml'))], [tool.edit(f('config.toml'), 'mode', 'MODE')], [tool.write(f('conf/keep.txt'), 'agent\n')]]);
    expect(await unsettled()).toEqual([]);
    expect(await w.checkRestores([{ prompt: 'P3' }, { prompt: 'P1' }, { prompt: 'P2' }])).toEqual([]);
    expect(await w.hookFailures()).toEqual([]);
  } finally {
    await w.close();
  }
});
