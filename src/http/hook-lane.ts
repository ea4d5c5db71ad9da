// HTTP hooks (DESIGN §10 "Daemon"): `POST /hooks/<agent>` takes the JSON an agent's `"type": "http"`
// hook posts — the same JSON a command hook reads on stdin — and records it exactly as
// `ckpt hook <agent>` does (src/hooks/run-hook.ts), but with the daemon's open store, cached session
// handles and watched scans. The answer follows Claude Code's HTTP hook contract: a 2xx with a JSON
// object is read like a command hook's stdout, anything else is a non-blocking error. So a hook that
// fails is still answered 200 (with a `systemMessage` naming the failure); only strict mode
// (`?strict=1` in the hook's URL, or CKPT_HOOK_STRICT=1 for the daemon) blocks, with the JSON
// equivalent of a command hook's exit 2.
//
// It is the daemon's hot path (every tool call, twice), so it is served straight from node:http in
// front of the hono app, behind the same guards (request-guard.ts): the framework's request and
// response objects cost a hook call about 0.2 ms (measured, DESIGN §10 "Daemon"). Other requests, and
// paths under /hooks/ that name no agent, go on to the app.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { agentSpec } from '../hooks/agents/index.js';
import { MAX_HOOK_INPUT_BYTES, readCapped } from '../hooks/hook-input.js';
import { runHook, type HookOutcome } from '../hooks/run-hook.js';
import { strictHooks } from '../hooks/client/hook-client.js';
import { checkHookCredential, CkptError, httpStatusOf, isCkptError, isHookCredential, toCkptError } from '../index.js';
import type { DaemonState } from './daemon-state.js';
import { unauthorized, type RequestGuard } from './request-guard.js';
import { parseInput, type Router } from './route.js';
import { workspaceField } from './schemas.js';
import { checkHookRoot } from './hook-roots.js';
import { join } from 'node:path';
import { repointHttpHooks } from '../hooks/install/repoint-http-hooks.js';
import { createStaleHooks, type StaleHooks } from './stale-hooks.js';

const HOOK_PREFIX = '/hooks/';
const HOOK_PATH = /^\/hooks\/([^/?]+)(?:\?|$)/;

export function isHookPath(path: string): boolean {
  return path.startsWith(HOOK_PREFIX);
}

const hookQuery = z.object({
  workspace: workspaceField.refine((p) => p.startsWith('/'), 'must be an absolute path').optional().describe('the workspace root (default: found from the event\'s cwd as the CLI finds it)'),
  strict: z.enum(['0', '1']).optional().describe('1: a failure blocks the tool call (as CKPT_HOOK_STRICT=1 does for command hooks)'),
});

/** The route's entry in the OpenAPI document (served by the lane, not by the app). */
export function addHookDocs(router: Router): void {
  router.docs.push({
    method: 'post',
    path: `${HOOK_PREFIX}:agent`,
    summary: `record one hook event of a coding agent, as \`ckpt hook <agent>\` (the agent's hook JSON as the body, up to ${MAX_HOOK_INPUT_BYTES} bytes; always 200 unless strict)`,
    query: hookQuery,
    body: z.record(z.string(), z.unknown()),
  });
}

export interface HookLaneOptions {
  state: DaemonState;
  guard: RequestGuard;
  /** Called for every error answered with a 5xx (logging). */
  onServerError?: (err: CkptError) => void;
  /** The store's hook key (daemon/hook-key): a hook credential made with it records into its workspace only. */
  hookKey?: string;
  /** Called after every hook request that was answered (the daemon's idle clock). */
  onHook?: () => void;
  /** The TCP port the daemon listens on (undefined on a unix socket): installed HTTP hooks are re-pointed at it. */
  port?: () => number | undefined;
  /** Called when an agent's HTTP hook (a hook credential, not the thin client) was answered: they post to this port. */
  onHttpHook?: () => void;
}

/** The once-per-prompt events at which the HTTP hooks in the project's local settings are checked. */
const REPOINT_EVENTS: ReadonlySet<string> = new Set(['SessionStart', 'UserPromptSubmit']);
/** Session starts of a new agent process (which reads its hook settings then); `clear` and `compact` come from a running one. */
const STARTS: ReadonlySet<string> = new Set(['startup', 'resume']);

/** The header in which the thin hook client (hook-client.ts) passes the agent's project-dir variables. */
export const HOOK_ENV_HEADER = 'x-ckpt-hook-env';
/** The agent's CKPT_DISABLE, for a daemon that does not see the agent's environment (run-hook.ts). */
export const DISABLE_HEADER = 'x-ckpt-disable';

/** A node:http request handler that serves `POST /hooks/<agent>` and returns false for anything else. */
export function createHookLane(options: HookLaneOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const stale = createStaleHooks();
  return (req, res) => {
    const m = req.method === 'POST' && req.url ? HOOK_PATH.exec(req.url) : null;
    if (!m) return false;
    void serve(options, stale, req, res, m[1]!).catch((err: unknown) => res.destroy(err as Error));
    return true;
  };
}

async function serve({ state, guard, onServerError, hookKey, onHook, onHttpHook, port }: HookLaneOptions, stale: StaleHooks, req: IncomingMessage, res: ServerResponse, agent: string): Promise<void> {
  let status = 200;
  let body: object;
  let closing = false;
  try {
    guard.checkHost(req.headers.host, req.socket.localAddress);
    // A bad hook URL is the installer's mistake, not the agent's: 400 (a non-blocking error for Claude Code).
    const query = parseQuery(req.url!);
    // The bearer token, or a hook credential of exactly the workspace named in the URL (which then
    // is the workspace, never located from the event). A browser's cookie must not be able to record.
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const scoped = bearer !== undefined && isHookCredential(bearer);
    if (scoped ? !(hookKey && query.workspace && checkHookCredential(hookKey, query.workspace, bearer)) : !guard.hasToken(req.headers.authorization)) throw unauthorized();
    const spec = agentSpec(decodeSegment(agent));
    const strict = query.strict === '1' || strictHooks(process.env);
    // The thin hook client (token holders only) passes the agent's project-dir variables, as a hook process has them.
    const agentEnv = scoped ? {} : hookEnv(req.headers[HOOK_ENV_HEADER], spec.projectDirEnv);
    // The thin hook client always sends that header (installed HTTP hooks never do).
    const fromClient = !scoped && req.headers[HOOK_ENV_HEADER] !== undefined;
    let refusedRoot: unknown;
    // A body over the cap is drained unread and answered as the hook command does (never blocking the agent).
    const input = await readCapped(req, MAX_HOOK_INPUT_BYTES);
    // A once-per-prompt command hook (the thin client, which passes the project folder): the HTTP
    // hooks of this project must post to this daemon's port, which may have changed since they
    // were installed (the daemon came back while another process held its port); an agent process
    // that still posts to the old one is stopped, before its prompt is recorded as a turn.
    const listening = port?.();
    const projectDir = spec.projectDirEnv.map((n) => agentEnv[n]).find((v) => v !== undefined);
    const settings = !scoped && listening !== undefined && spec.httpHooks && spec.settingsFiles.local && projectDir ? join(projectDir, spec.settingsFiles.local) : undefined;
    const head = settings ? promptEvent(input.data) : undefined;
    let staleFrom: readonly number[] | undefined;
    if (settings && head) {
      const moved = await repointHttpHooks(settings, spec.name, listening!).catch(() => undefined);
      if (moved) stale.repointed(projectDir!, moved.from);
      else if (head.event === 'SessionStart' && (head.source === undefined || STARTS.has(head.source))) stale.started(head.session);
      staleFrom = stale.staleFrom(projectDir!, head.session);
    }
    if (staleFrom && head!.event === 'UserPromptSubmit') {
      // Stopped before it is recorded: the prompt never reaches the model, so it makes no turn.
      body = staleAnswer({}, head!.event, spec.displayName, staleFrom, listening!, settings!);
    } else {
      const outcome = await runHook({
        spec,
        input,
        // Only ckpt's own switches: the daemon's environment is not the agent's (no CLAUDE_PROJECT_DIR).
        env: {
          ...agentEnv,
          ...(strict ? { CKPT_HOOK_STRICT: '1' } : {}),
          // CKPT_DISABLE in the agent's environment: the thin client sends it, an installed HTTP hook
          // interpolates it (Claude Code's allowedEnvVars; empty when unset).
          ...(typeof req.headers[DISABLE_HEADER] === 'string' ? { CKPT_DISABLE: req.headers[DISABLE_HEADER] } : {}),
          ...(process.env.CKPT_HOOK_LOCK_TIMEOUT_MS ? { CKPT_HOOK_LOCK_TIMEOUT_MS: process.env.CKPT_HOOK_LOCK_TIMEOUT_MS } : {}),
        },
        storeDir: state.store.dir,
        store: state.store,
        ...(query.workspace ? { workspace: query.workspace } : {}),
        locate: !scoped,
        openSession: async (root, link) => {
          // A user-scope hook (no workspace in its URL, no project folder from the agent): the event's cwd chose the root.
          if (!scoped && !query.workspace && Object.keys(agentEnv).length === 0) {
            await checkHookRoot(state, root).catch((err: unknown) => {
              if (fromClient && isCkptError(err, 'FORBIDDEN')) refusedRoot = err;
              throw err;
            });
          }
          return state.agentSession(root, link);
        },
        scan: (session, tool) => state.scan(session, { tool }),
        // The thin client (the agent's own hook process: it records in-process when no daemon runs)
        // records a folder the daemon may not take from an event's cwd in its own process, as it does
        // then: refused 403, not answered "not recorded" (Codex's user-scope hooks name no project folder).
        passOn: (err) => err === refusedRoot,
      });
      body = hookAnswer(outcome);
      if (scoped) onHttpHook?.();
      if (staleFrom) body = staleAnswer(body, head!.event, spec.displayName, staleFrom, listening!, settings!);
    }
  } catch (err) {
    const e = toCkptError(err);
    status = httpStatusOf(e);
    if (status >= 500) onServerError?.(e);
    body = { error: e.toJSON() };
    // Without the credential the connection ends with the answer (a body dripped in a byte at a time
    // held it for Node's 5-minute request timeout: a probe); other refusals drain the body, so the
    // agent's connection stays usable.
    if (status === 401 || status === 403) closing = true;
    else req.resume();
  }
  onHook?.();
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...(closing ? { connection: 'close' } : {}) });
  res.end(text);
  if (closing) res.once('finish', () => req.socket.destroy());
}

/** The agent's project-dir variables from the thin client's header (JSON, URI-encoded); only the spec's names, absolute paths. */
function hookEnv(header: string | string[] | undefined, names: readonly string[]): Record<string, string> {
  if (typeof header !== 'string' || header === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(decodeURIComponent(header));
  } catch {
    throw new CkptError('INVALID_ARGUMENT', `the ${HOOK_ENV_HEADER} header is not URI-encoded JSON`, {});
  }
  const env: Record<string, string> = {};
  if (typeof value !== 'object' || value === null) return env;
  for (const name of names) {
    const v = (value as Record<string, unknown>)[name];
    if (typeof v === 'string' && v.startsWith('/')) env[name] = v;
  }
  return env;
}

type HookQuery = z.infer<typeof hookQuery>;
/** Parsed queries by their raw text: an installed hook posts to the same URL on every tool call. */
const parsedQueries = new Map<string, HookQuery>();
const MAX_PARSED_QUERIES = 64;

function parseQuery(url: string): HookQuery {
  const at = url.indexOf('?');
  const raw = at < 0 ? '' : url.slice(at + 1);
  let query = parsedQueries.get(raw);
  if (query === undefined) {
    query = parseInput(hookQuery, Object.fromEntries(new URLSearchParams(raw)), 'query');
    if (parsedQueries.size >= MAX_PARSED_QUERIES) parsedQueries.clear();
    parsedQueries.set(raw, query);
  }
  return query;
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new CkptError('INVALID_ARGUMENT', `invalid agent name in the hook URL: ${JSON.stringify(s)}`, { agent: s });
  }
}

/** Bodies up to this size are read for their event before the hook runs (a prompt's hook is small; tool hooks can be megabytes). */
const PEEK_MAX_BYTES = 256 * 1024;

/** A once-per-prompt event's name, agent session id and source (Claude Code's field names: the agents with HTTP hooks). */
function promptEvent(data: Buffer): { event: string; session: string; source?: string } | undefined {
  // A tool call's hook (every one, in a command-hook install) names neither event: no second parse of it.
  if (data.length > PEEK_MAX_BYTES || !(data.includes('"UserPromptSubmit"') || data.includes('"SessionStart"'))) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(data.toString('utf8'));
  } catch {
    return undefined; // the hook itself reports it
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const { hook_event_name: event, session_id: session, source } = v as Record<string, unknown>;
  if (typeof event !== 'string' || !REPOINT_EVENTS.has(event) || typeof session !== 'string' || session === '') return undefined;
  return { event, session, ...(typeof source === 'string' ? { source } : {}) };
}

/**
 * The answer to an agent process whose HTTP hooks post to another port: its prompt is stopped (a
 * `UserPromptSubmit` block: nothing reaches the model, so no tool call is posted there); a session
 * start, which cannot be stopped, says so.
 */
function staleAnswer(body: object, event: string, agent: string, from: readonly number[], port: number, file: string): object {
  const text = `ckpt: this ${agent} process still sends its tool calls' HTTP hooks to port ${from.join(', ')}, which ckpt's daemon does not hold (it listens on port ${port}; ${file} now names it). Whatever listens on port ${from.join(', ')} would receive every tool call's input and could answer for ckpt. Restart ${agent} to load the re-pointed hooks; until then ckpt stops each prompt.`;
  if (event === 'UserPromptSubmit') return { decision: 'block', reason: text, systemMessage: text };
  const said = (body as { systemMessage?: unknown }).systemMessage;
  return { ...body, systemMessage: typeof said === 'string' && said ? `${said}\n${text}` : text };
}

/** The answer to a hook outcome: its stdout JSON (`{}` when it had nothing to say), or the block of strict mode. */
function hookAnswer(outcome: HookOutcome): object {
  if (outcome.exitCode === 0) return outcome.stdout ? (JSON.parse(outcome.stdout) as object) : {};
  const reason = outcome.stderr.trim();
  return {
    decision: 'block',
    reason,
    systemMessage: reason,
    ...(outcome.event === 'PreToolUse' ? { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } } : {}),
  };
}
