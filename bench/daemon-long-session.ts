// The resident daemon over a long day (issue 28): posts Edit capture+settle pairs of one Claude
// session to `POST /hooks/claude` of a real `ckpt serve` (the built CLI, optionally under a small V8
// heap) and reports, every `--every` events, the daemon's RSS and heap (GET /health) and the time per
// event of the last stretch. `npx tsx bench/daemon-long-session.ts [events] [every] [max-old-space-mb] [stages]`.
// Paired comparison of builds: CKPT_BINS=/old/bin/ckpt.js,/new/bin/ckpt.js runs one daemon per build,
// each with its own store and workspace, and sends every capture+settle pair to each in turn (the
// order alternating per pair), so both see the same machine load.
// Long histories without hours of posting: `--stages 1000,10000,50000` (argv: events every heap
// stages) first appends the session's history up to each stage through the library (batches of turns
// and captures, one fsync per batch, while the daemon runs), then measures `every` hook events there.
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
  /** The build (bin/ckpt.js) this daemon ran. */
  bin: string;
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

interface Driver {
  bin: string;
  result: LongSessionResult;
  /** Time spent in this daemon's requests since the last point. */
  spent: number;
  step(n: number, turn: number): Promise<void>;
  /** Appends turns of captures to the session's log (through the library) until it holds `events` events. */
  prefill(events: number): Promise<void>;
  point(events: number, every: number): Promise<LongSessionPoint>;
  exited(): boolean;
  stop(): Promise<void>;
}

async function startDriver(bin: string, options: { maxOldSpaceMb?: number; files: number }): Promise<Driver> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'ckpt-long-session-'));
  const ws = path.join(base, 'ws');
  const store = path.join(base, 'store');
  const files = options.files;
  await mkdir(path.join(ws, 'src'), { recursive: true });
  for (let i = 0; i < files; i++) await writeFile(path.join(ws, 'src', `f${i}.ts`), `export const v${i} = 0;\n`);
  const nodeArgs = options.maxOldSpaceMb ? [`--max-old-space-size=${options.maxOldSpaceMb}`] : [];
  const daemon: ChildProcess = spawn(process.execPath, [...nodeArgs, bin, '--store', store, 'serve', '--json'], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  daemon.stderr!.on('data', (d) => (err = (err + d).slice(-4000)));
  let exited = false;
  daemon.on('exit', () => (exited = true));
  let agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const stop = async (): Promise<void> => {
    agent.destroy();
    if (!exited) {
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.once('exit', r));
    }
    await rm(base, { recursive: true, force: true });
  };
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
    const driver: Driver = {
      bin,
      result: { bin, points: [] },
      spent: 0,
      async step(n, turn) {
        const t0 = performance.now();
        if (n % 50 === 0) await post(agent, port, token, q, ev('UserPromptSubmit', { prompt: `prompt ${turn}` }));
        const i = n / 2;
        const file = path.join(ws, 'src', `f${i % files}.ts`);
        const input = { file_path: file, old_string: 'a', new_string: 'b' };
        const pre = await post(agent, port, token, q, ev('PreToolUse', { tool_name: 'Edit', tool_input: input, tool_use_id: `t${i}` }));
        await writeFile(file, `export const v = ${i};\n`);
        const postR = await post(agent, port, token, q, ev('PostToolUse', { tool_name: 'Edit', tool_input: input, tool_use_id: `t${i}`, tool_response: {} }));
        if (pre.status !== 200 || postR.status !== 200 || pre.text !== '{}' || postR.text !== '{}') throw new Error(`hook answered ${pre.status} ${pre.text} / ${postR.status} ${postR.text}`);
        driver.spent += performance.now() - t0;
      },
      async point(events, every) {
        const health = await get(agent, port, token, '/health');
        const mem = health.memory as { rss: number; heapUsed: number };
        const p = { events, rssMb: Math.round(mem.rss / 1e5) / 10, heapUsedMb: Math.round(mem.heapUsed / 1e5) / 10, msPerEvent: Math.round((driver.spent / every) * 100) / 100 };
        driver.spent = 0;
        driver.result.points.push(p);
        return p;
      },
      async prefill(target) {
        const { openStore, agentSessionId } = await import('../src/index.js');
        const st = await openStore({ dir: store });
        const session = await (await st.openWorkspace(ws)).get(agentSessionId('claude', 'long'));
        let seq = (await session.metadata()).eventCount;
        let t = 1_000_000 + seq; // turn numbers of their own (above the hook turns)
        while (seq < target) {
          const batch: { type: string; [k: string]: unknown }[] = [{ type: 'turn', turn: ++t }];
          for (let k = 1; k < 50 && seq + batch.length < target; k++) {
            batch.push({ type: 'capture', tag: `${t}.${k}`, turn: t, k, tool: 'Edit', callId: `p${t}.${k}`, files: [{ path: `src/f${k % files}.ts`, state: 'absent' }] });
          }
          await session.append(batch);
          seq += batch.length;
          // A hook call now and then, as when the appends come from other hook processes between the
          // daemon's own calls: the daemon folds them as they come, not 40,000 at once.
          if (Math.floor(seq / 1000) !== Math.floor((seq - batch.length) / 1000)) {
            agent.destroy();
            agent = new Agent({ keepAlive: true, maxSockets: 1 });
            await driver.step(2, 0);
          }
        }
        // The server has closed the kept-alive socket meanwhile (idle longer than its keep-alive time).
        agent.destroy();
        agent = new Agent({ keepAlive: true, maxSockets: 1 });
      },
      exited: () => exited,
      stop,
    };
    // The daemon's stderr, for a death (heap exhaustion) reported with the result.
    Object.defineProperty(driver, 'stderr', { get: () => err });
    return driver;
  } catch (e) {
    await stop();
    throw e;
  }
}

/** One session of `events` hook events sent to each build's daemon in turn; a point every `every` events. */
export async function longSession(options: { events: number; every: number; stages?: number[]; bins?: string[]; maxOldSpaceMb?: number; files?: number; log?: (line: string) => void }): Promise<LongSessionResult[]> {
  const bins = options.bins ?? [BIN];
  const drivers: Driver[] = [];
  try {
    for (const bin of bins) drivers.push(await startDriver(bin, { files: options.files ?? 200, ...(options.maxOldSpaceMb ? { maxOldSpaceMb: options.maxOldSpaceMb } : {}) }));
    let live = drivers;
    let turn = 0;
    if (options.stages) {
      let n = 0;
      for (const stage of options.stages) {
        for (const d of live) {
          try {
            await d.prefill(stage);
          } catch (e) {
            await new Promise((r) => setTimeout(r, 200)); // its exit event
            if (!d.exited()) throw e;
            d.result.died = (d as unknown as { stderr: string }).stderr.slice(-1500);
            options.log?.(`${d.bin}: died before stage ${stage}: ${d.result.died}`);
          }
        }
        live = live.filter((d) => d.result.died === undefined);
        for (const d of live) d.spent = 0;
        for (let i = 0; i < options.every && live.length > 0; i += 2, n += 2) {
          if (n % 50 === 0) turn++;
          for (const d of (n / 2) % 2 === 0 ? live : [...live].reverse()) {
            try {
              await d.step(n, turn);
            } catch (e) {
              await new Promise((r) => setTimeout(r, 200)); // its exit event
              if (!d.exited()) throw e;
              d.result.died = (d as unknown as { stderr: string }).stderr.slice(-1500);
              options.log?.(`${d.bin}: died at stage ${stage}: ${d.result.died}`);
            }
          }
          live = live.filter((d) => d.result.died === undefined);
        }
        for (const d of live) {
          const p = await d.point(stage, options.every);
          options.log?.(`${bins.length > 1 ? `${d.bin}: ` : ''}at ${p.events} events: RSS ${p.rssMb} MB, heap ${p.heapUsedMb} MB, ${p.msPerEvent} ms/event (${options.every} hook events)`);
        }
      }
      return drivers.map((d) => d.result);
    }
    for (let n = 0; n < options.events && live.length > 0; n += 2) {
      if (n % 50 === 0) turn++;
      // Alternate which build goes first, so neither always runs right after the other's fsyncs.
      const order = (n / 2) % 2 === 0 ? live : [...live].reverse();
      for (const d of order) {
        try {
          await d.step(n, turn);
        } catch (e) {
          if (!d.exited()) throw e;
          d.result.died = (d as unknown as { stderr: string }).stderr.slice(-1500);
          options.log?.(`${d.bin}: died after ${n} events`);
        }
      }
      live = live.filter((d) => d.result.died === undefined);
      if ((n + 2) % options.every === 0) {
        for (const d of live) {
          const p = await d.point(n + 2, options.every);
          options.log?.(`${bins.length > 1 ? `${d.bin}: ` : ''}${p.events} events: RSS ${p.rssMb} MB, heap ${p.heapUsedMb} MB, ${p.msPerEvent} ms/event`);
        }
      }
    }
    return drivers.map((d) => d.result);
  } finally {
    for (const d of drivers) await d.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [events, every, heap] = process.argv.slice(2, 5).map(Number);
  const stages = process.argv[5] ? process.argv[5].split(',').map(Number) : undefined;
  const bins = process.env.CKPT_BINS ? process.env.CKPT_BINS.split(',').map((b) => path.resolve(b)) : undefined;
  const r = await longSession({ events: events || 20_000, every: every || 2_000, ...(bins ? { bins } : {}), ...(stages ? { stages } : {}), ...(heap ? { maxOldSpaceMb: heap } : {}), log: (l) => process.stderr.write(`${l}\n`) });
  process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
}
