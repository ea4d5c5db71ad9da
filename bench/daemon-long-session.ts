// The resident daemon over a long day (issue 28): posts Edit capture+settle pairs of one Claude
// session to `POST /hooks/claude` of a real `ckpt serve` (the built CLI, optionally under a small V8
// heap) and reports, every `--every` events, the daemon's RSS and heap (GET /health) and the time per
// event of the last stretch. `npx tsx bench/daemon-long-session.ts [events] [every] [max-old-space-mb]`.
// (Issue 28 asks for RSS within ±20 MB and time per event within 1.2× from 10,000 to 100,000 events.)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request, Agent } from 'node:http';

const BIN = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', 'bin', 'ckpt.js');

export interface LongSessionPoint {
  events: number;
  rssMb: number;
  heapUsedMb: number;
  msPerEvent: number;
}

export interface LongSessionResult {
  points: LongSessionPoint[];
  /** The daemon died (heap exhaustion, a crash): its stderr's tail. */
  died?: string;
}

function post(agent: Agent, port: number, token: string, pathAndQuery: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: pathAndQuery, agent, headers: { host: '127.0.0.1', authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function get(agent: Agent, port: number, token: string, p: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: p, agent, headers: { host: '127.0.0.1', authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve(JSON.parse(text) as Record<string, unknown>));
    });
    req.on('error', reject);
    req.end();
  });
}

export async function longSession(options: { events: number; every: number; maxOldSpaceMb?: number; files?: number; log?: (line: string) => void }): Promise<LongSessionResult> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'ckpt-long-session-'));
  const ws = path.join(base, 'ws');
  const store = path.join(base, 'store');
  const files = options.files ?? 200;
  await mkdir(path.join(ws, 'src'), { recursive: true });
  for (let i = 0; i < files; i++) await writeFile(path.join(ws, 'src', `f${i}.ts`), `export const v${i} = 0;\n`);
  const nodeArgs = options.maxOldSpaceMb ? [`--max-old-space-size=${options.maxOldSpaceMb}`] : [];
  const daemon: ChildProcess = spawn(process.execPath, [...nodeArgs, BIN, '--store', store, 'serve', '--json'], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  daemon.stderr!.on('data', (d) => (err = (err + d).slice(-4000)));
  let exited = false;
  daemon.on('exit', () => (exited = true));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const started = await new Promise<{ url: string }>((resolve, reject) => {
      let out = '';
      daemon.stdout!.on('data', (d) => {
        out += d;
        try {
          resolve(JSON.parse(out) as { url: string });
        } catch {
          // more to come
        }
      });
      daemon.on('exit', (code) => reject(new Error(`ckpt serve exited ${code}: ${err}`)));
    });
    const port = Number(new URL(started.url).port);
    const token = (await readFile(path.join(store, 'daemon', 'token'), 'utf8')).trim();
    const q = `/hooks/claude?workspace=${encodeURIComponent(ws)}`;
    const ev = (name: string, extra: Record<string, unknown>) => JSON.stringify({ session_id: 'long', transcript_path: '/dev/null', cwd: ws, hook_event_name: name, ...extra });
    await post(agent, port, token, q, ev('SessionStart', { source: 'startup' }));
    const points: LongSessionPoint[] = [];
    let n = 0;
    let turn = 0;
    let stretch = performance.now();
    while (n < options.events) {
      if (n % 50 === 0) {
        await post(agent, port, token, q, ev('UserPromptSubmit', { prompt: `prompt ${++turn}` }));
      }
      const i = n / 2;
      const file = path.join(ws, 'src', `f${i % files}.ts`);
      const input = { file_path: file, old_string: 'a', new_string: 'b' };
      const pre = await post(agent, port, token, q, ev('PreToolUse', { tool_name: 'Edit', tool_input: input, tool_use_id: `t${i}` }));
      await writeFile(file, `export const v = ${i};\n`);
      const postR = await post(agent, port, token, q, ev('PostToolUse', { tool_name: 'Edit', tool_input: input, tool_use_id: `t${i}`, tool_response: {} }));
      if (pre.status !== 200 || postR.status !== 200 || pre.text !== '{}' || postR.text !== '{}') throw new Error(`hook answered ${pre.status} ${pre.text} / ${postR.status} ${postR.text}`);
      n += 2;
      if (n % options.every === 0) {
        const now = performance.now();
        const health = await get(agent, port, token, '/health');
        const mem = health.memory as { rss: number; heapUsed: number };
        const p = { events: n, rssMb: Math.round(mem.rss / 1e5) / 10, heapUsedMb: Math.round(mem.heapUsed / 1e5) / 10, msPerEvent: Math.round(((now - stretch) / options.every) * 100) / 100 };
        points.push(p);
        options.log?.(`${p.events} events: RSS ${p.rssMb} MB, heap ${p.heapUsedMb} MB, ${p.msPerEvent} ms/event`);
        stretch = performance.now();
      }
    }
    return { points };
  } catch (e) {
    if (exited) return { points: [], died: err.slice(-1500) };
    throw e;
  } finally {
    agent.destroy();
    if (!exited) {
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.once('exit', r));
    }
    await rm(base, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [events, every, heap] = process.argv.slice(2).map(Number);
  const r = await longSession({ events: events || 20_000, every: every || 2_000, ...(heap ? { maxOldSpaceMb: heap } : {}), log: (l) => process.stderr.write(`${l}\n`) });
  process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
}
