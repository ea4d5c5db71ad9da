// The real Claude Code CLI with what `ckpt init claude` installs by default (HTTP hooks for each tool
// call, posting to the daemon's port; command hooks once per prompt) when another process takes that
// port while ckpt's daemon is gone (DESIGN §10, "Another local user could take the port the HTTP hooks
// post to"; test/init-claude.test.ts covers it with scripted hook JSON). Every prompt is its own
// `claude -p --resume` process (run-claude.ts): the prompt made while the port is taken comes from a
// process that read the hooks naming that port, the one after comes from a restart that reads the
// re-pointed settings. The squatter is a plain TCP listener recording every byte it receives: ckpt's
// probe may connect to it, but no hook may post to it — not one tool call's input, not the credential.
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { makeAgentWorld, type AgentWorld } from './harness/agent-world.js';
import { tool } from './harness/fake-anthropic-server.js';
import { describeRun, type ClaudeRun } from './harness/run-claude.js';
import { stopStoreDaemon } from './harness/stop-store-daemon.js';
import { waitFor } from './harness/wait-for.js';

interface Squatter {
  /** Connections made to it (ckpt's probe connects and leaves without a byte). */
  connections: number;
  /** What each connection sent, as text, when it sent anything. */
  received: string[];
  close(): Promise<void>;
}

/** A listener on `port` that records every byte and answers an HTTP request with `{}` (as a squatter might). */
async function squat(port: number): Promise<Squatter> {
  const sq: Squatter = { connections: 0, received: [], close: async () => {} };
  const server: Server = createServer((socket) => {
    sq.connections++;
    let text = '';
    let at = -1;
    socket.on('data', (d: Buffer) => {
      if (at < 0) at = sq.received.push('') - 1;
      text += d.toString('utf8');
      sq.received[at] = text;
      if (text.includes('\r\n\r\n')) socket.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}');
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  sq.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return sq;
}

/** The port the installed HTTP hooks post to (PreToolUse's url in the project's settings.local.json). */
async function hookPort(ws: string): Promise<number> {
  const settings = JSON.parse(await readFile(join(ws, '.claude', 'settings.local.json'), 'utf8'));
  const url = settings.hooks.PreToolUse[0].hooks[0].url as string;
  return Number(/^http:\/\/127\.0\.0\.1:(\d+)\/hooks\/claude/.exec(url)![1]);
}

async function claimedPort(store: string): Promise<number | undefined> {
  const text = await readFile(join(store, 'daemon', 'daemon.json'), 'utf8').catch(() => undefined);
  return text ? (JSON.parse(text) as { port?: number }).port : undefined;
}

const FILES = { 'README.md': '# Project\n', 'src/app.js': "console.log('v1');\n" };

/** The stream-json event in which Claude Code says a UserPromptSubmit hook stopped the prompt (2.1.328: a system "informational" line). */
function blockSaid(r: ClaudeRun): string | undefined {
  const e = r.events.find((x) => x.type === 'system' && typeof x.content === 'string' && x.content.includes('UserPromptSubmit operation blocked by hook'));
  return e?.content as string | undefined;
}

/** The checkpoints ckpt recorded for a tool in the workspace's latest session, as `tool path` lines. */
async function recorded(w: AgentWorld): Promise<string[]> {
  const log = await w.ckpt.json(['log']);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (log.checkpoints as any[]).flatMap((c) => (c.files as { path: string }[]).map((f) => `${c.tool} ${f.path}`));
}

describe('Claude Code 2.1.328, the default install, its HTTP hooks port taken while the daemon is gone', () => {
  it('the prompt is stopped before the model sees it and nothing is posted to the squatter; a restarted Claude Code (re-pointed hooks) works and records again', async () => {
    const w = await makeAgentWorld({ kind: 'git', mode: 'default', files: FILES });
    let squatter: Squatter | undefined;
    try {
      const f = (p: string) => `${w.ws}/${p}`;
      /** A prompt whose UserPromptSubmit hook must stop it: the model is never asked, its Write never runs, the squatter hears nothing. */
      const stopped = async (text: string, file: string, port: number): Promise<string> => {
        const asked = w.fake.requests.length;
        w.fake.script([[tool.write(f(file), `${text}\n`)]]);
        const r = await w.claude.prompt(text);
        const said = blockSaid(r);
        expect(said, `Claude Code says the prompt ${JSON.stringify(text)} was stopped: ${describeRun(r)}`).toBeDefined();
        // Both ways ckpt stops it (no daemon yet / a daemon elsewhere) name the taken port and say prompts stop until a restart.
        expect(said).toContain(`port ${port}`);
        expect(said).toContain('ckpt stops each prompt');
        // Claude Code 2.1.328 in -p mode: a stopped prompt is no error — exit 0, a "success" result of no turns.
        expect(r.code, describeRun(r)).toBe(0);
        expect(r.result).toMatchObject({ subtype: 'success', is_error: false, num_turns: 0 });
        expect(w.fake.requests.slice(asked), 'the model got no request for the stopped prompt').toEqual([]);
        expect(w.fake.drop(), 'its scripted Write was never asked for').toBe(1);
        expect(existsSync(f(file)), `${file} was not written`).toBe(false);
        expect(squatter!.received, 'nothing was sent to the squatter').toEqual([]);
        return said!;
      };

      // 1. The daemon init started serves the HTTP hooks: a Write is recorded through them.
      await w.prompt('one', [[tool.write(f('a.txt'), 'one\n')]]);
      const P = await hookPort(w.ws);
      expect(await claimedPort(w.store), 'the hooks post to the daemon init started').toBe(P);
      expect(await recorded(w)).toContain('Write a.txt');

      // 2. The daemon goes; another process takes its port.
      await stopStoreDaemon(w.store);
      squatter = await squat(P);

      // 3. The next prompt comes from a process that read the hooks naming P. Its SessionStart hook
      // finds no daemon and P answering, says so, and starts the daemon elsewhere; its
      // UserPromptSubmit hook stops the prompt (through that daemon, which re-points the hooks, or,
      // when it is not up yet, by itself).
      const said = await stopped('two', 'b.txt', P);
      const Q = await waitFor('the daemon back on another port', async () => {
        const p = await claimedPort(w.store);
        return p !== undefined && p !== P ? p : undefined;
      });
      if (!said.includes(`it listens on port ${Q}`)) {
        // Stopped before the daemon was up, so nothing re-pointed the hooks yet: the next process
        // reads P too, its prompt hook re-points them through the daemon, and it is stopped as well.
        const again = await stopped('two again', 'b2.txt', P);
        expect(again).toContain(`it listens on port ${Q}`);
      }
      expect(await hookPort(w.ws), "the project's HTTP hooks re-pointed at the daemon's new port").toBe(Q);

      // 4. A restart reads the re-pointed hooks: its prompt goes on, and its Write is recorded through them.
      const three = await w.prompt('three', [[tool.write(f('c.txt'), 'three\n')]]);
      expect(blockSaid(three)).toBeUndefined();
      expect(await readFile(f('c.txt'), 'utf8')).toBe('three\n');
      expect(await recorded(w)).toContain('Write c.txt');
      expect(await claimedPort(w.store), 'the same daemon').toBe(Q);
      expect(squatter.received, 'nothing was sent to the squatter').toEqual([]);

      // 5. Restoring the turn from before the move restores the project's settings too, so far as ckpt
      // recorded them: they may name P again (ckpt 2026-12-05 does that). A process started then is
      // stopped once more (its prompt hook re-points them); never does a tool call reach the squatter.
      const restore = await w.ckpt.ckpt(['restore', await w.turnOf('one'), '--yes', '--json']);
      expect(restore.code, restore.stderr).toBe(0);
      if ((await hookPort(w.ws)) === P) await stopped('four, after the restore', 'd.txt', P);
      expect(await hookPort(w.ws)).toBe(Q);
      await w.prompt('five', [[tool.write(f('e.txt'), 'five\n')]]);
      expect(await recorded(w)).toContain('Write e.txt');
      expect(squatter.received, 'nothing was sent to the squatter').toEqual([]);
      expect(await w.hookFailures()).toEqual([]);
    } finally {
      await squatter?.close();
      await w.close();
    }
  });
});
