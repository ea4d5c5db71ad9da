// Drives the real Claude Code CLI headless against a fake model (fake-anthropic-server.ts): one
// `claude -p PROMPT --output-format stream-json --verbose` process per prompt, later prompts of the same
// conversation with `--resume <session id>` (the id comes from the stream's init/result line). The
// environment is built from scratch: a scratch HOME (Claude Code keeps its transcripts and settings
// there), the fake's url, a dummy key, no auto-updater, telemetry or other network; as root,
// `--dangerously-skip-permissions` needs IS_SANDBOX=1. `debugDir` (or $CKPT_AGENTS_DEBUG) keeps a
// `--debug-file` per run: it shows each hook's command, status and time.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export interface ClaudeOptions {
  bin: string;
  cwd: string;
  home: string;
  /** ANTHROPIC_BASE_URL: the fake server. */
  baseUrl: string;
  /** Extra environment (e.g. CKPT_DAEMON_TOKEN for HTTP hooks). */
  env?: Record<string, string>;
  debugDir?: string;
  timeoutMs?: number;
}

export interface ClaudeRun {
  code: number;
  sessionId: string | undefined;
  /** The stream-json lines. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  events: any[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  result: any;
  stderr: string;
  ms: number;
  debugFile?: string;
}

export class ClaudeDriver {
  /** The conversation later prompts resume (set by every run; `/clear` moves it to a new id). */
  sessionId: string | undefined;
  private runs = 0;

  constructor(readonly options: ClaudeOptions) {}

  env(): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: this.options.home,
      TMPDIR: process.env.TMPDIR,
      LANG: 'C.UTF-8',
      ANTHROPIC_BASE_URL: this.options.baseUrl,
      ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-tests',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      ...(process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}),
      ...this.options.env,
    };
  }

  /** One prompt: resumes the current conversation unless `fresh`. */
  async prompt(text: string, opts: { fresh?: boolean } = {}): Promise<ClaudeRun> {
    const args = ['-p', text, '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'];
    if (this.sessionId && !opts.fresh) args.push('--resume', this.sessionId);
    const debugDir = this.options.debugDir ?? process.env.CKPT_AGENTS_DEBUG;
    let debugFile: string | undefined;
    if (debugDir) {
      mkdirSync(debugDir, { recursive: true });
      debugFile = join(debugDir, `claude-${process.pid}-${Date.now()}-${++this.runs}.log`);
      args.push('--debug-file', debugFile);
    }
    const t0 = Date.now();
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(this.options.bin, args, { cwd: this.options.cwd, env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), this.options.timeoutMs ?? 120_000);
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('error', reject);
      child.on('close', (c, signal) => {
        clearTimeout(timer);
        resolve({ code: c ?? (signal ? 128 : -1), stdout: out, stderr: err + (signal ? `\n[killed by ${signal}]` : '') });
      });
    });
    const events = stdout
      .split('\n')
      .filter((l) => l.trim().startsWith('{'))
      .map((l) => {
        try {
          return JSON.parse(l);
        } catch {
          return { unparsed: l };
        }
      });
    const result = [...events].reverse().find((e) => e.type === 'result');
    const sessionId = (result?.session_id as string | undefined) ?? (events.find((e) => e.session_id)?.session_id as string | undefined);
    if (sessionId) this.sessionId = sessionId;
    return { code, sessionId, events, result, stderr, ms: Date.now() - t0, ...(debugFile ? { debugFile } : {}) };
  }
}

/** Claude Code's own words when a run did not end well: for assertion messages. */
export function describeRun(r: ClaudeRun): string {
  return `exit ${r.code} in ${r.ms} ms; result ${JSON.stringify(r.result)?.slice(0, 600)}; stderr ${r.stderr.slice(0, 600)}${r.debugFile ? `; debug ${r.debugFile}` : ''}`;
}
