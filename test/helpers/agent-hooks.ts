// Runs the hook commands an agent's settings file configures, exactly as the agent would: each
// command through `sh -c`, the event JSON on stdin, the project as cwd, the agent's project-dir
// variable set, and without CKPT_HOME (the installed command must find its store by itself).
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { matcherMatches } from '../fixtures/claude-events.js';

export interface HookRun {
  command: string;
  code: number;
  stdout: string;
  stderr: string;
}

/** `dropDac`: as root, run without the capabilities that write or read any file (permissions then apply). */
export function runShell(command: string, options: { cwd: string; env: NodeJS.ProcessEnv; input: string | Buffer; dropDac?: boolean }): Promise<Omit<HookRun, 'command'>> {
  return new Promise((resolve, reject) => {
    const argv = options.dropDac
      ? (['setpriv', ['--inh-caps=-all', '--bounding-set=-dac_override,-dac_read_search', 'sh', '-c', command]] as const)
      : (['sh', ['-c', command]] as const);
    const child = spawn(argv[0], [...argv[1]], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.on('error', () => {}); // a hook may exit before reading everything
    child.stdin.end(options.input);
  });
}

/**
 * Posts an event to an HTTP hook as Claude Code does: the event JSON as the body (Content-Type
 * application/json), header values with `$VAR` / `${VAR}` filled from the environment only for the
 * names in allowedEnvVars (any other reference becomes an empty string). The answer's status is `code`,
 * its body `stdout`.
 */
export async function postHttpHook(hook: HttpHook, payload: string | Buffer, env: NodeJS.ProcessEnv): Promise<Omit<HookRun, 'command'>> {
  const allowed = new Set(hook.allowedEnvVars ?? []);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(hook.headers ?? {})) {
    headers[name] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, a: string | undefined, b: string | undefined) => {
      const v = (a ?? b)!;
      return allowed.has(v) ? (env[v] ?? '') : '';
    });
  }
  const res = await fetch(hook.url, { method: 'POST', headers, body: typeof payload === 'string' ? payload : new Uint8Array(payload) });
  return { code: res.status, stdout: await res.text(), stderr: '' };
}

export interface HttpHook {
  type: 'http';
  url: string;
  headers?: Record<string, string>;
  allowedEnvVars?: string[];
}

export interface InstalledHooks {
  settings: { hooks: Record<string, { matcher?: string; hooks: ({ type: 'command'; command: string } | HttpHook)[] }[]> };
  /** Fires one event through every configured command that matches it; returns each run. */
  fire(event: Record<string, unknown> | string | Buffer, options?: { env?: NodeJS.ProcessEnv; eventName?: string; tool?: string; dropDac?: boolean }): Promise<HookRun[]>;
}

export async function loadInstalledHooks(settingsFile: string, project: string, projectEnv: string, eventField = 'hook_event_name', toolField = 'tool_name'): Promise<InstalledHooks> {
  const settings = JSON.parse(await readFile(settingsFile, 'utf8')) as InstalledHooks['settings'];
  const env = { ...process.env, [projectEnv]: project };
  delete env.CKPT_HOME;
  return {
    settings,
    async fire(event, options = {}) {
      const payload = typeof event === 'string' || Buffer.isBuffer(event) ? event : JSON.stringify(event);
      const name = options.eventName ?? (typeof event === 'object' && !Buffer.isBuffer(event) ? String(event[eventField]) : '');
      const tool = options.tool ?? (typeof event === 'object' && !Buffer.isBuffer(event) ? (event[toolField] as string | undefined) : undefined);
      const runs: HookRun[] = [];
      for (const group of settings.hooks[name] ?? []) {
        if (!matcherMatches(group.matcher, tool)) continue;
        for (const hook of group.hooks) {
          if (hook.type === 'http') {
            runs.push({ command: hook.url, ...(await postHttpHook(hook, payload, { ...env, ...options.env })) });
            continue;
          }
          if (hook.type !== 'command') continue;
          const r = await runShell(hook.command, { cwd: project, env: { ...env, ...options.env }, input: payload, dropDac: options.dropDac });
          runs.push({ command: hook.command, ...r });
        }
      }
      return runs;
    },
  };
}
