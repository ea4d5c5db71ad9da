// MCP tools for sessions of the server's workspace: list, show, tree (read-only), new, fork and turn
// (they record history; none changes a file of the workspace).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { CkptError, hookRecordedBy, type Session, type SessionTreeNode } from '../index.js';
import type { McpContext } from './context.js';
import { ok, registerTool } from './results.js';
import { READ_ONLY, RECORDS, SESSION_ID, SESSION_INFO, SESSION_META, TAG, publicMeta } from './schemas.js';

const TREE_NODE = z.object({
  id: z.string(),
  title: z.string(),
  kind: z.enum(['root', 'fork', 'child']),
  parent: z.string().optional(),
  forkedAt: z.number().optional().describe('Seq of the parent event the fork starts after'),
  depth: z.number(),
  updatedAt: z.string(),
  eventCount: z.number(),
});

export function registerSessionTools(server: McpServer, ctx: McpContext): void {
  registerTool(
    server,
    'session_list',
    {
      title: 'List sessions',
      description: "Lists the ckpt sessions of this workspace, most recently updated first. A session is one conversation with an agent; its history (turns, captures, restores) is what the other tools read and restore.",
      inputSchema: z.strictObject({}),
      outputSchema: z.object({ workspace: z.string(), sessions: z.array(SESSION_META) }),
      annotations: READ_ONLY,
    },
    async () => {
      const sessions = (await ctx.workspace.list()).map(publicMeta);
      const text = sessions.length === 0 ? `no sessions in workspace ${ctx.workspace.root}; start one with session_new` : sessions.map(line).join('\n');
      return ok({ workspace: ctx.workspace.root, sessions }, text);
    },
  );

  registerTool(
    server,
    'session_show',
    {
      title: 'Show a session',
      description: 'Shows one session: its metadata (title, kind, parent, fork point), how many turns and captures it has, and its last event seq.',
      inputSchema: z.strictObject({ session: SESSION_ID.optional() }),
      outputSchema: z.object({ session: SESSION_META, turns: z.number(), captures: z.number(), lastSeq: z.number() }),
      annotations: READ_ONLY,
    },
    async ({ session: id }) => {
      const session = await ctx.session(id);
      const meta = publicMeta(await session.metadata());
      const events = await session.events();
      const turns = events.filter((e) => e.type === 'turn').length;
      const captures = events.filter((e) => e.type === 'capture').length;
      const lastSeq = events.at(-1)?.seq ?? 0;
      const text = `${line(meta)}\n  kind ${meta.kind}${meta.parent ? `, parent ${meta.parent}` : ''}\n  ${turns} turns, ${captures} captures, last event @${lastSeq}`;
      return ok({ session: meta, turns, captures, lastSeq }, text);
    },
  );

  registerTool(
    server,
    'session_tree',
    {
      title: 'Session tree',
      description: 'Shows the sessions of this workspace as a tree: forks and sub-agent (child) sessions under the session they came from, in depth-first order.',
      inputSchema: z.strictObject({}),
      outputSchema: z.object({ nodes: z.array(TREE_NODE) }),
      annotations: READ_ONLY,
    },
    async () => {
      const nodes: z.infer<typeof TREE_NODE>[] = [];
      const walk = (list: SessionTreeNode[], depth: number) => {
        for (const n of list) {
          const m = n.session;
          nodes.push({
            id: m.id,
            title: m.title,
            kind: m.kind,
            ...(m.parent ? { parent: m.parent } : {}),
            ...(m.forkedFrom ? { forkedAt: m.forkedFrom.seq } : {}),
            depth,
            updatedAt: m.updatedAt,
            eventCount: m.eventCount,
          });
          walk(n.children, depth + 1);
        }
      };
      walk(await ctx.workspace.tree(), 0);
      const text = nodes.length === 0 ? 'no sessions' : nodes.map((n) => `${'  '.repeat(n.depth)}${n.id} (${n.kind}${n.forkedAt ? ` at @${n.forkedAt}` : ''})${n.title ? ` ${n.title}` : ''}`).join('\n');
      return ok({ nodes }, text);
    },
  );

  registerTool(
    server,
    'session_new',
    {
      title: 'Start a session',
      description: 'Starts a new ckpt session in this workspace (call once per conversation, before the first checkpoint). Later tools default to the newest session.',
      inputSchema: z.strictObject({
        title: z.string().max(500).optional().describe('A title for people'),
        id: SESSION_ID.optional().describe('Use this id instead of a generated one'),
        info: z
          .strictObject(Object.fromEntries(Object.keys(SESSION_INFO).map((k) => [k, z.string().min(1).max(4096).optional()])) as Record<keyof typeof SESSION_INFO, z.ZodOptional<z.ZodString>>)
          .optional()
          .describe("What you are: e.g. {agent: 'cursor', model: '…', externalId: your own conversation id}"),
      }),
      outputSchema: z.object({ session: SESSION_META }),
      annotations: RECORDS,
    },
    async ({ title, id, info }) => {
      const created = await ctx.workspace.create({ title, id, info });
      const meta = publicMeta(await created.metadata());
      return ok({ session: meta }, `created session ${meta.id}${meta.title ? ` "${meta.title}"` : ''} in ${meta.workspace}`);
    },
  );

  registerTool(
    server,
    'session_fork',
    {
      title: 'Fork a session',
      description: "Forks a session at a tag (default: its end) into a new session that shares its history up to that point. Changes no file: to also put the workspace back, use rewind with fork=true.",
      inputSchema: z.strictObject({ session: SESSION_ID.optional(), at: TAG.optional(), title: z.string().max(500).optional(), id: SESSION_ID.optional().describe('Id of the fork') }),
      outputSchema: z.object({ session: SESSION_META }),
      annotations: RECORDS,
    },
    async ({ session: from, at, title, id }) => {
      const parent = await ctx.session(from);
      const fork = await ctx.workspace.fork(parent.id, { title, id, ...(at !== undefined ? { atTag: at } : {}) });
      const meta = publicMeta(await fork.metadata());
      return ok({ session: meta }, `forked ${parent.id} at @${meta.forkedFrom?.seq} into ${meta.id}`);
    },
  );

  registerTool(
    server,
    'turn',
    {
      title: 'Start a turn',
      description: "Marks that the user sent a message: turn N begins (tag 'N'). Record the transcript's message count so a later rewind can tell where to truncate the conversation.",
      inputSchema: z.strictObject({
        session: SESSION_ID.optional(),
        messageCount: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe('Messages in the transcript when the turn began'),
        text: z.string().max(100_000).optional().describe("The user's message (shown by show)"),
      }),
      outputSchema: z.object({ session: z.string(), turn: z.number(), tag: z.string(), seq: z.number() }),
      annotations: RECORDS,
    },
    async ({ session: id, messageCount, text }) => {
      const session = await ctx.session(id);
      await refuseHookTurn(session);
      const r = await session.turn({ messageCount, text });
      return ok({ session: session.id, turn: r.turn, tag: r.tag, seq: r.seq }, `turn ${r.turn} began (tag ${r.tag}) in session ${session.id}`);
    },
  );
}

/**
 * A session ckpt's hooks record for an agent's conversation (its id is derived from the agent's own
 * session id, agentSessionId) gets its turns from the agent's prompt hook, one per prompt. A model that
 * follows this server's instructions in that agent calls `turn` too: a second turn per prompt, and
 * turn N is no longer the user's prompt N (`ckpt restore 3` gave the tree from within prompt two).
 * Refused, nothing recorded; every other tool works on such a session as before.
 */
async function refuseHookTurn(session: Session): Promise<void> {
  const agent = hookRecordedBy(await session.metadata());
  if (agent === undefined) return;
  throw new CkptError(
    'INVALID_ARGUMENT',
    `session ${session.id} is recorded by ${agent}'s hooks, which start a turn on every prompt: nothing was recorded (do not call turn, session_new, checkpoint or settle for this conversation; the hooks record it)`,
    { session: session.id, recordedByHooks: agent },
  );
}

function line(m: z.infer<typeof SESSION_META>): string {
  return `${m.id}  ${m.kind}  updated ${m.updatedAt}  ${m.eventCount} events${m.title ? `  ${m.title}` : ''}`;
}
