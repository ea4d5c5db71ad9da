// Crash safety of restore (DESIGN §4, issue 3 item 10): a child process restores ~200 paths (writes,
// deletes, creations, modes, symlinks); the parent SIGKILLs it at instants spread over the restore's
// duration, then opens the session (which recovers) and requires the workspace to be exactly — byte,
// mode, link target and folder — the before-state or the after-state, with no staging file left.
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/store.js';
import { buildScenario, type Scenario } from './fixtures/restore-scenario.js';
import { isStaging, makeWorld, snapshot, type World } from './fixtures/restore-world.js';

const run = promisify(execFile);

const CHILD = fileURLToPath(new URL('./fixtures/restore-crash-child.ts', import.meta.url));
const LANES = 3;
const PER_LANE = 8;
/** Kills are spread over this multiple of the restore's estimated duration (a few land after it). */
const SPAN_FACTOR = 1.1;

interface Run {
  /** Whether the child was killed before it finished. */
  killed: boolean;
  /** The restore's duration as the child measured it (when it finished). */
  ms?: number;
}

interface Child {
  /** Resolves once the child has loaded its modules and waits for its arguments. */
  ready: Promise<void>;
  /** Sends the arguments; kills the child `delayMs` after it says "go" (never, when undefined). */
  run(args: string[], delayMs: number | undefined): Promise<Run>;
  kill(): void;
}

/** Spawns a child ahead of time (module loading is slow): it waits for its arguments on stdin. */
function spawnChild(): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let onOut = (): void => {};
  let onReady!: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('ready\n')) onReady();
    onOut();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  return {
    ready,
    async run(args, delayMs) {
      let timer: NodeJS.Timeout | undefined;
      onOut = () => {
        if (delayMs !== undefined && !timer && out.includes('go\n')) timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
      };
      child.stdin.end(`${args.join(' ')}\n`);
      const { code, signal } = await exited;
      clearTimeout(timer);
      if (signal === 'SIGKILL') return { killed: true };
      if (code !== 0) throw new Error(`child exited ${code}: ${err}`);
      const line = out.split('\n').find((l) => l.startsWith('{'));
      return { killed: false, ms: line ? (JSON.parse(line) as { ms: number }).ms : undefined };
    },
    kill: () => child.kill('SIGKILL'),
  };
}

interface Outcome {
  state: 'before' | 'after';
  killed: boolean;
  delayMs: number | undefined;
  ms?: number;
  /** What the log says: no restore recorded, abandoned on open, finished on open, or committed by the child. */
  journal: 'none' | 'aborted' | 'finished' | 'committed';
}

interface Lane {
  w: World;
  sc: Scenario;
  /** The next child, spawned while the previous iteration is checked. */
  next: Child;
}

/** A lane: one world with the scenario built once; its session folder and workspace saved as templates. */
async function makeLane(): Promise<Lane> {
  const w = await makeWorld({ prefix: 'ckpt-crash-' });
  const sc = await buildScenario(w);
  const lane = { w, sc, next: spawnChild() };
  for (const [from, to] of saved(lane)) await run('cp', ['-a', from, to]);
  return lane;
}

/** What a restore changes, with where its template lives: blobs it adds are harmless and stay. */
function saved({ w }: Lane): [string, string][] {
  const dirs = [w.dirs.workspace, join(w.dirs.store, w.session.key), join(w.dirs.store, w.ws.ctx.workspace.key, 'owners.json')];
  return dirs.map((d) => [d, `${d}.tpl`]);
}

/** Puts the lane's workspace and session back exactly as built (same paths: same workspace id). */
async function resetLane(lane: Lane): Promise<void> {
  const pairs = saved(lane);
  await run('rm', ['-rf', ...pairs.map(([d]) => d)]);
  for (const [d, tpl] of pairs) await run('cp', ['-a', tpl, d]);
}

/**
 * One iteration: restore in a child (killed `delayMs` after "go"), reopen in a fresh store handle,
 * check. The killed child's session lock names it: the fresh handle takes it over at once.
 */
async function iteration(lane: Lane, delayMs: number | undefined): Promise<Outcome> {
  const { w, sc } = lane;
  await resetLane(lane);
  const proc = lane.next;
  await proc.ready;
  const child = await proc.run([w.dirs.store, w.root, w.session.id, sc.tag], delayMs);
  lane.next = spawnChild();
  // A fresh process's view: open the store and the session, which finishes or abandons the restore.
  const store = await openStore({ dir: w.dirs.store });
  const session = await (await store.openWorkspace(w.root)).get(w.session.id);
  const now = await snapshot(w.root);
  expect(Object.keys(now).filter(isStaging)).toEqual([]);
  const same = (ref: Record<string, unknown>) => JSON.stringify(now) === JSON.stringify(ref);
  const state = same(sc.after) ? 'after' : same(sc.before) ? 'before' : undefined;
  if (!state) {
    // Show the difference against the nearer state.
    const diff = (ref: Record<string, unknown>) => Object.keys({ ...ref, ...now }).filter((k) => JSON.stringify(ref[k]) !== JSON.stringify(now[k]));
    const a = diff(sc.after);
    const b = diff(sc.before);
    expect(a.length < b.length ? { vsAfter: a } : { vsBefore: b }).toEqual({});
  }
  const events = await session.events();
  const types = events.map((e) => e.type);
  if (state === 'after') expect(types.at(-1)).toBe('restore_committed');
  else expect(types.includes('restore_started')).toBe(false);
  const last = events.at(-1)!;
  const journal = last.type === 'restore_aborted' ? 'aborted' : last.type !== 'restore_committed' ? 'none' : (last.result as { recovered?: boolean }).recovered ? 'finished' : 'committed';
  return { state: state!, killed: child.killed, delayMs, ms: child.ms, journal };
}

describe('restore crash safety', () => {
  it(`ends in the before- or after-state when SIGKILLed at any instant (${LANES * PER_LANE} kills)`, async () => {
    const t0 = performance.now();
    const lanes = await Promise.all(Array.from({ length: LANES }, makeLane));
    // Each lane first restores unkilled, all at once: the restore's duration under the same load
    // the killed runs will see (this machine is shared, so a solo measurement would mislead).
    const calibrations = await Promise.all(lanes.map((lane) => iteration(lane, undefined)));
    for (const c of calibrations) expect(c).toMatchObject({ state: 'after', killed: false });
    const total = LANES * PER_LANE;
    const runs = lanes.map(async (lane, l) => {
      // Each lane adapts its estimate of the restore's duration: a kill that came too late (the child
      // had finished) teaches it the real duration, and the instant is tried again.
      let estimate = calibrations[l]!.ms ?? 300;
      const out: Outcome[] = [];
      for (let j = 0; j < PER_LANE; j++) {
        const slot = j * LANES + l; // stratified: slot k of `total` covers [k, k+1) / total of the span
        for (let attempt = 0; attempt < 3; attempt++) {
          const outcome = await iteration(lane, (estimate * SPAN_FACTOR * (slot + Math.random())) / total);
          out.push(outcome);
          if (outcome.killed) break;
          estimate = outcome.ms ?? estimate;
        }
      }
      return out;
    });
    const outcomes = (await Promise.all(runs)).flat().sort((a, b) => (a.delayMs ?? 0) - (b.delayMs ?? 0));
    await Promise.all(lanes.map((l) => l.w.dirs.cleanup()));
    for (const l of lanes) l.next.kill(); // the spare children
    const summary = {
      iterations: outcomes.length,
      killed: outcomes.filter((o) => o.killed).length,
      before: outcomes.filter((o) => o.state === 'before').length,
      after: outcomes.filter((o) => o.state === 'after').length,
      journal: Object.fromEntries(['none', 'aborted', 'finished', 'committed'].map((j) => [j, outcomes.filter((o) => o.journal === j).length])),
      restoreMs: calibrations.map((c) => Math.round(c.ms ?? 0)),
      seconds: Math.round((performance.now() - t0) / 100) / 10,
    };
    // The run's summary goes into the failure messages (a passing run prints nothing).
    const why = `crash-restore ${JSON.stringify(summary)} ${outcomes.map((o) => `${Math.round(o.delayMs ?? 0)}:${o.state[0]}`).join(' ')}`;
    expect(summary.killed, why).toBeGreaterThanOrEqual(total * 0.9);
    // Both ends must be reached: kills before the point of no return and after it.
    expect(summary.before, why).toBeGreaterThan(0);
    expect(summary.after, why).toBeGreaterThan(0);
  }, 120_000);
});
