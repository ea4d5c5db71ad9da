// Drivers for the real agent CLIs of issue 30 — Codex CLI, Gemini CLI, opencode, Copilot CLI — each
// pointed at a scripted fake model on loopback (fake-model.ts) with a scratch HOME, and a world that
// runs the same scenario through any of them: ckpt's hooks installed by `ckpt init <agent>`, a
// snapshot of the project before every prompt, and `checkRestores` — for every turn, `ckpt restore N`
// gives back exactly that snapshot, and restoring the restore's `undo` tag gives back the tree from
// before the restore. How each agent runs offline: ../shared/agents/README.md.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runCli, type CliRun } from '../../helpers/cli.js';
import { startFakeModel, type FakeModel, type Script, type Wire } from '../fake-model.js';
import { ensureAgent } from './install-agent.js';
import { removeAgentWorld, stopStoreDaemon } from './stop-store-daemon.js';
import { diffTrees, snapshotTree, type Tree } from './tree-snapshot.js';

export type CliAgent = 'codex' | 'gemini' | 'opencode' | 'copilot';

export interface AgentRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The agent's own session id, for the next prompt. */
  sessionId?: string;
}

interface Driver {
  wire: Wire;
  /** Writes the agent's configuration (model provider, permissions) into the scratch HOME / project. */
  configure(w: { home: string; ws: string; model: FakeModel }): Promise<void>;
  /** argv after the binary for one prompt, continuing `sessionId` when given. */
  argv(prompt: string, sessionId: string | undefined): string[];
  env(w: { home: string; model: FakeModel }): Record<string, string>;
  /** The session id the run printed. */
  sessionOf(stdout: string): string | undefined;
  /** Scope of `ckpt init` (project, or user for agents whose project hooks need more trust than a test gives). */
  initScope: '--project' | '--user';
  /** The prompt's text as the agent hands it on (`opencode run` wraps an argument with spaces in quotes). */
  asSent?: (prompt: string) => string;
  /** Top-level names of the project that are the agent's own, not the user's work (left out of snapshots). */
  ignore?: string[];
}

const jsonLines = (s: string) =>
  s.split('\n').flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });

export const DRIVERS: Record<CliAgent, Driver> = {
  codex: {
    wire: 'responses',
    initScope: '--user',
    async configure({ home, model }) {
      await mkdir(join(home, '.codex'), { recursive: true });
      await writeFile(
        join(home, '.codex', 'config.toml'),
        [
          'model = "gpt-5.5"',
          'model_provider = "fake"',
          'approval_policy = "never"',
          'sandbox_mode = "danger-full-access"',
          '[model_providers.fake]',
          'name = "fake"',
          `base_url = "${model.url}/v1"`,
          'wire_api = "responses"',
          'env_key = "FAKE_API_KEY"',
          '',
        ].join('\n'),
      );
    },
    // The hooks are trusted for the run only: trust is the user's decision, made in codex with /hooks.
    argv: (prompt, id) => ['exec', ...(id ? ['resume'] : []), '--skip-git-repo-check', '--dangerously-bypass-hook-trust', '--json', ...(id ? [id] : []), prompt],
    env: () => ({ FAKE_API_KEY: 'fake' }),
    sessionOf: (stdout) => jsonLines(stdout).find((e) => e.type === 'thread.started')?.thread_id as string | undefined,
  },
  gemini: {
    wire: 'gemini',
    initScope: '--project',
    async configure({ home }) {
      await mkdir(join(home, '.gemini'), { recursive: true });
      await writeFile(
        join(home, '.gemini', 'settings.json'),
        JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, model: { name: 'gemini-2.5-flash' }, tools: { enableHooks: true }, general: { disableAutoUpdate: true }, privacy: { usageStatisticsEnabled: false } }),
      );
    },
    argv: (prompt, id) => [...(id ? ['--resume', id] : []), '-p', prompt, '--approval-mode=yolo', '--output-format', 'json'],
    env: ({ model }) => ({ GEMINI_API_KEY: 'fake', GOOGLE_GEMINI_BASE_URL: model.url, GEMINI_CLI_TRUST_WORKSPACE: 'true' }),
    sessionOf: (stdout) => {
      try {
        return (JSON.parse(stdout) as { session_id?: string }).session_id;
      } catch {
        return undefined;
      }
    },
  },
  opencode: {
    wire: 'chat',
    initScope: '--project',
    // opencode's first run installs @opencode-ai/plugin into .opencode/ (node_modules, package.json…);
    // ckpt's plugin lives there too. Not the user's work: left out of the snapshots.
    ignore: ['.opencode'],
    asSent: (p) => (p.includes(' ') ? `"${p}"` : p),
    async configure({ ws, model }) {
      await writeFile(
        join(ws, 'opencode.json'),
        JSON.stringify({
          $schema: 'https://opencode.ai/config.json',
          provider: { fake: { npm: '@ai-sdk/openai-compatible', name: 'Fake', options: { baseURL: `${model.url}/v1`, apiKey: 'fake' }, models: { 'fake-coder': { name: 'Fake Coder', tool_call: true } } } },
          model: 'fake/fake-coder',
          small_model: 'fake/fake-coder',
          permission: { edit: 'allow', bash: 'allow', webfetch: 'allow', external_directory: 'allow' },
          autoupdate: false,
          share: 'disabled',
        }),
      );
    },
    argv: (prompt, id) => ['run', '--format', 'json', '--model', 'fake/fake-coder', ...(id ? ['--session', id] : []), prompt],
    env: () => ({ OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1' }),
    sessionOf: (stdout) => jsonLines(stdout).map((e) => (e.sessionID ?? (e.part as { sessionID?: string } | undefined)?.sessionID) as string | undefined).find(Boolean),
  },
  copilot: {
    wire: 'chat',
    initScope: '--project',
    // No login, no network: a BYOK provider on loopback (Chat Completions), every tool allowed.
    async configure() {},
    argv: (prompt, id) => ['-p', prompt, '--allow-all', '--output-format', 'json', ...(id ? [`--resume=${id}`] : [])],
    env: ({ model }) => ({
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_BASE_URL: `${model.url}/v1`,
      COPILOT_PROVIDER_API_KEY: 'fake',
      COPILOT_MODEL: 'gpt-4.1',
      COPILOT_ALLOW_ALL: 'true',
      COPILOT_AUTO_UPDATE: 'false',
    }),
    sessionOf: (stdout) => jsonLines(stdout).find((e) => e.type === 'result')?.sessionId as string | undefined,
  },
};

export interface CliAgentWorld {
  ws: string;
  store: string;
  home: string;
  model: FakeModel;
  snaps: Map<string, Tree>;
  ckpt(args: string[]): Promise<CliRun>;
  json(args: string[]): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Snapshot, then one prompt; fails unless the agent exited 0 after the whole script ran. */
  prompt(text: string): Promise<AgentRun>;
  /** One prompt of a new agent session started in another folder (another project of the same HOME and store). */
  promptIn(dir: string, text: string): Promise<AgentRun>;
  checkRestores(prompts: string[]): Promise<string[]>;
  /** The prompt's text as the agent hands it on (and ckpt records it). */
  asSent(prompt: string): string;
  hookFailures(): Promise<string[]>;
  close(): Promise<void>;
}

export async function makeCliAgentWorld(
  agent: CliAgent,
  options: {
    files: Record<string, string>;
    script: (ws: string) => Script;
    init?: string[];
    /** Instead of the driver's scope. */
    initScope?: '--project' | '--user';
    /** Changes the agent's command line. */
    argv?: (argv: string[]) => string[];
    /** The subfolder of the project the agent is started in (the project root by default). */
    startIn?: string;
    /** Runs in the project before `ckpt init` (e.g. `git init`). */
    setup?: (ws: string) => void;
  },
): Promise<CliAgentWorld> {
  const driver = DRIVERS[agent];
  const bin = await ensureAgent(agent);
  const base = await mkdtemp(join(tmpdir(), `ckpt-agents-${agent}-`));
  const ws = join(base, 'project');
  const store = join(base, 'store');
  const home = join(base, 'home');
  await mkdir(ws);
  await mkdir(home);
  for (const [path, content] of Object.entries(options.files)) {
    await mkdir(dirname(join(ws, path)), { recursive: true });
    await writeFile(join(ws, path), content, { mode: path.endsWith('.sh') ? 0o755 : 0o644 });
  }
  const model = await startFakeModel(driver.wire, options.script(ws));
  await driver.configure({ home, ws, model });
  const cliEnv = { HOME: home, CKPT_HOME: '', CKPT_STORE: '' };
  const ckpt = (args: string[]) => runCli(['--store', store, ...args], { cwd: ws, env: cliEnv });
  const json = async (args: string[]) => {
    const r = await ckpt([...args, '--json']);
    if (r.code !== 0) throw new Error(`ckpt ${args.join(' ')} exited ${r.code}: ${r.stderr || r.stdout}`);
    return r.json();
  };
  options.setup?.(ws);
  await json(['init', agent, options.initScope ?? driver.initScope, ...(options.init ?? [])]);
  const snaps = new Map<string, Tree>();
  const ignore = ['.git', ...(driver.ignore ?? [])];
  let sessionId: string | undefined;
  const runAgent = (prompt: string, elsewhere?: string) =>
    new Promise<AgentRun>((resolve, reject) => {
      // PWD too: opencode takes its project folder from it, not from the process's cwd.
      const cwd = elsewhere ?? join(ws, options.startIn ?? '');
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, PWD: cwd, NO_COLOR: '1', ...driver.env({ home, model }) };
      delete env.CKPT_HOME;
      delete env.CKPT_STORE;
      const argv = driver.argv(prompt, elsewhere === undefined ? sessionId : undefined);
      const child = spawn(bin, options.argv ? options.argv(argv) : argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      // opencode's first run installs its plugin dependencies: minutes on a busy machine.
      const timer = setTimeout(() => child.kill('SIGKILL'), 480_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? -1, stdout, stderr, ...(driver.sessionOf(stdout) ? { sessionId: driver.sessionOf(stdout)! } : {}) });
      });
    });
  return {
    ws,
    store,
    home,
    model,
    snaps,
    ckpt,
    json,
    async prompt(text) {
      snaps.set(text, await snapshotTree(ws, ignore));
      const r = await runAgent(text);
      if (r.code !== 0) throw new Error(`${agent} exited ${r.code} on ${JSON.stringify(text)}:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
      sessionId ??= r.sessionId;
      return r;
    },
    async promptIn(dir, text) {
      const r = await runAgent(text, dir);
      if (r.code !== 0) throw new Error(`${agent} exited ${r.code} on ${JSON.stringify(text)} in ${dir}:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
      return r;
    },
    asSent: (prompt) => driver.asSent?.(prompt) ?? prompt,
    async checkRestores(prompts) {
      const problems: string[] = [];
      const log = await json(['log']);
      for (const text of prompts) {
        const sent = driver.asSent?.(text) ?? text;
        const turns = (log.turns as { turn: number; text?: string }[]).filter((t) => t.text === sent);
        if (turns.length !== 1) {
          problems.push(`ckpt log has ${turns.length} turns for ${JSON.stringify(text)}: ${JSON.stringify(log.turns)}`);
          continue;
        }
        const where = `restore ${turns[0]!.turn} (prompt ${JSON.stringify(text)})`;
        const before = await snapshotTree(ws, ignore);
        const r = await ckpt(['restore', String(turns[0]!.turn), '--yes', '--json']);
        if (r.code !== 0) {
          problems.push(`${where}: exit ${r.code}: ${r.stderr.trim()}`);
          continue;
        }
        problems.push(...diffTrees(snaps.get(text)!, await snapshotTree(ws, ignore)).map((d) => `${where}: ${d}`));
        const undo = r.json().undo as string;
        const u = await ckpt(['restore', undo, '--yes', '--json']);
        if (u.code !== 0) problems.push(`${where}, undo ${undo}: exit ${u.code}: ${u.stderr.trim()}`);
        else problems.push(...diffTrees(before, await snapshotTree(ws, ignore)).map((d) => `${where}, undo ${undo}: ${d}`));
      }
      return problems;
    },
    async hookFailures() {
      return (await readFile(join(store, 'hooks.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
    },
    async close() {
      await model.close();
      // The hooks started the store's daemon on demand (ckpt hook --daemon): stop it with its store.
      if (process.env.CKPT_AGENTS_KEEP) await stopStoreDaemon(store);
      else await removeAgentWorld(base, store);
    },
  };
}

/**
 * A hand edit during a turn: `edit` runs once, when the fake model is first asked anything naming
 * `prompt` — after the agent's prompt hooks (the turn's look), before the tool call it answers with.
 */
export function editWhenAsked(w: CliAgentWorld, prompt: string, edit: () => void): void {
  const requests = w.model.requests;
  const push = requests.push.bind(requests);
  requests.push = (...items) => {
    if (JSON.stringify(items[0]?.body ?? '').includes(prompt)) {
      requests.push = push;
      edit();
    }
    return push(...items);
  };
}

/**
 * The failed-call check (DESIGN "opencode's failed tool calls are settled"): p1 edits config.toml,
 * p2's edit of it fails, then a hand edit of another file between the prompts and one of config.toml
 * during p3 (when the model is asked, before its tool call), whose edit of it succeeds. What the test
 * expects: nothing unsettled after each prompt, no restore difference, no hook failure.
 */
export async function failedCallRun(w: CliAgentWorld, [p1, p2, p3]: [string, string, string]): Promise<{ unsettled: string[][]; restores: string[]; hookFailures: string[] }> {
  const unsettled: string[][] = [];
  const status = async () => void unsettled.push((await w.json(['status'])).unsettled);
  await w.prompt(p1);
  await status();
  await w.prompt(p2);
  await status();
  await writeFile(join(w.ws, 'notes.txt'), 'by hand\n');
  editWhenAsked(w, p3, () => writeFileSync(join(w.ws, 'config.toml'), 'mode = "by hand"\n'));
  await w.prompt(p3);
  await status();
  return { unsettled, restores: await w.checkRestores([p3, p1, p2]), hookFailures: await w.hookFailures() };
}
