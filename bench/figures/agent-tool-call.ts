// agent-tool-call (issue 28): what ckpt costs a tool call as the user feels it, under the real Claude
// Code (the test:agents harness: Claude Code 2.1.328 from the npm registry, the scripted fake model).
// One prompt of 48 tool calls (Write, Read, Edit, Bash, twelve times each, one call per model answer);
// a tool call's time is from the end of the fake model's answer holding it to Claude Code's next
// request (the tool, its hooks, Claude Code's own work). Per hook setup, in fresh worlds, alternating
// setups round by round (paired under the shared machine's load); the goal's three setups (none,
// noop-http, default) in a rotation of their own, the rest in a second one (measureAgentToolCall):
//   none          no hooks
//   noop-http     HTTP PreToolUse/PostToolUse(Failure) hooks (matcher *) to a server answering {}
//   noop-command  command hooks (matcher *) running `node -e 0`
//   default       `ckpt init claude` (per-tool-call HTTP hooks with the credential, read-only tools skipped)
//   http          `ckpt init claude --http`
//   command       `ckpt init claude --command` (the shell hook client posting to the daemon with curl)
//   fallback      `ckpt init claude --command` with CKPT_NO_DAEMON=1 (every event in-process)
// The entry: ckpt = default's median overhead over no hooks for Write/Edit/Bash, baseline = noop-http's;
// `per_tool_*` has every setup's median per tool, its overhead, and its cost over noop-http paired
// round by round. Standalone:
// `npx tsx bench/figures/agent-tool-call.ts [rounds] [goal rounds]` prints the JSON; CKPT_BENCH_SETUPS=noop-http,default
// runs only the setups named (and none).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureAgent } from '../../test/agents/harness/install-agent.js';
import { startFakeAnthropic, tool, type Step } from '../../test/agents/harness/fake-anthropic-server.js';
import { ClaudeDriver, describeRun } from '../../test/agents/harness/run-claude.js';
import { stopStoreDaemon } from '../../test/agents/harness/stop-store-daemon.js';
import { runCli } from '../../test/helpers/cli.js';
import type { BenchContext } from '../context.js';
import { makeEntry, type Entry } from '../report.js';
import { flushIo } from '../proc.js';

export const SETUPS = ['none', 'noop-http', 'noop-command', 'default', 'http', 'command', 'fallback'] as const;
type Setup = (typeof SETUPS)[number];
/** The setups run: all, or those CKPT_BENCH_SETUPS names (comma-separated; `none` always runs: overheads are over it). */
function chosenSetups(): readonly Setup[] {
  const named = process.env.CKPT_BENCH_SETUPS?.split(',').map((s) => s.trim());
  return named ? SETUPS.filter((s) => s === 'none' || named.includes(s)) : SETUPS;
}
const TOOLS = ['Write', 'Read', 'Edit', 'Bash'] as const;
/** Pause before each world, after flushing the writes of the one before. */
const SETTLE_MS = 1_000;
const REPEATS = 12;

/** The 48 steps: one call per model answer. */
function script(ws: string): Step[] {
  const steps: Step[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const f = path.join(ws, `src/f${i}.txt`);
    // The edited text occurs once: Claude Code refuses an ambiguous Edit before any hook runs.
    steps.push([tool.write(f, `head ${i}\n${'line\n'.repeat(50)}`)], [tool.read(f)], [tool.edit(f, `head ${i}\n`, `HEAD ${i}\n`)], [tool.bash(`echo ${i} >> log.txt`)]);
  }
  return steps;
}

/** One world of one setup: its prompt's tool-call times by tool. */
async function runSetup(setup: Setup, bin: string, noopUrl: string): Promise<Record<string, number[]>> {
  const base = await mkdtemp(path.join(os.tmpdir(), `ckpt-bench-agent-${setup}-`));
  const ws = path.join(base, 'project');
  const store = path.join(base, 'store');
  const home = path.join(base, 'home');
  await mkdir(path.join(ws, 'src'), { recursive: true });
  await mkdir(home);
  await writeFile(path.join(ws, 'README.md'), '# bench\n');
  const fake = await startFakeAnthropic();
  const env: Record<string, string> = {};
  const ckpt = (args: string[]) => runCli(['--store', store, ...args, '--json'], { cwd: ws, env: { HOME: home, CKPT_HOME: '', CKPT_STORE: '' } });
  try {
    const local = path.join(ws, '.claude', 'settings.local.json');
    const noop = (hook: Record<string, unknown>) => ({ hooks: Object.fromEntries(['PreToolUse', 'PostToolUse', 'PostToolUseFailure'].map((e) => [e, [{ matcher: '*', hooks: [hook] }]])) });
    if (setup === 'noop-http' || setup === 'noop-command') {
      await mkdir(path.dirname(local), { recursive: true });
      await writeFile(local, JSON.stringify(noop(setup === 'noop-http' ? { type: 'http', url: noopUrl } : { type: 'command', command: `${process.execPath} -e 0` })));
    } else if (setup !== 'none') {
      const args = setup === 'default' ? ['init', 'claude'] : setup === 'http' ? ['init', 'claude', '--http'] : ['init', 'claude', '--local', '--command'];
      const r = await ckpt(args);
      if (r.code !== 0) throw new Error(`ckpt ${args.join(' ')}: ${r.stderr}`);
      if (setup === 'fallback') env.CKPT_NO_DAEMON = '1';
    }
    const claude = new ClaudeDriver({ bin, cwd: ws, home, baseUrl: fake.url, env, timeoutMs: 300_000 });
    fake.script(script(ws));
    const run = await claude.prompt('Work through the files');
    if (run.code !== 0 || run.result?.is_error || fake.pending() !== 0) throw new Error(`claude (${setup}): ${describeRun(run)}`);
    // Every call must have run (a refused call would be timed without its hooks).
    const failed = fake.requests.flatMap((r) => (Array.isArray(r.body.messages?.at(-1)?.content) ? r.body.messages.at(-1).content : [])).filter((c: { type?: string; is_error?: boolean }) => c.type === 'tool_result' && c.is_error);
    if (failed.length) throw new Error(`claude (${setup}): ${failed.length} tool calls failed: ${JSON.stringify(failed[0]).slice(0, 300)}`);
    const times: Record<string, number[]> = Object.fromEntries(TOOLS.map((t) => [t, []]));
    const main = fake.requests.filter((r) => r.mainLoop);
    for (let i = 0; i + 1 < main.length; i++) {
      const a = main[i]!;
      if (!('calls' in a.answered) || a.answered.calls.length !== 1 || a.answeredAt === undefined) continue;
      times[a.answered.calls[0]!.name]?.push(main[i + 1]!.at - a.answeredAt);
    }
    return times;
  } finally {
    await stopStoreDaemon(store);
    await fake.close();
    await rm(base, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export interface AgentToolCallResult {
  /** Rounds of the setups beside the goal's. */
  rounds: number;
  /** Rounds of the goal's setups (none, noop-http, default). */
  goalRounds: number;
  /** setup → tool → median ms of a tool call. */
  median: Record<Setup, Record<string, number>>;
  /** setup → tool → median minus no hooks. */
  overhead: Record<Setup, Record<string, number>>;
  /**
   * setup → tool → over the no-op HTTP hook, paired round by round: each round's median minus the
   * same round's noop-http median, then the median and range of those differences over the rounds.
   * Load drifts between rounds (the machine is shared) cancel out; the range says how far one round is from the next.
   */
  overNoopHttp?: Record<Setup, Record<string, { median: number; min: number; max: number }>>;
}

/** The setups the goal compares: measured in their own rotation (see measureAgentToolCall). */
const GOAL_SETUPS: readonly Setup[] = ['none', 'noop-http', 'default'];

/** One rotation: `rounds` rounds of `setups` in fresh worlds, the order reversed every other round. */
async function rotation(setups: readonly Setup[], rounds: number, bin: string, noopUrl: string, log: (msg: string) => void, label: string) {
  const all = Object.fromEntries(setups.map((s) => [s, Object.fromEntries(TOOLS.map((t) => [t, [] as number[]]))])) as Record<Setup, Record<string, number[]>>;
  /** round → setup → tool → that world's median. */
  const perRound: Partial<Record<Setup, Record<string, number>>>[] = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate the order round by round so that load drifts do not favour one setup.
    const order = round % 2 === 0 ? setups : [...setups].reverse();
    perRound.push({});
    for (const setup of order) {
      // Each world starts on a settled machine: the writes a heavier setup before it left (the
      // fallback's in-process hooks) are flushed first, else they land in the next world's calls.
      await flushIo();
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const t = await runSetup(setup, bin, noopUrl);
      for (const tl of TOOLS) all[setup][tl]!.push(...t[tl]!);
      perRound[round]![setup] = Object.fromEntries(TOOLS.map((tl) => [tl, median(t[tl]!)]));
      log(`  ${label} round ${round + 1} ${setup}: ${TOOLS.map((tl) => `${tl} ${median(t[tl]!).toFixed(0)} ms`).join(', ')}`);
    }
  }
  const r1 = (x: number): number => Math.round(x * 10) / 10;
  const med = Object.fromEntries(setups.map((s) => [s, Object.fromEntries(TOOLS.map((t) => [t, r1(median(all[s][t]!))]))]));
  const overhead = Object.fromEntries(setups.map((s) => [s, Object.fromEntries(TOOLS.map((t) => [t, r1(med[s]![t]! - med.none![t]!)]))]));
  const overNoopHttp = setups.includes('noop-http')
    ? Object.fromEntries(
        setups.map((s) => [
          s,
          Object.fromEntries(
            TOOLS.map((t) => {
              const d = perRound.map((r) => r[s]![t]! - r['noop-http']![t]!);
              return [t, { median: r1(median(d)), min: r1(Math.min(...d)), max: r1(Math.max(...d)) }];
            }),
          ),
        ]),
      )
    : undefined;
  return { median: med, overhead, overNoopHttp };
}

/**
 * The goal's setups (no hooks, the no-op HTTP hook, the default install) run `goalRounds` rounds in a
 * rotation of their own; the other setups `rounds` rounds in a second rotation with no hooks and the
 * no-op hook beside them (their overheads are over that rotation's worlds). Two rotations because a
 * world's calls depend on the worlds before it: with the command-hook setups (hundreds of Node
 * processes per world) in the same rotation, the same per-call hooks (default and --http) differed
 * by 10–20 ms from run to run, more than the goal's margin.
 */
export async function measureAgentToolCall(rounds: number, log: (msg: string) => void, goalRounds = rounds): Promise<AgentToolCallResult> {
  const bin = await ensureAgent('claude', log);
  const noopServer = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => noopServer.listen(0, '127.0.0.1', r));
  const noopUrl = `http://127.0.0.1:${(noopServer.address() as AddressInfo).port}/hook`;
  const setups = chosenSetups();
  try {
    const goal = await rotation(GOAL_SETUPS.filter((s) => setups.includes(s)), goalRounds, bin, noopUrl, log, 'goal');
    const rest = setups.filter((s) => !GOAL_SETUPS.includes(s));
    const others = rest.length ? await rotation([...GOAL_SETUPS.filter((s) => s !== 'default' && setups.includes(s)), ...rest], rounds, bin, noopUrl, log, 'others') : undefined;
    const pick = <T,>(a: Record<string, T>, b: Record<string, T> | undefined): Record<Setup, T> =>
      Object.fromEntries(SETUPS.map((s) => [s, GOAL_SETUPS.includes(s) ? a[s] : b?.[s]]).filter(([, v]) => v !== undefined)) as Record<Setup, T>;
    const overNoopHttp = goal.overNoopHttp ? pick(goal.overNoopHttp, others?.overNoopHttp) : undefined;
    return { rounds, goalRounds, median: pick(goal.median, others?.median), overhead: pick(goal.overhead, others?.overhead), ...(overNoopHttp ? { overNoopHttp } : {}) };
  } finally {
    noopServer.close();
  }
}

export async function agentToolCallFigure(ctx: BenchContext): Promise<Entry> {
  let r: AgentToolCallResult | Error;
  try {
    r = await measureAgentToolCall(ctx.quick ? 1 : 2, ctx.log, ctx.quick ? 2 : 6);
  } catch (err) {
    r = err instanceof Error ? err : new Error(String(err));
  }
  const changing = (s: Setup) => (r instanceof Error ? NaN : median(['Write', 'Edit', 'Bash'].map((t) => r.overhead[s][t]!)));
  return makeEntry({
    name: 'agent-tool-call',
    unit: 'ms',
    ckpt: r instanceof Error ? r : changing('default'),
    baseline: 'a no-op HTTP hook (Write/Edit/Bash overhead over no hooks, real Claude Code)',
    base: r instanceof Error ? r : changing('noop-http'),
    goal: 'ckpt_ms ≤ baseline_ms + 10 (Write/Edit/Bash), Read ~0',
    extra: r instanceof Error ? {} : { per_tool_median_ms: r.median, per_tool_overhead_ms: r.overhead, ...(r.overNoopHttp ? { per_tool_over_noop_http_ms: r.overNoopHttp } : {}), rounds: r.rounds, goal_rounds: r.goalRounds },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rounds = Number(process.argv[2] ?? 2);
  const r = await measureAgentToolCall(rounds, (m) => process.stderr.write(`${m}\n`), Number(process.argv[3] ?? rounds));
  process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
}
