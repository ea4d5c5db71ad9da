// Installs a real agent CLI from the npm registry, pinned, into a cache folder outside the repo's
// node_modules: `$CKPT_AGENTS_CACHE` (default `~/.cache/ckpt-agents`) / `<pkg with / as +>@<version>`.
// Idempotent and safe to run from several processes at once: a folder that holds the ready marker is
// used as is; otherwise npm installs into a fresh temp folder beside it, the binary is checked to run
// (`--version`), the marker is written, and the folder is renamed into place (one rename wins; a loser
// drops its copy). Needs only the npm registry. Install scripts are not run: the native binary is taken
// straight from the platform package npm installs as an optional dependency.
//
// Other agents join by adding an entry to AGENTS (package, version, where the binary sits). Codex CLI,
// Gemini CLI, opencode and Copilot CLI (issue 30) are driven by test/agents/harness/cli-agents.ts.
// Command line (scripts/test-agents.sh): `tsx test/agents/harness/install-agent.ts [agent…]` prints
// `<agent> <binary>` per agent.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface AgentPackage {
  /** npm package name. */
  pkg: string;
  /** Exact version (the suite is written against it). */
  version: string;
  /** The runnable binary, relative to the install folder. */
  bin: () => string;
}

const platform = `${process.platform}-${process.arch}`;

export const AGENTS = {
  claude: {
    pkg: '@anthropic-ai/claude-code',
    version: '2.1.328',
    // The native binary of this platform (an optional dependency); the wrapper's bin/claude.exe is only
    // a copy of it made by an install script.
    bin: () => `node_modules/@anthropic-ai/claude-code-${platform}/claude`,
  },
  codex: {
    pkg: '@openai/codex',
    version: '0.169.0',
    // The musl native binary of the platform package (the package's bin is a node launcher for it).
    bin: () => `node_modules/@openai/codex-${platform}/vendor/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-musl/bin/codex`,
  },
  gemini: {
    pkg: '@google/gemini-cli',
    version: '0.61.0',
    // A node bundle (it runs with the node running the tests).
    bin: () => 'node_modules/@google/gemini-cli/bundle/gemini.js',
  },
  opencode: {
    pkg: 'opencode-ai',
    version: '1.18.33',
    bin: () => `node_modules/opencode-${platform}/bin/opencode`,
  },
  copilot: {
    pkg: '@github/copilot',
    version: '1.0.102',
    bin: () => `node_modules/@github/copilot-${platform}/copilot`,
  },
} satisfies Record<string, AgentPackage>;

export type AgentName = keyof typeof AGENTS;

const MARKER = '.ckpt-agent-ready';

export function agentsCacheRoot(): string {
  return process.env.CKPT_AGENTS_CACHE || join(homedir(), '.cache', 'ckpt-agents');
}

export function installDir(a: AgentPackage): string {
  return join(agentsCacheRoot(), `${a.pkg.replace('/', '+')}@${a.version}`);
}

/** The binary of the agent, installing it first when the cache does not hold it yet. */
export async function ensureAgent(name: AgentName, log: (line: string) => void = () => {}): Promise<string> {
  const a: AgentPackage = AGENTS[name];
  const dir = installDir(a);
  if (existsSync(join(dir, MARKER))) return join(dir, a.bin());
  await mkdir(agentsCacheRoot(), { recursive: true });
  const tmp = await mkdtemp(`${dir}.tmp-`);
  try {
    log(`installing ${a.pkg}@${a.version} into ${dir}`);
    const t0 = Date.now();
    await writeFile(join(tmp, 'package.json'), JSON.stringify({ name: 'ckpt-agent-cache', private: true }));
    await run('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts', '--include=optional', `${a.pkg}@${a.version}`], {
      cwd: tmp,
      maxBuffer: 16 << 20,
      env: { ...process.env, npm_config_loglevel: 'error' },
    });
    const bin = join(tmp, a.bin());
    const { stdout } = await run(bin, ['--version'], { env: { ...process.env, DISABLE_AUTOUPDATER: '1' } });
    if (!stdout.includes(a.version)) throw new Error(`${bin} --version printed ${JSON.stringify(stdout)}, not ${a.version}`);
    await writeFile(join(tmp, MARKER), `${a.pkg}@${a.version}\n`);
    // A folder without the marker is a leftover of something else (never of this code): replace it.
    if (existsSync(dir) && !existsSync(join(dir, MARKER))) await rm(dir, { recursive: true, force: true });
    try {
      await rename(tmp, dir);
    } catch (e) {
      // Another process installed it meanwhile (the target exists and is not empty): use theirs.
      if (!existsSync(join(dir, MARKER))) throw e;
    }
    log(`installed ${a.pkg}@${a.version} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return join(dir, a.bin());
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const names = (process.argv.length > 2 ? process.argv.slice(2) : Object.keys(AGENTS)) as AgentName[];
  for (const n of names) {
    if (!(n in AGENTS)) throw new Error(`unknown agent ${n}; known: ${Object.keys(AGENTS).join(', ')}`);
    process.stdout.write(`${n} ${await ensureAgent(n, (l) => process.stderr.write(`${l}\n`))}\n`);
  }
}
