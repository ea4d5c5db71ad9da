// HTTP hooks (DESIGN §10 "Daemon"): `POST /hooks/<agent>` takes the JSON an agent's `"type": "http"`
// hook posts — the same JSON a command hook reads on stdin — and records it exactly as
// `ckpt hook <agent>` does (src/hooks/run-hook.ts), but with the daemon's open store, cached session
// handles and watched scans. The answer follows Claude Code's HTTP hook contract: a 2xx with a JSON
// object is read like a command hook's stdout, anything else is a non-blocking error. So a hook that
// fails is still answered 200 (with a `systemMessage` naming the failure); only strict mode
// (`?strict=1` in the hook's URL, or CKPT_HOOK_STRICT=1 for the daemon) blocks, with the JSON
// equivalent of a command hook's exit 2.
import type { HttpBindings } from '@hono/node-server';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { agentSpec } from '../hooks/agents/index.js';
import { MAX_HOOK_INPUT_BYTES, readCapped } from '../hooks/hook-input.js';
import { runHook, type HookOutcome } from '../hooks/run-hook.js';
import type { DaemonState } from './daemon-state.js';
import { parseInput, type Router } from './route.js';
import { workspaceField } from './schemas.js';

const HOOK_PREFIX = '/hooks/';

export function isHookPath(path: string): boolean {
  return path.startsWith(HOOK_PREFIX);
}

const hookQuery = z.object({
  workspace: workspaceField.refine((p) => p.startsWith('/'), 'must be an absolute path').optional().describe('the workspace root (default: found from the event\'s cwd as the CLI finds it)'),
  strict: z.enum(['0', '1']).optional().describe('1: a failure blocks the tool call (as CKPT_HOOK_STRICT=1 does for command hooks)'),
});

export function addHookRoutes(app: Hono, router: Router, state: DaemonState): void {
  const path = `${HOOK_PREFIX}:agent`;
  router.docs.push({
    method: 'post',
    path,
    summary: `record one hook event of a coding agent, as \`ckpt hook <agent>\` (the agent's hook JSON as the body, up to ${MAX_HOOK_INPUT_BYTES} bytes; always 200 unless strict)`,
    query: hookQuery,
    body: z.record(z.string(), z.unknown()),
  });
  app.post(path, async (c) => {
    const spec = agentSpec(c.req.param('agent'));
    // A bad hook URL is the installer's mistake, not the agent's: 400 (a non-blocking error for Claude Code).
    const query = parseInput(hookQuery, c.req.query(), 'query');
    const strict = query.strict === '1' || /^(1|true|yes|on)$/i.test(process.env.CKPT_HOOK_STRICT ?? '');
    // Straight from Node's request when served by @hono/node-server: building the web Request's body
    // stream costs more than the rest of a passive hook (measured, DESIGN §10 "Daemon").
    const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming;
    const body = incoming && !incoming.readableDidRead ? incoming : (c.req.raw.body as AsyncIterable<Uint8Array> | null);
    const input = body ? await readCapped(body, MAX_HOOK_INPUT_BYTES) : { data: Buffer.alloc(0), tooLarge: false, bytes: 0 };
    const outcome = await runHook({
      spec,
      input,
      // Only ckpt's own switches: the daemon's environment is not the agent's (no CLAUDE_PROJECT_DIR).
      env: {
        ...(strict ? { CKPT_HOOK_STRICT: '1' } : {}),
        ...(process.env.CKPT_HOOK_LOCK_TIMEOUT_MS ? { CKPT_HOOK_LOCK_TIMEOUT_MS: process.env.CKPT_HOOK_LOCK_TIMEOUT_MS } : {}),
      },
      storeDir: state.store.dir,
      store: state.store,
      ...(query.workspace ? { workspace: query.workspace } : {}),
      locate: true,
      openSession: (root, link) => state.agentSession(root, link),
      scan: (session, tool) => state.scan(session, { tool }),
    });
    return hookAnswer(c, outcome);
  });
}

/** The HTTP answer of a hook outcome: its stdout JSON (`{}` when it had nothing to say), or the block of strict mode. */
function hookAnswer(c: Context, outcome: HookOutcome): Response {
  if (outcome.exitCode === 0) return c.json(outcome.stdout ? (JSON.parse(outcome.stdout) as object) : {});
  const reason = outcome.stderr.trim();
  return c.json({
    decision: 'block',
    reason,
    systemMessage: reason,
    ...(outcome.event === 'PreToolUse' ? { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } } : {}),
  });
}
