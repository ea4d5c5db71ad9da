// copilot-tool-call (issue 30): what ckpt's hooks cost a tool call under the real GitHub Copilot CLI
// (@github/copilot 1.0.102, offline against the scripted fake model of test/agents). One prompt of 12
// tool calls (create, view, edit, bash, three times each, one call per model answer); a tool call's
// time is from the end of the fake model's answer holding it to the CLI's next model request (the
// tool, its PreToolUse and PostToolUse hooks, the CLI's own work). Setups, alternating round by round
// in fresh worlds (paired under the shared machine's load):
//   none          no hooks
//   noop-command  PreToolUse / PostToolUse / PostToolUseFailure command hooks running `node -e 0`
//   default       `ckpt init copilot` (the thin client forwarding each event to the store's daemon,
//                 started by a warm-up prompt's first hook and up before the measured prompt)
//   fallback      the same hooks with CKPT_NO_DAEMON=1 (every event recorded in-process)
// Prints per setup and tool the median time and its overhead over `none`.
// Standalone: `npx tsx bench/figures/copilot-tool-call.ts [rounds]` (after `npm run build`).
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DRIVERS } from '../../test/agents/harness/cli-agents.js';
import { ensureAgent } from '../../test/agents/harness/install-agent.js';
import { removeAgentWorld } from '../../test/agents/harness/stop-store-daemon.js';
import { startFakeModel, type Step } from '../../test/agents/fake-model.js';
import { runCli } from '../../test/helpers/cli.js';

const SETUPS = ['none', 'noop-command', 'default', 'fallback'] as const;
type Setup = (typeof SETUPS)[number];
const TOOLS = ['create', 'view', 'edit', 'bash'] as const;
const PROMPT = 'Run the benchmark steps';

function script(ws: string): Step[] {
  const steps: Step[] = [];
  for (let i = 0; i < 3; i++) {
    const f = path.join(ws, `src/f${i}.txt`);
    steps.push(
      { tool: 'create', args: { path: f, file_text: `head ${i}\n${'line\n'.repeat(50)}` } },
      { tool: 'view', args: { path: f } },
      { tool: 'edit', args: { path: f, old_str: `head ${i}\n`, new_str: `HEAD ${i}\n` } },
      { tool: 'bash', args: { command: `echo ${i} >> log.txt`, description: 'append' } },
    );
  }
  return [...steps, { text: 'Done.' }];
}

async function runSetup(setup: Setup, bin: string): Promise<Record<string, number[]>> {
  const base = await mkdtemp(path.join(os.tmpdir(), `ckpt-bench-copilot-${setup}-`));
  const ws = path.join(base, 'project');
  const store = path.join(base, 'store');
  const home = path.join(base, 'home');
  await mkdir(path.join(ws, 'src'), { recursive: true });
  await mkdir(home);
  const steps = script(ws);
  const model = await startFakeModel('chat', { [PROMPT]: steps });
  try {
    if (setup === 'noop-command') {
      await mkdir(path.join(ws, '.github', 'hooks'), { recursive: true });
      const hook = { type: 'command', bash: 'node -e 0', timeoutSec: 120 };
      await writeFile(path.join(ws, '.github', 'hooks', 'noop.json'), JSON.stringify({ version: 1, hooks: { PreToolUse: [hook], PostToolUse: [hook], PostToolUseFailure: [hook] } }));
    } else if (setup !== 'none') {
      const r = await runCli(['--store', store, 'init', 'copilot', '--json'], { cwd: ws, env: { HOME: home, CKPT_HOME: '', CKPT_STORE: '' } });
      if (r.code !== 0) throw new Error(`ckpt init copilot: ${r.stderr}`);
    }
    const d = DRIVERS.copilot;
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, PWD: ws, NO_COLOR: '1', ...d.env({ home, model }), ...(setup === 'fallback' ? { CKPT_NO_DAEMON: '1' } : {}) };
    delete env.CKPT_HOME;
    delete env.CKPT_STORE;
    const run = (prompt: string) =>
      new Promise<number>((resolve, reject) => {
        const child = spawn(bin, d.argv(prompt, undefined), { cwd: ws, env, stdio: ['ignore', 'ignore', 'ignore'] });
        child.on('error', reject);
        child.on('close', (c) => resolve(c ?? -1));
      });
    if (setup === 'default') {
      // Steady state: the daemon a session's first hook starts is up before the measured prompt.
      if ((await run('warm up')) !== 0) throw new Error('copilot warm-up failed');
      for (const until = Date.now() + 30_000; !(await stat(path.join(store, 'daemon', 'daemon.json')).catch(() => undefined)); ) {
        if (Date.now() > until) throw new Error('the daemon did not come up');
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    const from = model.requests.length;
    const code = await run(PROMPT);
    if (code !== 0) throw new Error(`copilot exited ${code} (${setup})`);
    // The requests that carried tools, in order: the k-th got step k; its tool ran until request k+1.
    const calls = model.requests.slice(from).filter((r) => Array.isArray((r.body as { tools?: unknown[] } | undefined)?.tools) && ((r.body as { tools: unknown[] }).tools.length > 0));
    const out: Record<string, number[]> = {};
    for (let k = 0; k + 1 < calls.length && k < steps.length - 1; k++) {
      const step = steps[k]!;
      if (!('tool' in step)) continue;
      (out[step.tool] ??= []).push(calls[k + 1]!.at - calls[k]!.answered!);
    }
    return out;
  } finally {
    await model.close();
    await removeAgentWorld(base, store);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 2);
  const bin = await ensureAgent('copilot');
  const times: Record<Setup, Record<string, number[]>> = { none: {}, 'noop-command': {}, default: {}, fallback: {} };
  for (let r = 0; r < rounds; r++) {
    for (const setup of r % 2 ? [...SETUPS].reverse() : SETUPS) {
      const got = await runSetup(setup, bin);
      for (const [t, xs] of Object.entries(got)) (times[setup][t] ??= []).push(...xs);
    }
  }
  const report: Record<string, Record<string, { median_ms: number; overhead_ms: number; n: number }>> = {};
  for (const setup of SETUPS) {
    report[setup] = {};
    for (const t of TOOLS) {
      const m = median(times[setup][t] ?? []);
      report[setup]![t] = { median_ms: Math.round(m), overhead_ms: Math.round(m - median(times.none[t] ?? [])), n: (times[setup][t] ?? []).length };
    }
  }
  console.log(JSON.stringify({ rounds, load: os.loadavg().map((x) => Math.round(x * 10) / 10), report }, null, 2));
}

await main();
