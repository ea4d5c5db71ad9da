// The fleet soak (issue 33): 2 simulated machines (own machine ids and workspace folders) x N agent
// processes (CKPT_FLEET_SOAK_PROCS, default 8) record turns and captures into one shared store for
// CKPT_FLEET_SOAK_SECONDS (default 60) while machine B's daemon streams every event over SSE. Then:
// every turn arrived, in order per session; `verify` is clean. Prints the figures: events per second,
// p50/p99 from the start of an append on machine A to its SSE event on B's daemon (goal p99 <= 200 ms
// on loopback; the test fails above CKPT_FLEET_SOAK_P99_MS when set: unset by default, as a loaded,
// shared 2-core CI machine measured seconds, see the README) and from the append call's return (negative when the event beats the reply),
// capture-one under the soak, and capture-one on a quiet store, local vs shared, alternated.
// Runs under `npm run test:shared`.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../src/http/daemon.js';
import { openStore, verify, type Store } from '../src/index.js';
import type { FleetWorkerArgs, FleetWorkerSummary } from './fleet/soak-worker.js';
import { readSse } from './helpers/http.js';
import { dropSharedStore, freshSharedUrl, SHARED_BASE } from './helpers/shared-store.js';

const describeShared = SHARED_BASE ? describe : describe.skip;
const SECONDS = Number(process.env.CKPT_FLEET_SOAK_SECONDS ?? 60);
const PROCS = Number(process.env.CKPT_FLEET_SOAK_PROCS ?? 8);
const P99_LIMIT = process.env.CKPT_FLEET_SOAK_P99_MS ? Number(process.env.CKPT_FLEET_SOAK_P99_MS) : undefined;
const COMPARE_SECONDS = Number(process.env.CKPT_FLEET_SOAK_COMPARE_SECONDS ?? 3);
const WORKER = fileURLToPath(new URL('./fleet/soak-worker.ts', import.meta.url));
const now = (): number => performance.timeOrigin + performance.now();

interface Worker {
  ready: Promise<void>;
  go: () => void;
  done: Promise<FleetWorkerSummary>;
}

function startWorker(args: FleetWorkerArgs, machine: string): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(args)], {
    env: { ...process.env, CKPT_MACHINE_ID: machine, CKPT_RETENTION: 'off' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let onReady: () => void = () => {};
  const ready = new Promise<void>((r) => (onReady = r));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    if (out.startsWith('ready\n')) onReady();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const done = new Promise<FleetWorkerSummary>((resolve, reject) =>
    child.on('close', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{')) reject(new Error(`worker ${args.session} exited ${code}: ${err}`));
      else resolve(JSON.parse(last) as FleetWorkerSummary);
    }),
  );
  return { ready, go: () => child.stdin.end('go\n'), done };
}

/** Reads the daemon's SSE stream, stamping each event with its arrival time. */
function listen(url: string, token: string, path: string) {
  const got: { at: number; event: string; data: string }[] = [];
  const req = readSse(url, token, path, (e) => {
    if (e.event) got.push({ at: now(), event: e.event, data: e.data });
  });
  return { got, close: () => req.destroy() };
}

const pct = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const ms = (x: number): string => `${x.toFixed(1)} ms`;

describeShared('fleet soak: 2 machines x N agent processes on the shared store', () => {
  let url: string;
  let base: string;
  let daemon: RunningDaemon | undefined;
  let store: Store | undefined;
  const savedState = process.env.XDG_STATE_HOME;
  beforeEach(async () => {
    url = freshSharedUrl();
    base = await mkdtemp(join(tmpdir(), 'ckpt-fleet-soak-'));
    process.env.XDG_STATE_HOME = join(base, 'state');
  });
  afterEach(async () => {
    await daemon?.close();
    await store?.close();
    await dropSharedStore(url);
    if (savedState === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = savedState;
    await rm(base, { recursive: true, force: true });
  });

  it(`streams every append to the other machine's daemon, verify clean (${SECONDS} s x ${PROCS} procs x 2)`, async () => {
    const saved = process.env.CKPT_MACHINE_ID;
    process.env.CKPT_MACHINE_ID = 'm-b';
    try {
      store = await openStore({ dir: url });
    } finally {
      if (saved === undefined) delete process.env.CKPT_MACHINE_ID;
      else process.env.CKPT_MACHINE_ID = saved;
    }
    daemon = await startDaemon({ store, version: 'test' });
    const sse = listen(daemon.url, daemon.token, '/events');

    const workers: Worker[] = [];
    for (const machine of ['m-a', 'm-b']) {
      const folder = join(base, machine, 'repo');
      await mkdir(folder, { recursive: true });
      for (let i = 0; i < PROCS; i++) workers.push(startWorker({ store: url, folder, session: `${machine}-w${i}`, seconds: SECONDS }, machine));
    }
    await Promise.all(workers.map((w) => w.ready));
    await new Promise((r) => setTimeout(r, 500)); // the daemon learns the new sessions (their creation events)
    const received0 = sse.got.length;
    const t0 = now();
    for (const w of workers) w.go();
    const summaries = await Promise.all(workers.map((w) => w.done));
    const elapsed = (now() - t0) / 1000;

    const sentTurns = summaries.reduce((n, s) => n + s.turns, 0);
    const turnsSeen = () => sse.got.filter((e) => e.event === 'turn' && e.data.includes('"fleet ')).length;
    for (const deadline = Date.now() + 30_000; turnsSeen() < sentTurns && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
    sse.close();

    // Every turn arrived once, in order per session, named by its machine.
    const bySession = new Map<string, number[]>();
    const lat: Record<string, number[]> = { 'm-a': [], 'm-b': [] };
    const afterReturn: number[] = [];
    const doneAt = new Map(summaries.map((s) => [s.session, s.turnDone]));
    for (const e of sse.got) {
      if (e.event !== 'turn') continue;
      const d = JSON.parse(e.data) as { machine?: string; session: string; event: { text?: string } };
      const m = /^fleet (\S+) (\d+) at=([\d.]+)$/.exec(d.event.text ?? '');
      if (!m) continue;
      expect(d.session).toBe(m[1]);
      expect(d.machine).toBe(m[1]!.split('-w')[0]);
      const list = bySession.get(d.session) ?? [];
      list.push(Number(m[2]));
      bySession.set(d.session, list);
      lat[d.machine!]!.push(e.at - Number(m[3]));
      const returned = doneAt.get(d.session)?.[Number(m[2])];
      if (d.machine === 'm-a' && returned !== undefined) afterReturn.push(e.at - returned);
    }
    for (const s of summaries) {
      expect(s.unexpected, s.session).toEqual([]);
      const seen = bySession.get(s.session) ?? [];
      expect(seen.length, `${s.session}: turns streamed`).toBe(s.turns);
      expect(seen, `${s.session}: in order`).toEqual([...seen].sort((a, b) => a - b));
    }

    const problems = (await verify(store.ctx)).problems;
    expect(problems).toEqual([]);

    const events = sse.got.length - received0;
    const captureMs = summaries.flatMap((s) => s.captureMs);
    const locked = summaries.reduce((n, s) => n + (s.errors.LOCKED ?? 0), 0);
    const figures = {
      machines: 2,
      procsPerMachine: PROCS,
      seconds: Number(elapsed.toFixed(1)),
      turns: sentTurns,
      captures: summaries.reduce((n, s) => n + s.captures, 0),
      locked,
      sseEvents: events,
      eventsPerSecond: Number((events / elapsed).toFixed(1)),
      farAppendToSse: { n: lat['m-a']!.length, p50: ms(pct(lat['m-a']!, 50)), p99: ms(pct(lat['m-a']!, 99)), max: ms(Math.max(...lat['m-a']!)) },
      farAfterAppendReturned: { p50: ms(pct(afterReturn, 50)), p99: ms(pct(afterReturn, 99)) },
      nearAppendToSse: { n: lat['m-b']!.length, p50: ms(pct(lat['m-b']!, 50)), p99: ms(pct(lat['m-b']!, 99)) },
      captureOneUnderSoak: { n: captureMs.length, p50: ms(pct(captureMs, 50)), p99: ms(pct(captureMs, 99)) },
    };
    process.stdout.write(`fleet soak figures: ${JSON.stringify(figures, null, 2)}\n`);
    if (P99_LIMIT !== undefined) expect(pct(lat['m-a']!, 99)).toBeLessThanOrEqual(P99_LIMIT);

    // Capture-one on a quiet store, local vs shared, alternated (paired: the same machine load).
    const quiet: Record<'local' | 'shared', number[]> = { local: [], shared: [] };
    for (let round = 0; round < 2; round++) {
      for (const kind of ['local', 'shared'] as const) {
        const folder = join(base, `quiet-${kind}-${round}`);
        await mkdir(folder);
        const w = startWorker({ store: kind === 'local' ? join(base, 'local-store') : url, folder, session: `q-${kind}-${round}`, seconds: COMPARE_SECONDS }, 'm-q');
        await w.ready;
        w.go();
        quiet[kind].push(...(await w.done).captureMs);
      }
    }
    const compare = {
      local: { n: quiet.local.length, p50: ms(pct(quiet.local, 50)), p99: ms(pct(quiet.local, 99)) },
      shared: { n: quiet.shared.length, p50: ms(pct(quiet.shared, 50)), p99: ms(pct(quiet.shared, 99)) },
    };
    process.stdout.write(`capture-one, one quiet process: ${JSON.stringify(compare)}\n`);
    expect(quiet.local.length).toBeGreaterThan(0);
    expect(quiet.shared.length).toBeGreaterThan(0);
  }, (SECONDS + 4 * COMPARE_SECONDS) * 1000 + 240_000);
});
