// The MCP `status` tool: where the session stands and what changed in the workspace since ckpt last
// recorded it (what the next scan would record), from the library's `session.status()`. Read-only.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { McpContext } from './context.js';
import { ok, registerTool } from './results.js';
import { READ_ONLY, SESSION_ID } from './schemas.js';

export function registerStatusTool(server: McpServer, ctx: McpContext): void {
  registerTool(
    server,
    'status',
    {
      title: 'Workspace status',
      description:
        "Shows where the session stands: the current turn, the last checkpoint, paths a checkpoint captured whose after-state was never recorded (call settle for them), and the paths that changed since ckpt last recorded them (what `checkpoint` without paths would record now). Changes nothing, records nothing.",
      inputSchema: z.strictObject({
        session: SESSION_ID.optional(),
        limit: z.number().int().min(1).max(10_000).optional().describe('List at most this many changed paths (default 20; the count is always complete)'),
      }),
      outputSchema: z.object({
        workspace: z.string(),
        session: z.string(),
        turn: z.number(),
        lastCapture: z.object({ tag: z.string(), at: z.string() }).nullable(),
        unsettled: z.array(z.string()).describe('Captured paths whose after-state was not recorded since'),
        changed: z.object({ count: z.number(), paths: z.array(z.string()) }).describe('Paths that differ from what ckpt last recorded'),
        baseline: z.boolean().describe('A scan baseline exists: `changed` covers the whole workspace, not only paths ckpt recorded'),
      }),
      annotations: READ_ONLY,
    },
    async ({ session: id, limit }) => {
      const session = await ctx.session(id);
      const s = await session.status({ limit });
      const lines = [
        `session ${s.session}, turn ${s.turn}${s.lastCapture ? `, last checkpoint ${s.lastCapture.tag} at ${s.lastCapture.at}` : ', no checkpoint yet'}`,
        s.changed.count === 0
          ? `nothing changed since ckpt last recorded the workspace${s.baseline ? '' : ' (no scan baseline: only paths ckpt recorded were checked)'}`
          : `${s.changed.count} path(s) changed since ckpt last recorded them${s.changed.paths.length < s.changed.count ? ` (first ${s.changed.paths.length})` : ''}: ${s.changed.paths.join(', ')}`,
      ];
      if (s.unsettled.length) lines.push(`captured but not settled: ${s.unsettled.join(', ')}`);
      return ok({ ...s }, lines.join('\n'));
    },
  );
}
