// The real Claude Code CLI with ckpt's default install: file-tool calls that fail — an `Edit` whose old
// text is not in the file, a `Write` to a path that is a folder, a `Write` below a file. A capture of a
// failed call must be settled (PostToolUseFailure): one left in flight stays listed by `ckpt status` for
// good, and every later capture of the path takes a hand edit of it for the agent's own write in
// progress (DESIGN "opencode's failed tool calls are settled"). Claude Code 2.1.328 refuses all three
// in its input check, before PreToolUse: nothing is captured (the log has no capture in that turn).
// Hand edits between the prompts, then real edits of the same paths: `status` lists nothing unsettled
// after each prompt and every turn restores exactly. An `Edit` of an immutable file (chattr +i: EPERM
// even for root) passes that check and fails in the write: PreToolUse, then PostToolUseFailure, which
// settles it; a hand edit during the next turn is then recorded, and that turn restores exactly.
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

it.runIf(process.getuid?.() === 0 || process.env.CKPT_TEST_CHATTR === '1')('Claude Code 2.1.328, default hooks: an Edit that fails in its write (an immutable file) is settled by PostToolUseFailure; a hand edit during the next turn restores exactly', async () => {
  const w = await makeAgentWorld({ kind: 'plain', mode: 'default', files: { 'locked.txt': 'mode = "real"\n' } });
  const lock = (flag: '+i' | '-i') => execSync(`chattr ${flag} locked.txt`, { cwd: w.ws });
  try {
    const f = (p: string) => `${w.ws}/${p}`;
    const unsettled = async () => (await w.ckpt.json(['status'])).unsettled;
    lock('+i');
    await w.prompt('Lock step one', [[tool.read(f('locked.txt'))], [tool.edit(f('locked.txt'), 'real', 'own')]]);
    const result = w.fake.requests.at(-1)!.body.messages.at(-1).content[0];
    expect(result, 'Claude Code reported the edit as failed').toMatchObject({ type: 'tool_result', is_error: true });
    expect((await w.ckpt.json(['log'])).checkpoints.map((c: { tag: string; tool: string }) => `${c.tag}:${c.tool}`)).toEqual(['1.1:Edit']);
    expect(await unsettled()).toEqual([]);
    lock('-i');
    // A hand edit during the next turn: when the model is first asked for its steps.
    const push = w.fake.requests.push.bind(w.fake.requests);
    w.fake.requests.push = (...items) => {
      if (JSON.stringify(items[0]?.body ?? '').includes('Lock step two')) {
        w.fake.requests.push = push;
        writeFileSync(join(w.ws, 'locked.txt'), 'mode = "by hand"\n');
      }
      return push(...items);
    };
    await w.prompt('Lock step two', [[tool.read(f('locked.txt'))], [tool.edit(f('locked.txt'), 'mode', 'MODE')]]);
    expect(await unsettled()).toEqual([]);
    expect(await w.checkRestores([{ prompt: 'Lock step two' }, { prompt: 'Lock step one' }])).toEqual([]);
    expect(await w.hookFailures()).toEqual([]);
  } finally {
    try {
      lock('-i');
    } catch {
      /* not locked */
    }
    await w.close();
  }
});
