// The real Claude Code CLI with ckpt's default install (`ckpt init claude`) AND ckpt's MCP server (a
// user-scope server in the scratch HOME's ~/.claude.json): the model calls ckpt's MCP tools between
// Write/Edit/Bash calls across prompts while the hooks record the same conversation. Claude Code defers
// MCP tools (the model loads them with ToolSearch `select:…`), hands the model a tool's
// structuredContent as JSON, and in `-p` answers every elicitation `cancel` (restores then run on the
// preview's token). A tool call's input may be built when the fake model answers (`later`), after the
// previous call's result arrived: that is how the model passes on a preview's token.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CKPT_BIN } from '../helpers/cli.js';
import { makeAgentWorld, type AgentWorld } from './harness/agent-world.js';
import { tool, type ToolCall } from './harness/fake-anthropic-server.js';
import { diffTrees, snapshotTree } from './harness/tree-snapshot.js';

const FILES = { 'README.md': '# Project\n', 'src/app.js': "console.log('v1');\n" };

async function mcpWorld(): Promise<AgentWorld> {
  const w = await makeAgentWorld({ kind: 'plain', mode: 'default', files: FILES });
  const server = { type: 'stdio', command: process.execPath, args: [CKPT_BIN, '--store', w.store, 'mcp'], env: { HOME: w.home } };
  await writeFile(join(w.home, '.claude.json'), JSON.stringify({ mcpServers: { ckpt: server } }));
  return w;
}

const mcp = (name: string, input: Record<string, unknown>): ToolCall => ({ name: `mcp__ckpt__${name}`, input });
const load = (...names: string[]): ToolCall => ({ name: 'ToolSearch', input: { query: `select:${names.map((n) => `mcp__ckpt__${n}`).join(',')}`, max_results: 20 } });
/** A call whose input is made when the fake model answers (JSON.stringify calls toJSON). */
const later = (name: string, input: () => Record<string, unknown>): ToolCall => ({ name: `mcp__ckpt__${name}`, input: { toJSON: input } as unknown as Record<string, unknown> });

/** Every tool result the agent sent so far in this conversation, newest last. */
function results(w: AgentWorld): { name: string; isError: boolean; text: string }[] {
  const main = w.fake.requests.filter((r) => r.mainLoop);
  const names = new Map<string, string>();
  const out: { name: string; isError: boolean; text: string }[] = [];
  for (const m of main.at(-1)?.body.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type === 'tool_use') names.set(b.id, b.name);
      if (b.type === 'tool_result') out.push({ name: names.get(b.tool_use_id) ?? '?', isError: Boolean(b.is_error), text: typeof b.content === 'string' ? b.content : JSON.stringify(b.content) });
    }
  }
  return out;
}
const lastToken = (w: AgentWorld) => JSON.stringify(w.fake.requests.at(-1)?.body.messages ?? []).match(/ckpt1\.[\w-]+\.[\w-]+/g)?.at(-1) ?? 'none';

describe('Claude Code 2.1.328 with ckpt mcp beside the default hooks', () => {
  it('an MCP restore to prompt one leaves its exact tree; restoring its undo tag over MCP gives back the tree before; every CLI restore stays exact', async () => {
    const w = await mcpWorld();
    try {
      const f = (p: string) => `${w.ws}/${p}`;
      await w.prompt('one', [[tool.write(f('a.txt'), 'a1\n')], [tool.bash('mkdir d && echo x > d/x.txt && chmod 600 d/x.txt')]]);
      await w.prompt('two', [[tool.edit(f('a.txt'), 'a1', 'a2')], [tool.bash('rm README.md && ln -s src/app.js link')], [tool.write(f('b.txt'), 'b\n')]]);
      const one = await w.turnOf('one');
      await w.prompt('three', [[load('restore_preview', 'restore', 'log')], [mcp('log', {})], [mcp('restore_preview', { tag: one })], [later('restore', () => ({ tag: one, token: lastToken(w) }))]]);
      const restored = results(w).at(-1)!;
      expect(restored.isError, restored.text).toBe(false);
      expect(diffTrees(w.snaps.get('one')!, await snapshotTree(w.ws))).toEqual([]);
      const undo = JSON.parse(restored.text).undo as string;
      await w.prompt('four', [[mcp('restore_preview', { tag: undo })], [later('restore', () => ({ tag: undo, token: lastToken(w) }))]]);
      expect(results(w).at(-1)!.isError).toBe(false);
      expect(diffTrees(w.snaps.get('three')!, await snapshotTree(w.ws))).toEqual([]);
      await w.prompt('five', [[tool.write(f('c.txt'), 'c\n')], [tool.bash('echo more >> a.txt; rm -r d')]]);
      expect(await w.checkRestores(['five', 'four', 'three', 'two', 'one', 'four'].map((prompt) => ({ prompt })))).toEqual([]);
      expect(await w.hookFailures()).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('restores one file over MCP while a background process keeps writing another (no hook scan makes the preview stale)', async () => {
    const w = await mcpWorld();
    const pidFile = join(w.base, 'writer.pid');
    try {
      const f = (p: string) => `${w.ws}/${p}`;
      await w.prompt('one', [[tool.write(f('a.txt'), 'a1\n')]]);
      // A dev server's log: written every 100 ms for a minute, never recorded by a tool call.
      await w.sh(`(for i in $(seq 1 600); do echo "GET / $i" >> server.log; sleep 0.1; done) >/dev/null 2>&1 & echo $! > ${pidFile}`);
      await w.prompt('two', [[tool.edit(f('a.txt'), 'a1', 'a2')]]);
      await w.prompt('three', [[load('restore_preview', 'restore')], [mcp('restore_preview', { tag: '1', paths: ['a.txt'] })], [later('restore', () => ({ tag: '1', paths: ['a.txt'], token: lastToken(w) }))]]);
      const r = results(w).at(-1)!;
      expect(r.isError, r.text).toBe(false);
      expect(w.snaps.get('three')!.has('a.txt')).toBe(true);
      expect((await snapshotTree(w.ws)).has('a.txt'), 'a.txt did not exist at prompt one').toBe(false);
    } finally {
      await w.sh(`kill $(cat ${pidFile}) 2>/dev/null || true`).catch(() => undefined);
      await w.close();
    }
  });

  it("a model following the server's instructions (session_new, turn, checkpoint, settle) does not shift the hooks' turns: restore N is prompt N", async () => {
    const w = await mcpWorld();
    try {
      const f = (p: string) => `${w.ws}/${p}`;
      await w.prompt('one', [
        [load('session_new', 'turn', 'checkpoint', 'settle')],
        [mcp('session_new', { title: 'my conversation' })],
        [mcp('turn', { text: 'one', messageCount: 1 })],
        [mcp('checkpoint', { paths: ['a.txt'], tool: 'Write' })],
        [tool.write(f('a.txt'), 'a1\n')],
        [mcp('settle', { paths: ['a.txt'] })],
      ]);
      await w.prompt('two', [[mcp('turn', { text: 'two', messageCount: 3 })], [mcp('checkpoint', { paths: ['a.txt'] })], [tool.edit(f('a.txt'), 'a1', 'a2')], [tool.bash('rm README.md; echo y > y.txt')], [mcp('checkpoint', {})]]);
      await w.prompt('three', [[mcp('turn', { text: 'three', messageCount: 5 })], [tool.write(f('b.txt'), 'b\n')]]);
      await w.prompt('four', [[tool.bash('echo z >> y.txt')]]);
      expect(results(w).filter((r) => r.name === 'mcp__ckpt__turn' && !r.isError).length, 'turn refused in the hooks session').toBeLessThanOrEqual(1);
      const log = await w.ckpt.json(['log']);
      expect(log.turns.map((t: { text: string }) => t.text)).toEqual(['one', 'two', 'three', 'four']);
      // As a user types it: restore N, no session named.
      expect(await w.checkRestores(['one', 'two', 'three', 'four'].map((prompt, i) => ({ prompt, turn: String(i + 1) })).reverse())).toEqual([]);
      expect(await w.hookFailures()).toEqual([]);
    } finally {
      await w.close();
    }
  });
});
