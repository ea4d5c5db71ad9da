// The MCP tools that change the workspace, two-step (DESIGN §10 "MCP"): restore_preview plans a
// restore, undo or rewind without changing anything and returns the plan with a confirmation token;
// restore / undo / rewind run only with that token, and only if neither the session nor any file
// the plan concerns moved since the preview (TOKEN_STALE otherwise: preview again). Drift is refused
// exactly as in the CLI (DRIFT unless force, and force must have been previewed).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { CkptError, hookRecordedBy, pathText, type CheckPlan, type PlanSnapshot, type RestoreResult, type RewindResult, type Session } from '../index.js';
import type { ConfirmOperation, ConfirmRequest } from './confirm-token.js';
import type { McpContext } from './context.js';
import { ok, registerTool } from './results.js';
import { DESTRUCTIVE, PATH, PATHS, READ_ONLY, RESTORE_RESULT, SESSION_ID, SKIPPED, TAG, orNull } from './schemas.js';

const TOKEN = z.string().min(1).max(4096).describe('The confirmation token restore_preview returned for exactly this request');
const FORCE = z.boolean().optional().describe('Overwrite paths changed since ckpt last recorded them (drift); must match the preview');
const USER_MESSAGE = z
  .object({ turn: z.number(), text: orNull(z.string(), 'The message as the user wrote it'), id: z.string().optional() })
  .nullable()
  .describe("The user's message of the turn rewound to (to put back in the input box)");
const WATERMARK = z.object({ turn: z.number(), messageCount: orNull(z.number(), 'Messages in the conversation at that turn') }).describe('Where to truncate the conversation: the turn at the tag and the message count it recorded');

export function registerRestoreTools(server: McpServer, ctx: McpContext): void {
  registerTool(
    server,
    'restore_preview',
    {
      title: 'Preview a restore, undo or rewind',
      description:
        "Step 1 of 2 for anything that changes files. Plans a restore of the workspace (or of `paths`) to a tag, an undo of one `path`, or a rewind (restore + move the conversation back), WITHOUT changing anything, and returns the plan (paths to write or delete, drift, what is left alone) and a confirmation token. Show the plan to the user and ask before calling restore / undo / rewind with the token. The token is bound to this exact request and to the present state: if the session or any file the plan concerns changes, it is refused and the preview must be redone.",
      inputSchema: z.strictObject({
        session: SESSION_ID.optional(),
        operation: z.enum(['restore', 'undo', 'rewind']).optional().describe('What to preview (default restore)'),
        tag: TAG,
        paths: PATHS.min(1).optional().describe('restore only: restrict to these paths or folders'),
        path: PATH.optional().describe('undo only: the one path to put back'),
        fork: z.boolean().optional().describe('rewind only: leave this session as it is and continue in a new fork at the tag'),
        force: FORCE,
      }),
      outputSchema: z.object({
        operation: z.enum(['restore', 'undo', 'rewind']),
        session: z.string(),
        to: z.string(),
        paths: z.array(z.string()),
        fork: z.boolean(),
        force: z.boolean(),
        lastSeq: z.number().describe('The session event the preview was made at'),
        plan: z.array(z.object({ path: z.string(), action: z.enum(['write', 'symlink', 'mkdir', 'delete']) })),
        skipped: SKIPPED,
        drift: z.array(z.string()),
        unchanged: z.number(),
        wouldRefuse: z
          .object({ code: z.enum(['DRIFT', 'BLOB_NOT_FOUND']), paths: z.array(z.string()) })
          .optional()
          .describe('The run would fail with this error: DRIFT unless previewed with force; BLOB_NOT_FOUND when the store lacks content the plan writes'),
        watermark: WATERMARK.optional(),
        userMessage: USER_MESSAGE.optional(),
        hidden: z.number().optional().describe('Conversation entries the rewind would hide (never deleted)'),
        token: z.string(),
        expiresAt: z.string(),
      }),
      annotations: READ_ONLY,
    },
    async (args) => {
      const op: ConfirmOperation = args.operation ?? 'restore';
      const paths = pathsFor(op, args);
      const session = await ctx.session(args.session);
      const request = requestFor(ctx, session, op, args.tag, paths, args.force, args.fork);
      let snapshot: PlanSnapshot | undefined;
      const checkPlan = (s: PlanSnapshot) => void (snapshot = s);
      const result: RestoreResult & Partial<Pick<RewindResult, 'watermark' | 'userMessage' | 'hidden'>> =
        op === 'rewind'
          ? await session.rewind(args.tag, { fork: request.fork, force: request.force, dryRun: true, checkPlan })
          : await session.restore(args.tag, { paths: paths.length ? paths : undefined, force: request.force, dryRun: true, checkPlan });
      if (!snapshot) throw new CkptError('INTERNAL', 'the restore preview made no plan');
      const { token, expiresAt } = ctx.confirmer.issue(request, snapshot);
      const plan = snapshot.plan.entries.map((e) => ({ path: e.path, action: e.action }));
      const { wouldRefuse } = result;
      const structured = {
        operation: op,
        session: session.id,
        to: args.tag,
        paths,
        fork: request.fork,
        force: request.force,
        lastSeq: snapshot.lastSeq,
        plan,
        skipped: skippedOf(result),
        drift: result.drift,
        unchanged: result.unchanged.length,
        ...(wouldRefuse ? { wouldRefuse } : {}),
        ...(result.watermark ? { watermark: result.watermark } : {}),
        ...(result.userMessage !== undefined ? { userMessage: publicMessage(result.userMessage) } : {}),
        ...(result.hidden ? { hidden: result.hidden.length } : {}),
        token,
        expiresAt,
      };
      return ok(structured, previewText(structured));
    },
  );

  registerTool(
    server,
    'restore',
    {
      title: 'Restore (step 2 of 2)',
      description:
        "Puts the workspace (or `paths`) back to how it was at a tag. Requires the token from restore_preview for exactly this request, after the user approved the plan; refused (TOKEN_STALE, nothing changed) if the session or the files moved since the preview, and refused with DRIFT if it would overwrite changes ckpt has not recorded, unless previewed and run with force. Before changing anything it records the present content, and returns the `undo` tag that reverses it.",
      inputSchema: z.strictObject({ session: SESSION_ID.optional(), tag: TAG, paths: PATHS.min(1).optional(), force: FORCE, token: TOKEN }),
      outputSchema: z.object(RESTORE_RESULT),
      annotations: DESTRUCTIVE,
    },
    async (args) => {
      const session = await ctx.session(args.session);
      const paths = args.paths ?? [];
      const request = requestFor(ctx, session, 'restore', args.tag, paths, args.force, false);
      const { result: r, by } = await confirmed(server, ctx, args.token, request, (o) => session.restore(args.tag, { paths: paths.length ? paths : undefined, force: args.force, ...o }));
      return ok(publicResult(session.id, r), [resultText(r), ...confirmedText(by)].join('\n'));
    },
  );

  registerTool(
    server,
    'undo',
    {
      title: 'Undo one path (step 2 of 2)',
      description:
        "Puts one file (or everything under one folder) back to how it was at a tag. Requires the token from restore_preview with operation 'undo' for exactly this tag and path, after the user approved it; refused (TOKEN_STALE) if anything moved since, and with DRIFT as restore is. Returns the `undo` tag that reverses it.",
      inputSchema: z.strictObject({ session: SESSION_ID.optional(), tag: TAG, path: PATH, force: FORCE, token: TOKEN }),
      outputSchema: z.object(RESTORE_RESULT),
      annotations: DESTRUCTIVE,
    },
    async (args) => {
      const session = await ctx.session(args.session);
      const request = requestFor(ctx, session, 'undo', args.tag, [args.path], args.force, false);
      const { result: r, by } = await confirmed(server, ctx, args.token, request, (o) => session.undo(args.tag, args.path, { force: args.force, ...o }));
      return ok(publicResult(session.id, r), [resultText(r), ...confirmedText(by)].join('\n'));
    },
  );

  registerTool(
    server,
    'rewind',
    {
      title: 'Rewind (step 2 of 2)',
      description:
        "Restores the workspace to a tag AND moves the conversation back to it: later events are marked superseded (never deleted) and the result's watermark (turn, message count) tells where to truncate the transcript. With fork=true this session is left as it is and the restore is recorded in a new fork at the tag. Requires the token from restore_preview with operation 'rewind' for exactly this request, after the user approved it; refused (TOKEN_STALE) if anything moved since, and with DRIFT as restore is.",
      inputSchema: z.strictObject({ session: SESSION_ID.optional(), tag: TAG, fork: z.boolean().optional(), force: FORCE, token: TOKEN }),
      outputSchema: z.object({ ...RESTORE_RESULT, watermark: WATERMARK, forked: z.boolean(), userMessage: USER_MESSAGE, hidden: z.number().describe('Conversation entries now hidden (never deleted)') }),
      annotations: DESTRUCTIVE,
    },
    async (args) => {
      const session = await ctx.session(args.session);
      const request = requestFor(ctx, session, 'rewind', args.tag, [], args.force, args.fork);
      const { result: r, by } = await confirmed(server, ctx, args.token, request, (o) => session.rewind(args.tag, { fork: args.fork, force: args.force, ...o }));
      const lines = [resultText(r), ...confirmedText(by), `conversation watermark: ${watermarkText(r.watermark)}; ${r.hidden.length} conversation entries hidden`];
      if (r.userMessage?.text) lines.push(`the user's message of that turn: ${r.userMessage.text}`);
      if (r.forked) lines.push(forkText(ctx, r.session, session.id, await session.metadata().then(hookRecordedBy, () => undefined)));
      return ok(
        { ...publicResult(r.session, r), watermark: r.watermark, forked: Boolean(r.forked), userMessage: publicMessage(r.userMessage), hidden: r.hidden.length },
        lines.join('\n'),
      );
    },
  );
}

/**
 * After a rewind with fork: which session tools without `session` now act on (as the CLI says) — for
 * a session an agent records into, only until the agent's next prompt, which goes on in the original.
 */
function forkText(ctx: McpContext, fork: string, original: string, agent: string | undefined): string {
  if (ctx.defaultSession) return `continuing in fork ${fork}; this server's default session is still ${ctx.defaultSession} (--session): pass session="${fork}" to work on the fork`;
  if (agent !== undefined) {
    return `continuing in fork ${fork}: it is the default session until ${agent}'s next prompt, which ckpt records in ${original} as before (${agent}'s own conversation is not moved); pass session="${fork}" to work on the fork`;
  }
  return `continuing in fork ${fork}: it is now the default session, tools without a session act on it`;
}

/** How long a user has to answer the confirmation the client shows them. */
const ELICIT_TIMEOUT_MS = 5 * 60_000;

/** What confirmed a destructive run, said in its result text when it was not a person's yes. */
type ConfirmedBy = 'person' | 'token' | 'token-after-cancel';

/**
 * Runs a destructive operation confirmed by its token. When the client can ask its user directly
 * (MCP elicitation), the plan is re-made (refused at once if anything moved since the preview) and
 * the user — not the model — is asked to approve it before anything changes; a decline changes
 * nothing. A client that answers "cancel" (no choice made: Claude Code in print mode cancels every
 * request) falls back to the token, which the model got by previewing; so does a client that cannot
 * ask. With the "person must confirm" setting (`ckpt mcp --require-person`) both are refused: only a
 * person's yes runs it. Either way the real run re-checks the token under the session lock.
 */
async function confirmed<R extends RestoreResult>(
  server: McpServer,
  ctx: McpContext,
  token: string,
  request: ConfirmRequest,
  run: (options: { dryRun?: boolean; checkPlan: CheckPlan }) => Promise<R>,
): Promise<{ result: R; by: ConfirmedBy }> {
  const checkPlan = ctx.confirmer.check(token, request);
  if (!server.server.getClientCapabilities()?.elicitation?.form) {
    if (ctx.requirePerson) throw personRequired(request, 'this client cannot ask its user (it does not support MCP elicitation)');
    return { result: await run({ checkPlan }), by: 'token' };
  }
  const preview = await run({ dryRun: true, checkPlan });
  // Nothing to approve: no file written or removed, no conversation entry hidden, no fork made.
  if (preview.restored.length + preview.deleted.length + hiddenBy(preview) === 0 && !request.fork) return { result: await run({ checkPlan }), by: 'token' };
  const message = `${confirmationText(ctx.workspace.root, request, preview)}\n\nThe present content of these paths is kept, so this can be undone.`;
  let answer: Awaited<ReturnType<typeof server.server.elicitInput>>;
  try {
    answer = await server.server.elicitInput(
      {
        message,
        requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', title: 'Carry this out?', description: message.slice(0, 500) } }, required: ['confirm'] },
      },
      { timeout: ELICIT_TIMEOUT_MS },
    );
  } catch (err) {
    // No answer, or one that is not the form's (a string for the yes/no: the SDK refuses it): not a yes.
    throw new CkptError('INVALID_ARGUMENT', `the confirmation got no usable answer (${(err as Error).message}): nothing was changed`, { cancelled: true });
  }
  if (answer.action === 'accept' && answer.content?.confirm === true) return { result: await run({ checkPlan }), by: 'person' };
  if (answer.action === 'cancel') {
    if (ctx.requirePerson) throw personRequired(request, 'the client cancelled the confirmation (no person approved it)');
    return { result: await run({ checkPlan }), by: 'token-after-cancel' };
  }
  throw new CkptError('INVALID_ARGUMENT', `the user did not approve the ${request.op} (${answer.action}): nothing was changed`, { cancelled: true, action: answer.action });
}

function personRequired(request: ConfirmRequest, why: string): CkptError {
  return new CkptError(
    'FORBIDDEN',
    `this ckpt MCP server requires a person's approval for a ${request.op} (--require-person), and ${why}: nothing was changed. Run it from the ckpt CLI or the web page instead.`,
    { personRequired: true },
  );
}

function confirmedText(by: ConfirmedBy): string[] {
  if (by === 'token-after-cancel') return ['(the client cancelled the confirmation prompt without an answer: carried out on the confirmation token of the preview)'];
  return [];
}

/** How many conversation entries a rewind's preview hides (0 for a restore). */
function hiddenBy(r: RestoreResult): number {
  const hidden = (r as { hidden?: unknown }).hidden;
  return Array.isArray(hidden) ? hidden.length : 0;
}

function confirmationText(root: string, request: ConfirmRequest, r: RestoreResult): string {
  // Shown to the person, not the model: names quoted as the CLI shows them (pathText), so a file name
  // holding a line break cannot forge a line of the plan they approve (SECURITY promise 7).
  const lines = [`ckpt: ${request.op} to ${request.tag}${request.fork ? ' (into a new fork)' : ''} in ${pathText(root)} will:`];
  for (const p of r.restored) lines.push(`  write  ${pathText(p)}${r.drift.includes(p) ? '  (overwrites changes ckpt did not record)' : ''}`);
  for (const p of r.deleted) lines.push(`  delete ${pathText(p)}${r.drift.includes(p) ? '  (overwrites changes ckpt did not record)' : ''}`);
  if (r.restored.length + r.deleted.length === 0) lines.push('  change no file');
  const hidden = hiddenBy(r);
  if (hidden > 0) lines.push(`  hide ${hidden} conversation ${hidden === 1 ? 'entry' : 'entries'} (kept, not deleted)`);
  if (request.fork) lines.push('  make a new fork of the session');
  return lines.join('\n');
}

function pathsFor(op: ConfirmOperation, args: { paths?: string[]; path?: string; fork?: boolean }): string[] {
  if (op === 'undo') {
    if (args.path === undefined || args.paths !== undefined) throw new CkptError('INVALID_ARGUMENT', "operation 'undo' takes one `path` (and no `paths`)");
    return [args.path];
  }
  if (args.path !== undefined) throw new CkptError('INVALID_ARGUMENT', `operation '${op}' takes no \`path\` (restore takes \`paths\`; undo takes one \`path\`)`);
  if (op === 'rewind') {
    if (args.paths !== undefined) throw new CkptError('INVALID_ARGUMENT', "operation 'rewind' restores the whole workspace: it takes no `paths`");
    return [];
  }
  if (args.fork !== undefined) throw new CkptError('INVALID_ARGUMENT', '`fork` applies to rewind only');
  return args.paths ?? [];
}

function requestFor(ctx: McpContext, session: Session, op: ConfirmOperation, tag: string, paths: string[], force?: boolean, fork?: boolean): ConfirmRequest {
  return { op, workspace: ctx.workspace.id, session: session.id, tag, paths, force: Boolean(force), fork: Boolean(fork) };
}

function publicMessage(m: RewindResult['userMessage']): z.infer<typeof USER_MESSAGE> {
  return m ? { turn: m.turn, text: m.text, ...(m.id !== undefined ? { id: m.id } : {}) } : null;
}

function publicResult(session: string, r: RestoreResult) {
  return { session, to: r.to, restored: r.restored, deleted: r.deleted, skipped: skippedOf(r), drift: r.drift, unchanged: r.unchanged.length, undo: r.undo };
}

/** Exactly the fields the (closed) output schema allows. */
function skippedOf(r: RestoreResult): { path: string; why: string }[] {
  return r.skipped.map((s) => ({ path: s.path, why: s.why }));
}

interface PreviewView {
  operation: string;
  session: string;
  to: string;
  paths: string[];
  fork: boolean;
  force: boolean;
  plan: { path: string; action: string }[];
  skipped: { path: string; why: string }[];
  drift: string[];
  unchanged: number;
  wouldRefuse?: { code: string; paths: string[] };
  watermark?: { turn: number; messageCount: number | null };
  token: string;
  expiresAt: string;
}

function previewText(p: PreviewView): string {
  const driftSet = new Set(p.drift);
  const lines = [`Plan (nothing changed yet): ${p.operation} to ${p.to} in session ${p.session}${p.paths.length ? ` for ${p.paths.join(', ')}` : ''}${p.fork ? ' into a new fork' : ''}`];
  for (const e of p.plan) lines.push(`  ${e.action === 'delete' ? 'delete' : e.action === 'mkdir' ? 'mkdir ' : 'write '} ${e.path}${driftSet.has(e.path) ? '  (DRIFT: changed since ckpt last recorded it)' : ''}`);
  for (const s of p.skipped) lines.push(`  skip   ${s.path} (${s.why})`);
  if (p.plan.length === 0) lines.push('  nothing to change');
  if (p.unchanged) lines.push(`  ${p.unchanged} path(s) already as at ${p.to}`);
  if (p.watermark) lines.push(`  conversation goes back to ${watermarkText(p.watermark)}`);
  if (p.wouldRefuse?.code === 'BLOB_NOT_FOUND') lines.push(`Running it would fail with BLOB_NOT_FOUND: the store lacks the content of ${p.wouldRefuse.paths.join(', ')}.`);
  else if (p.wouldRefuse) lines.push(`Running it would be refused with DRIFT: ${p.wouldRefuse.paths.join(', ')} changed since ckpt last recorded them. Preview with force=true only if the user agrees to overwrite them (their present content is kept for undo).`);
  const args = { tag: p.to, ...(p.operation === 'undo' ? { path: p.paths[0] } : p.paths.length ? { paths: p.paths } : {}), ...(p.fork ? { fork: true } : {}), ...(p.force ? { force: true } : {}), token: p.token };
  lines.push(`Show this plan to the user. Only if they confirm, call ${p.operation} with ${JSON.stringify(args)} (valid until ${p.expiresAt}, and only while nothing changes).`);
  return lines.join('\n');
}

function resultText(r: RestoreResult): string {
  const lines = [`restored to ${r.to}: ${r.restored.length} written, ${r.deleted.length} deleted, ${r.skipped.length} skipped`];
  for (const p of r.restored) lines.push(`  wrote   ${p}`);
  for (const p of r.deleted) lines.push(`  deleted ${p}`);
  for (const s of r.skipped) lines.push(`  skipped ${s.path} (${s.why})`);
  if (r.drift.length) lines.push(`  overwrote ${r.drift.length} drifted path(s); their content is in the undo checkpoint`);
  lines.push(r.undo ? `to undo this restore: restore_preview with tag ${r.undo}, then restore` : 'nothing changed');
  return lines.join('\n');
}

/** `turn N` and, when that turn recorded it, `(M messages)`: never a "?" for a count the agent did not give. */
function watermarkText(w: { turn: number; messageCount: number | null }): string {
  return `turn ${w.turn}${w.messageCount === null ? '' : ` (${w.messageCount} message${w.messageCount === 1 ? '' : 's'})`}`;
}
