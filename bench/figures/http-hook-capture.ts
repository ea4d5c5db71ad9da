// http-hook-capture: one Claude Code PreToolUse Edit of a 16 KiB file posted to the daemon's
// `POST /hooks/claude` (as a `"type": "http"` hook installed by `ckpt init claude --http` sends it),
// in a session of 10,000 events — vs the least any recording of it could cost: a bare write + fsync
// of the same file plus one loopback HTTP round trip of the same body to a server that does nothing.
// The capture must be durable when the answer comes, like the command hook's.
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { BenchContext } from '../context.js';
import { sourceText } from '../gen/source-text.js';
import { measureInterleaved, timed } from '../measure.js';
import { startDaemon, type Daemon } from '../ops/daemon.js';
import { makeEntry, type Entry } from '../report.js';
import { hookEvent, hookStore } from './hook.js';
import { fmtMs, writeRel } from './shared.js';

const SIZE = 16 * 1024;

/** A loopback HTTP server in its own process that reads the body and answers `{}`: the round-trip floor. */
async function startEcho(): Promise<{ url: string; child: ChildProcess }> {
  const code = `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => { s.setHeader('content-type', 'application/json'); s.end('{}'); }); }).listen(0, '127.0.0.1', function () { process.stdout.write(String(this.address().port) + '\\n'); });`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.on('exit', (c) => reject(new Error(`echo server exited ${c}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<string> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${text.slice(0, 300)}`);
  return text;
}

export async function httpHookCaptureFigure(ctx: BenchContext): Promise<Entry> {
  const rel = ctx.tree.relPath(ctx.mutable.capture);
  const abs = path.join(ctx.tree.root, rel);
  const floorFile = path.join(ctx.runDir, 'http-hook-floor.ts');
  let daemon: Daemon | undefined;
  let echo: { url: string; child: ChildProcess } | undefined;
  try {
    const store = await hookStore(ctx);
    daemon = await startDaemon(store);
    echo = await startEcho();
    const d = daemon;
    const e = echo;
    const hookUrl = `${d.url}/hooks/claude?${new URLSearchParams({ workspace: ctx.tree.root })}`;
    const auth = { authorization: `Bearer ${d.token}` };
    const body = (i: number): string => hookEvent(ctx, 'PreToolUse', 'Edit', { file_path: abs, old_string: 'a', new_string: 'b', replace_all: false }, i);
    let content: Buffer = Buffer.alloc(0);
    // Dirty pages flushed (untimed) before every call: each side's fsync pays only for its own writes.
    const r = await measureInterleaved(
      { ...ctx.light, flush: true },
      {
        ckpt: async (i) => {
          let answer = '';
          const ms = await timed(async () => {
            answer = await post(hookUrl, body(i), auth);
          });
          if (answer !== '{}') throw new Error(`the hook answered ${answer.slice(0, 300)}`);
          if (i < 3) ctx.log(`  http hook #${i}: ${fmtMs(ms)}`);
          return ms;
        },
        floor: async (i) => {
          const ms = await timed(async () => {
            const fh = await fsp.open(floorFile, 'w');
            try {
              await fh.writeFile(content);
              await fh.sync();
            } finally {
              await fh.close();
            }
            await post(e.url, body(i), auth);
          });
          if (i < 3) ctx.log(`  write+fsync+round trip #${i}: ${fmtMs(ms)}`);
          return ms;
        },
      },
      async (i) => {
        content = sourceText(ctx.tree.seed, 5_000_000 + i, SIZE);
        await writeRel(ctx, rel, content);
      },
    );
    return makeEntry({
      name: 'http-hook-capture',
      unit: 'ms',
      ckpt: r.ckpt,
      baseline: 'write + fsync of the same 16 KiB file + one loopback HTTP round trip of the same body',
      base: r.floor,
      goal: 'ratio ≤ 1.5 (PreToolUse Edit through POST /hooks/claude, session of 10000 events)',
    });
  } finally {
    await daemon?.stop();
    echo?.child.kill('SIGTERM');
    await writeRel(ctx, rel, ctx.tree.content(ctx.mutable.capture));
  }
}
