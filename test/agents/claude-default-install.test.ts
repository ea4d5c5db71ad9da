// The real Claude Code CLI with what `ckpt init claude` installs by default (issue 28): the daemon
// started by init, per-tool-call HTTP hooks carrying the workspace's hook credential, once-per-prompt
// command hooks that bring the daemon back (claude-default-hooks.test.ts runs the scenarios in this
// mode). Here the daemon's absence: down before a prompt (the prompt's command hook records
// in-process, says so, and starts it again) and killed in the middle of a prompt (the HTTP hooks of
// the calls after it fail silently in Claude Code; the Stop hook's scan records what they changed). Every turn must still restore
// exactly: nothing lost.
import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeAgentWorld } from './harness/agent-world.js';
import { tool } from './harness/fake-anthropic-server.js';
import { waitFor } from './harness/wait-for.js';

/** The pid of the daemon that serves the store (its claim), while it lives. */
async function claimedDaemonPid(store: string): Promise<number | undefined> {
  const text = await readFile(join(store, 'daemon', 'daemon.json'), 'utf8').catch(() => undefined);
  const pid = text ? (JSON.parse(text) as { pid?: number }).pid : undefined;
  if (!pid) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** Kills the store's daemon and waits until it is gone. */
async function killDaemon(store: string): Promise<void> {
  const pid = await claimedDaemonPid(store);
  if (!pid) return;
  process.kill(pid, 'SIGKILL');
  while (await claimedDaemonPid(store)) await new Promise((r) => setTimeout(r, 50));
}

const FILES = { 'README.md': '# Project\n', 'src/app.js': "console.log('v1');\n" };

describe('Claude Code 2.1.328, the default install without its daemon', () => {
  it('daemon down before a prompt: the prompt hook records in-process, says so once, and starts the daemon; every turn restores exactly', async () => {
    const w = await makeAgentWorld({ kind: 'plain', mode: 'default', files: FILES });
    try {
      const f = (p: string) => `${w.ws}/${p}`;
      await w.prompt('one', [[tool.write(f('a.txt'), 'a1\n')], [tool.bash('mkdir d && echo x > d/x.txt')]]);
      const first = await claimedDaemonPid(w.store);
      expect(first, 'init started the daemon').toBeDefined();
      await killDaemon(w.store);
      const r = await w.prompt('two', [[tool.edit(f('a.txt'), 'a1', 'a2')], [tool.bash('rm -r d && echo y > y.txt')], [tool.write(f('src/app.js'), "console.log('v2');\n")]]);
      // The fallback said so (Claude Code shows a hook's systemMessage; stream-json carries it).
      expect(JSON.stringify(r.events)).toContain('hooks record in-process');
      const second = await waitFor('the daemon to be back', () => claimedDaemonPid(w.store));
      expect(second).not.toBe(first);
      const r3 = await w.prompt('three', [[tool.write(f('b.txt'), 'b\n')], [tool.bash('echo z >> y.txt')]]);
      expect(JSON.stringify(r3.events), 'said once per outage').not.toContain('hooks record in-process');
      expect(await w.checkRestores([{ prompt: 'three' }, { prompt: 'two' }, { prompt: 'one' }])).toEqual([]);
      expect(await w.hookFailures()).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('daemon killed in the middle of a prompt: the calls after it (HTTP hooks failing silently) are recorded by the Stop scan; the next prompt brings the daemon back; every turn restores exactly', async () => {
    const w = await makeAgentWorld({ kind: 'git', mode: 'default', files: FILES });
    try {
      const f = (p: string) => `${w.ws}/${p}`;
      await w.prompt('one', [[tool.write(f('a.txt'), 'a1\n')]]);
      const pid = await claimedDaemonPid(w.store);
      expect(pid).toBeDefined();
      await w.prompt('two', [
        [tool.edit(f('a.txt'), 'a1', 'a2')],
        [tool.bash(`kill -9 ${pid}; echo killed > k.txt`)],
        [tool.write(f('after.txt'), 'written while the daemon was down\n'), tool.edit(f('src/app.js'), 'v1', 'v2')],
        [tool.bash('mkdir gone && echo g > gone/g.txt && rm README.md')],
      ]);
      await w.prompt('three', [[tool.edit(f('after.txt'), 'down', 'up')], [tool.bash('rm -r gone')]]);
      // The prompt hook starts the daemon detached and does not wait for it (as in the test above).
      expect(await waitFor('the daemon to be back', () => claimedDaemonPid(w.store)), 'the daemon is back').toBeDefined();
      expect(await w.checkRestores([{ prompt: 'three' }, { prompt: 'two' }, { prompt: 'one' }])).toEqual([]);
      // What prompt two changed after the kill is in the session: the state at its end is restorable too.
      const log = await w.ckpt.json(['log']);
      expect(JSON.stringify(log)).toContain('after.txt');
      expect(await w.hookFailures()).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('CKPT_DISABLE=1 in Claude Code\'s environment: its tool calls record nothing (HTTP hooks carry it by header, command hooks by the client); turned back on, the next prompt looks first, and every turn restores exactly', async () => {
    const w = await makeAgentWorld({ kind: 'plain', mode: 'default', files: FILES });
    try {
      const f = (p: string) => `${w.ws}/${p}`;
      await w.prompt('one', [[tool.write(f('a.txt'), 'a1\n')]]);
      const captures = async () => ((await w.ckpt.json(['log'])).checkpoints as { tool: string }[]).map((c) => c.tool);
      const before = await captures();
      w.claude.options.env = { ...w.claude.options.env, CKPT_DISABLE: '1' };
      await w.prompt('two', [[tool.edit(f('a.txt'), 'a1', 'a2')], [tool.bash('echo b > b.txt')]]);
      expect(await captures(), 'nothing recorded while off').toEqual(before);
      delete w.claude.options.env!.CKPT_DISABLE;
      await w.prompt('three', [[tool.write(f('c.txt'), 'c\n')]]);
      expect(await captures()).toContain('Write');
      expect(await w.checkRestores([{ prompt: 'three' }, { prompt: 'two' }, { prompt: 'one' }])).toEqual([]);
      expect(await w.hookFailures()).toEqual([]);
    } finally {
      await w.close();
    }
  });
});
