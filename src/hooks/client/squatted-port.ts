// The thin hook client's check, when no daemon of the store runs, of the port the agent's installed
// HTTP hooks post to (DESIGN §10 "Previews, hostile caches and probes (2026-12-05, third session)"):
// an agent process keeps the hooks it read at its start, so after a daemon crash or a reboot every
// tool call goes to whatever listens on that port now — another local user's process receives each
// tool input and the hook credential, and its answer is followed. Something listening there while
// ckpt's daemon is down is not ckpt's (unless the daemon is starting: its claim follows its listen).
// Node built-ins only, as the client.
import { connect } from 'node:net';
import { join } from 'node:path';
import { readSmallText } from '../../small-text.js';

/** Agents whose installed HTTP hooks name the daemon's port: the project-dir variable and the settings file (claude.ts). */
export const HTTP_HOOK_SETTINGS: Readonly<Record<string, { env: string; file: string }>> = {
  claude: { env: 'CLAUDE_PROJECT_DIR', file: join('.claude', 'settings.local.json') },
};

const PROBE_TIMEOUT_MS = 300;
/** How long a daemon that listens but has not written its claim yet is given. */
const STARTING_MS = 500;

/** The text of the project's local settings file that holds `agent`'s HTTP hooks; undefined when there is none. */
function hookSettingsText(agent: string, env: NodeJS.ProcessEnv): string | undefined {
  const where = HTTP_HOOK_SETTINGS[agent];
  const dir = where && env[where.env];
  if (!where || !dir) return undefined;
  // Only a regular file (small-text.ts): a project's settings file planted as a FIFO must not block the hook.
  return readSmallText(join(dir, where.file), { follow: true });
}

/** The port `agent`'s ckpt HTTP hooks in the project's local settings post to, when it has such hooks. */
export function httpHookPort(agent: string, env: NodeJS.ProcessEnv): number | undefined {
  const text = hookSettingsText(agent, env);
  const m = text === undefined ? null : new RegExp(`"http://(?:127\\.0\\.0\\.1|localhost|\\[::1\\]):(\\d+)/hooks/${agent}[?"]`).exec(text);
  const port = m ? Number(m[1]) : NaN;
  return Number.isInteger(port) && port > 0 && port <= 65535 ? port : undefined;
}

/**
 * Whether the prompt's own event (Claude Code's UserPromptSubmit) is one of ckpt's HTTP hooks in the
 * project's local settings (`init claude --http`): then nothing records a prompt sent while the daemon
 * does not listen yet. (The default install's prompt hook is a command hook that records in-process.)
 */
export function promptHookIsHttp(agent: string, env: NodeJS.ProcessEnv): boolean {
  const text = agent === 'claude' ? hookSettingsText(agent, env) : undefined;
  if (text === undefined) return false;
  try {
    const settings = JSON.parse(text) as { hooks?: { UserPromptSubmit?: { hooks?: { type?: string; url?: string }[] }[] } };
    return (settings.hooks?.UserPromptSubmit ?? []).some((g) => (g.hooks ?? []).some((h) => h.type === 'http' && typeof h.url === 'string' && h.url.includes(`/hooks/${agent}`)));
  } catch {
    return false;
  }
}

/** The port of `agent`'s ckpt HTTP hooks in the project's local settings, when something that is not the store's daemon listens there. */
export async function squattedHookPort(agent: string, env: NodeJS.ProcessEnv, daemonPort: () => number | undefined): Promise<number | undefined> {
  const port = httpHookPort(agent, env);
  if (port === undefined || daemonPort() === port || !(await answers(port))) return undefined;
  await new Promise((r) => setTimeout(r, STARTING_MS));
  return daemonPort() === port ? undefined : port;
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** What the client says (a prompt's hook: and stops it). */
export function squattedText(agent: string, port: number): string {
  return `ckpt: its daemon is not running, yet something listens on port ${port}, where this ${agent === 'claude' ? 'Claude Code' : agent} process sends its tool calls' HTTP hooks: it would receive every tool call's input and could answer for ckpt. ckpt is starting its daemon (on another port if that one stays taken); restart the agent once it runs. Until then ckpt stops each prompt.`;
}
