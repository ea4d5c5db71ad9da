// Crash tests on the shared store (issue 33): machine A's capture, restore and gc run as CLI children
// that SIGKILL themselves just before their k-th request to PostgreSQL or S3 (or their k-th workspace
// write: restore's staging and placing), via test/fleet/fault-net.ts, while machine B records into the
// same store the whole time. Afterwards: the next command on A works (a scan, which finishes or
// abandons an interrupted restore: the journal), the workspace is exactly the before- or the
// after-state, the operation run again works and ends in the after-state, B never failed and its log
// is dense, `verify` is clean (every referenced blob readable: no row points at a missing S3 object),
// and after `gc --grace 0s` the store has no leftovers (an S3 object put by the killed process
// without its row is one until then). Steps are spread evenly over the operation, plus one seeded by
// the day (CKPT_RELIABILITY_SEED repeats a run) and the request right after the first S3 put;
// CKPT_FLEET_KILLS=N evenly spread kills per side (default 2).
// Runs under `npm run test:shared`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { verify, type Session, type Store } from '../src/index.js';
import { parseSharedStoreUrl } from '../src/storage/shared/store-url.js';
import type { NetFaultConfig, NetFaultReport } from './fleet/fault-net.js';
import { dropSharedStore, freshSharedUrl, openAsMachine, SHARED_BASE } from './helpers/shared-store.js';
import { checkState, pickStep, runReporting, sampleSteps, seamModule, type Baseline, type Run as HarnessRun } from './reliability/fault-harness.js';
import type { Side } from './reliability/fault-fs.js';
import { SCENARIOS, type Scenario } from './reliability/scenarios.js';
import { findNames, isStagingName, snapshotTree } from './reliability/tree.js';

const describeShared = SHARED_BASE ? describe : describe.skip;
const KILLS = Number(process.env.CKPT_FLEET_KILLS ?? 2);
const OPERATIONS = ['capture', 'restore', 'gc'];
const base = mkdtempSync(join(tmpdir(), 'ckpt-fleet-kills-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const preloadModule = seamModule(fileURLToPath(new URL('./fleet/fault-net.ts', import.meta.url)), base);

/** The ports of the test servers: requests to them are the store steps. */
function serverPorts(url: string): number[] {
  const loc = parseSharedStoreUrl(url);
  const pgPort = Number(new URL(loc.pgConnectionString).port || 5432);
  return [pgPort, Number(new URL(loc.endpoint!).port || 80)];
}

type Run = HarnessRun<NetFaultReport>;

/** `ckpt --json --store URL --workspace W --session main ARGS` as machine A, killed at a step if asked. */
async function runA(url: string, ws: string, args: string[], kill?: { side: Side; step: number }): Promise<Run> {
  const report = join(base, `report-${Math.random().toString(36).slice(2)}.json`);
  const config: NetFaultConfig = { ports: serverPorts(url), workspace: ws, report, ...kill };
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', CKPT_MACHINE_ID: 'm-a', CKPT_RETENTION: 'off', CKPT_NET_FAULT: JSON.stringify(config), NODE_OPTIONS: `--import=${await preloadModule()}` };
  return runReporting<NetFaultReport>(url, ws, args, env, report);
}

/** Machine A's setup of `scenario` (through the library, as A) in a fresh store. */
async function freshCase(scenario: Scenario): Promise<{ url: string; ws: string; dir: string }> {
  const url = freshSharedUrl();
  const dir = mkdtempSync(join(base, `${scenario.name}-`));
  const ws = join(dir, 'a');
  mkdirSync(ws);
  const saved = process.env.CKPT_MACHINE_ID;
  const savedRetention = process.env.CKPT_RETENTION;
  process.env.CKPT_MACHINE_ID = 'm-a';
  process.env.CKPT_RETENTION = 'off';
  try {
    await scenario.setup({ store: url, workspace: ws });
  } finally {
    if (saved === undefined) delete process.env.CKPT_MACHINE_ID;
    else process.env.CKPT_MACHINE_ID = saved;
    if (savedRetention === undefined) delete process.env.CKPT_RETENTION;
    else process.env.CKPT_RETENTION = savedRetention;
  }
  return { url, ws, dir };
}

/** Machine B: a session that records turns, captures and settles until stopped. */
function recordAsB(store: Store, folder: string) {
  let stop = false;
  const errors: string[] = [];
  let rounds = 0;
  let session: Session | undefined;
  const done = (async () => {
    const ws = await store.openWorkspace(folder);
    session = await ws.create({ id: 'b-rec' });
    while (!stop) {
      try {
        await session.turn({ text: `b ${rounds}` });
        writeFileSync(join(folder, 'f.txt'), `b before ${rounds}\n`);
        await session.capture(['f.txt'], { tool: 'Edit' });
        writeFileSync(join(folder, 'f.txt'), `b after ${rounds}\n`);
        await session.settle(['f.txt']);
        rounds++;
      } catch (err) {
        errors.push(String(err));
        if (errors.length > 5) return;
      }
    }
  })();
  return {
    async stop() {
      stop = true;
      await done;
      return { rounds, errors, session };
    },
  };
}

interface CaseResult {
  label: string;
  fired: boolean;
  failures: string[];
  /** Leftovers the kill left (S3 objects without their row) before gc removed them. */
  leftoversBeforeGc?: number;
}

async function killCase(scenario: Scenario, b: Baseline, side: Side, step: number, recovery?: number): Promise<CaseResult> {
  const label = `${scenario.name} killed before ${side} step ${step}${recovery ? `, recovery killed at workspace step ${recovery}` : ''}`;
  const { url, ws, dir } = await freshCase(scenario);
  const bFolder = join(dir, 'b');
  mkdirSync(bFolder);
  const storeB = await openAsMachine(url, 'm-b');
  const recorder = recordAsB(storeB, bFolder);
  const failures: string[] = [];
  try {
    const run = await runA(url, ws, scenario.args, { side, step });
    if (run.signal !== 'SIGKILL') {
      await recorder.stop();
      return { label, fired: false, failures: run.code === 0 ? [] : [`${label}: not killed, yet exit ${run.code}: ${run.stderr.trim().slice(0, 300)}`] };
    }
    if (recovery) {
      const again = await runA(url, ws, ['scan'], { side: 'workspace', step: recovery });
      if (again.signal !== 'SIGKILL' && again.code !== 0) failures.push(`${label}: the recovering scan failed with exit ${again.code}: ${again.stderr.trim().slice(0, 300)}`);
    }
    // The next command finishes or abandons what the kill interrupted.
    const next = await runA(url, ws, ['scan']);
    if (next.code !== 0) failures.push(`${label}: the next command (scan) failed with exit ${next.code}: ${next.stderr.trim().slice(0, 300)}`);
    const state = checkState(snapshotTree(ws), b);
    if (state) failures.push(`${label}: after the next command, ${state}`);
    const staging = findNames(ws, isStagingName);
    if (staging.length) failures.push(`${label}: staging files left: ${staging.join(', ')}`);
    // The killed operation, run again, works and ends where a clean run does.
    const again = await runA(url, ws, scenario.args);
    if (again.code !== 0) failures.push(`${label}: ckpt ${scenario.args.join(' ')} again failed with exit ${again.code}: ${again.stderr.trim().slice(0, 300)}`);
    else if (scenario.name !== 'capture') {
      const after = checkState(snapshotTree(ws), { ...b, before: b.after });
      if (after) failures.push(`${label}: after running it again, ${after}`);
    }
    const { rounds, errors, session } = await recorder.stop();
    if (errors.length) failures.push(`${label}: machine B failed meanwhile: ${errors.join('; ').slice(0, 400)}`);
    if (rounds === 0) failures.push(`${label}: machine B recorded nothing meanwhile`);
    const events = await session!.events();
    if (events.some((e, i) => e.seq !== i + 1)) failures.push(`${label}: machine B's log is not dense`);
    if (events.filter((e) => e.type === 'turn').length !== rounds) failures.push(`${label}: machine B's turns: ${events.filter((e) => e.type === 'turn').length}, rounds ${rounds}`);
    const problems = (await verify(storeB.ctx)).problems;
    if (problems.length) failures.push(`${label}: verify: ${JSON.stringify(problems).slice(0, 400)}`);
    // Nothing half-written stays: what the killed process put without committing is GC's.
    const leftoversBeforeGc = (await storeB.ctx.backend.leftovers()).length;
    const gc = await runA(url, ws, ['gc', '--grace', '0s']);
    if (gc.code !== 0) failures.push(`${label}: gc failed with exit ${gc.code}: ${gc.stderr.trim().slice(0, 300)}`);
    const left = await storeB.ctx.backend.leftovers();
    if (left.length) failures.push(`${label}: leftovers after gc: ${left.map((l) => l.key).join(', ').slice(0, 300)}`);
    const problemsAfterGc = (await verify(storeB.ctx)).problems;
    if (problemsAfterGc.length) failures.push(`${label}: verify after gc: ${JSON.stringify(problemsAfterGc).slice(0, 400)}`);
    return { label, fired: true, failures, leftoversBeforeGc };
  } finally {
    await recorder.stop();
    await storeB.close();
    await dropSharedStore(url);
    rmSync(dir, { recursive: true, force: true });
  }
}

describeShared('SIGKILL on one machine while another records (shared store)', () => {
  for (const [index, name] of OPERATIONS.entries()) {
    const scenario = SCENARIOS.find((s) => s.name === name)!;
    it(`${name}: killed at a request to PostgreSQL/S3 or a workspace write, the store and the workspace recover`, async () => {
      // A clean run: its steps and the states around it.
      const clean = await freshCase(scenario);
      let b: Baseline;
      try {
        const before = snapshotTree(clean.ws);
        const run = await runA(clean.url, clean.ws, scenario.args);
        expect(run.code, run.stderr).toBe(0);
        b = { before, after: snapshotTree(clean.ws), counts: run.report!.counts, trace: run.report!.trace };
      } finally {
        await dropSharedStore(clean.url);
        rmSync(clean.dir, { recursive: true, force: true });
      }
      const cases: [Side, number, number?][] = [];
      let afterPut: number | undefined;
      for (const side of ['store', 'workspace'] as const) {
        const n = b.counts[side];
        if (n === 0) continue;
        const steps = new Set([...sampleSteps(n, KILLS), pickStep(n, index * 2 + (side === 'store' ? 0 : 1) + 4000)]);
        // Right after the first S3 put: the object is there, the row naming it is not (a leftover for gc).
        const put = b.trace.find((t) => t.side === 'store' && t.op === 's3' && t.path.startsWith('PUT '));
        if (side === 'store' && put && put.step < n) {
          afterPut = put.step + 1;
          steps.add(afterPut);
        }
        for (const step of steps) cases.push([side, step]);
      }
      // A kill while the next command recovers an interrupted restore.
      if (b.counts.workspace > 0) cases.push(['workspace', Math.ceil(b.counts.workspace * 0.75), 1]);
      const results: CaseResult[] = [];
      for (const [side, step, recovery] of cases) results.push(await killCase(scenario, b, side, step, recovery));
      const at = (r: CaseResult): string => r.label;
      process.stdout.write(`${name}: ${b.counts.store} store steps, ${b.counts.workspace} workspace steps; killed: ${results.filter((r) => r.fired).map(at).join('; ')}; leftovers before gc: ${results.reduce((n, r) => n + (r.leftoversBeforeGc ?? 0), 0)}\n`);
      expect(results.flatMap((r) => r.failures)).toEqual([]);
      // Killed between an S3 put and its row: the object was a leftover until gc took it.
      const putCase = results.find((r) => r.fired && afterPut !== undefined && r.label.endsWith(`store step ${afterPut}`));
      if (putCase) expect(putCase.leftoversBeforeGc, putCase.label).toBeGreaterThan(0);
      expect(results.filter((r) => r.fired).length).toBeGreaterThan(0);
    }, 600_000);
  }
});
