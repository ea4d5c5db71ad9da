// One real-agent test world: a scratch folder holding the project (a git repository or a plain
// folder), ckpt's store, the agent's scratch HOME, the fake model and the agent driver, with ckpt's
// hooks installed (command or HTTP). It keeps the snapshots taken right before each prompt and checks
// the promise: for every turn N, `ckpt restore N` gives back exactly the tree of snapshot N, and
// restoring the restore's `undo` tag gives back exactly the tree from before the restore.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { setupCkpt, type CkptForAgent, type HookMode } from './ckpt-for-agent.js';
import { startFakeAnthropic, type FakeAnthropic, type Step } from './fake-anthropic-server.js';
import { ensureAgent } from './install-agent.js';
import { removeAgentWorld } from './stop-store-daemon.js';
import { ClaudeDriver, describeRun, type ClaudeRun } from './run-claude.js';
import { diffTrees, snapshotTree, type Tree } from './tree-snapshot.js';

const run = promisify(execFile);

export type ProjectKind = 'git' | 'plain';

export interface AgentWorld {
  base: string;
  ws: string;
  store: string;
  home: string;
  kind: ProjectKind;
  fake: FakeAnthropic;
  claude: ClaudeDriver;
  ckpt: CkptForAgent;
  /** Snapshots taken right before each prompt, by the prompt's text. */
  snaps: Map<string, Tree>;
  /** A shell command in the project (hand edits between prompts). */
  sh(command: string): Promise<string>;
  git(...args: string[]): Promise<string>;
  /** Snapshot, then one prompt that runs `steps`; fails unless the agent ran the whole script and exited 0. */
  prompt(text: string, steps: Step[]): Promise<ClaudeRun>;
  /** The turn ckpt recorded for a prompt (by its text) in a ckpt session (default: the workspace's latest). */
  turnOf(text: string, session?: string): Promise<string>;
  /** A slash command (`/compact`, `/clear`) as a `-p` prompt of the current conversation. */
  slash(command: string): Promise<ClaudeRun>;
  /**
   * For each prompt (in the order given): `ckpt restore <its turn>` must give back exactly the snapshot
   * taken right before it, and restoring the result's `undo` tag exactly the tree from before the
   * restore. The turn is found by the prompt's text in `ckpt log` unless given. Returns every mismatch.
   */
  checkRestores(prompts: { prompt: string; session?: string; turn?: string }[]): Promise<string[]>;
  /** hooks.log lines (hook failures ckpt recorded), for assertions. */
  hookFailures(): Promise<string[]>;
  close(): Promise<void>;
}

export async function makeAgentWorld(options: { kind: ProjectKind; mode: HookMode; files: Record<string, string>; setup?: string }): Promise<AgentWorld> {
  const bin = await ensureAgent('claude');
  const base = await mkdtemp(join(tmpdir(), `ckpt-agents-${options.kind}-${options.mode}-`));
  const ws = join(base, 'project');
  const store = join(base, 'store');
  const home = join(base, 'home');
  await mkdir(ws);
  await mkdir(home);
  const sh = async (command: string) => (await run('bash', ['-c', command], { cwd: ws, env: { ...process.env, HOME: home } })).stdout;
  const git = async (...args: string[]) =>
    (await run('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args], { cwd: ws, env: { ...process.env, HOME: home } })).stdout;
  for (const [path, content] of Object.entries(options.files)) {
    await mkdir(dirname(join(ws, path)), { recursive: true });
    await writeFile(join(ws, path), content, { mode: path.endsWith('.sh') ? 0o755 : 0o644 });
  }
  if (options.setup) await sh(options.setup);
  if (options.kind === 'git') {
    await git('init', '-q');
    await git('add', '-A');
    await git('commit', '-q', '-m', 'initial');
  }
  const fake = await startFakeAnthropic();
  const ckpt = await setupCkpt({ agent: 'claude', mode: options.mode, store, workspace: ws, home });
  const claude = new ClaudeDriver({ bin, cwd: ws, home, baseUrl: fake.url, env: ckpt.agentEnv });
  const snaps = new Map<string, Tree>();

  const expectRun = (r: ClaudeRun, what: string) => {
    if (r.code !== 0 || r.result?.is_error) throw new Error(`claude ${what}: ${describeRun(r)}`);
  };

  const world: AgentWorld = {
    base,
    ws,
    store,
    home,
    kind: options.kind,
    fake,
    claude,
    ckpt,
    snaps,
    sh,
    git,
    async prompt(text, steps) {
      snaps.set(text, await snapshotTree(ws));
      fake.script(steps);
      const r = await claude.prompt(text);
      expectRun(r, `prompt ${JSON.stringify(text)}`);
      if (fake.pending() !== 0) throw new Error(`claude left ${fake.pending()} scripted steps unused: ${describeRun(r)}`);
      return r;
    },
    async turnOf(text, session) {
      const log = await ckpt.json([...(session ? ['--session', session] : []), 'log']);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const t = (log.turns as any[]).filter((x) => x.text === text && !x.rewound);
      if (t.length !== 1) throw new Error(`ckpt log has ${t.length} turns for the prompt ${JSON.stringify(text)}: ${JSON.stringify(log.turns)}`);
      return String(t[0].turn);
    },
    async slash(command) {
      const r = await claude.prompt(command);
      expectRun(r, command);
      return r;
    },
    async checkRestores(prompts) {
      const problems: string[] = [];
      for (const { prompt: snap, session, turn: given } of prompts) {
        const s = session ? ['--session', session] : [];
        let turn: string;
        try {
          turn = given ?? (await world.turnOf(snap, session));
        } catch (e) {
          problems.push(String(e));
          continue;
        }
        const where = `restore ${turn} (prompt ${JSON.stringify(snap)}${session ? `, session ${session}` : ''})`;
        const before = await snapshotTree(ws);
        const r = await ckpt.ckpt([...s, 'restore', turn, '--yes', '--json']);
        if (r.code !== 0) {
          problems.push(`${where}: exit ${r.code}: ${r.stderr.trim()}`);
          continue;
        }
        const restored = r.json();
        problems.push(...diffTrees(snaps.get(snap)!, await snapshotTree(ws)).map((d) => `${where} vs snapshot before prompt ${snap}: ${d}`));
        // Nothing changed (no undo tag): the tree must simply still be the one from before.
        if (restored.undo == null) {
          if (diffTrees(snaps.get(snap)!, before).length === 0) continue;
          problems.push(`${where}: nothing restored (undo ${restored.undo}) although the tree differs from the snapshot`);
          continue;
        }
        const u = await ckpt.ckpt([...s, 'restore', restored.undo, '--yes', '--json']);
        if (u.code !== 0) {
          problems.push(`${where}, undo (restore ${restored.undo}): exit ${u.code}: ${u.stderr.trim()}`);
          continue;
        }
        problems.push(...diffTrees(before, await snapshotTree(ws)).map((d) => `${where}, undo (restore ${restored.undo}) vs the tree before the restore: ${d}`));
      }
      return problems;
    },
    async hookFailures() {
      const text = await readFile(join(store, 'hooks.log'), 'utf8').catch(() => '');
      return text.split('\n').filter(Boolean);
    },
    async close() {
      await ckpt.stop();
      await fake.close();
      if (!process.env.CKPT_AGENTS_KEEP) await removeAgentWorld(base, store);
    },
  };
  return world;
}
