// MCP tools that record history: checkpoint (capture named paths before a write, or scan the
// workspace after a shell command) and settle (record what a write left). They never change a file.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { scan } from '../index.js';
import type { McpContext } from './context.js';
import { ok, registerTool } from './results.js';
import { FILE_IMAGE, PATHS, RECORDS, SESSION_ID, SKIPPED, orNull, publicImage } from './schemas.js';

const CHANGE = z.enum(['created', 'modified', 'deleted', 'mode', 'type']).describe('How a scanned path changed');

export function registerCheckpointTools(server: McpServer, ctx: McpContext): void {
  registerTool(
    server,
    'checkpoint',
    {
      title: 'Checkpoint',
      description:
        "Records a checkpoint in the session. With `paths`: captures their present content just BEFORE you change them (call it before every write, edit or delete; absent paths are recorded as absent, so a restore deletes them again). Without `paths`: scans the workspace and records what changed since ckpt last looked (call it after a shell command). Returns the checkpoint's tag 'N.K'; restoring to that tag puts those paths back as they were. Changes no file.",
      inputSchema: z.strictObject({
        session: SESSION_ID.optional(),
        paths: PATHS.min(1).optional().describe('Paths about to change; omit to scan the whole workspace instead'),
        tool: z.string().min(1).max(200).optional().describe("Name of the tool about to act, e.g. 'Edit' or 'Bash' (recorded in the log)"),
        reason: z.string().max(2000).optional().describe('Why, for people reading the log'),
      }),
      outputSchema: z.object({
        session: z.string(),
        kind: z.enum(['capture', 'scan']),
        tag: orNull(z.string(), 'Tag of the checkpoint').describe('Tag of the checkpoint; null when nothing was recorded (a first scan, nothing changed, or capturing disabled)'),
        files: z.array(FILE_IMAGE.extend({ change: CHANGE.optional() })),
        baseline: z.boolean().optional().describe('The first scan of the workspace: its state was stored, nothing recorded as changed'),
        skipped: SKIPPED.optional(),
        disabled: z.boolean().optional().describe('Capturing is switched off (CKPT_DISABLE)'),
        conflicts: z
          .array(z.object({ path: z.string(), otherSession: z.string() }))
          .optional()
          .describe('Paths another session of this workspace wrote since this session recorded them'),
      }),
      annotations: RECORDS,
    },
    async ({ session: id, paths, tool, reason }) => {
      const session = await ctx.session(id);
      if (paths && paths.length > 0) {
        const r = await session.capture(paths, { tool: tool ?? 'mcp', reason });
        const files = r.files.map(publicImage);
        const conflicts = (r.conflicts ?? []).map((c) => ({ path: c.path, otherSession: c.otherSession }));
        let text = r.disabled
          ? 'capturing is disabled (CKPT_DISABLE): nothing was recorded'
          : `checkpoint ${r.tag}: ${files.map((f) => `${f.path} (${f.state})`).join(', ')}\nrestore to ${r.tag} puts these paths back as they are now`;
        if (conflicts.length) text += `\nCONFLICT: another session wrote ${conflicts.map((c) => `${c.path} (session ${c.otherSession})`).join(', ')} since this session recorded it`;
        return ok({ session: session.id, kind: 'capture', tag: r.tag, files, ...(r.disabled ? { disabled: true } : {}), ...(conflicts.length ? { conflicts } : {}) }, text);
      }
      const r = await scan(session, { tool: tool ?? 'scan' });
      const files = r.files.map((f) => ({ ...publicImage(f), change: f.change }));
      const skipped = r.skipped.map((s) => ({ path: s.path, why: s.why }));
      const text = r.disabled
        ? 'capturing is disabled (CKPT_DISABLE): nothing was scanned'
        : r.baseline
          ? `first scan of the workspace: ${r.scanned} files stored as the baseline; later scans record what changes`
          : r.tag
            ? `checkpoint ${r.tag} (scan): ${files.map((f) => `${f.change} ${f.path}`).join(', ')}`
            : 'scan: nothing changed since ckpt last looked';
      return ok(
        { session: session.id, kind: 'scan', tag: r.tag, files, ...(r.baseline ? { baseline: true } : {}), skipped, ...(r.disabled ? { disabled: true } : {}) },
        text,
      );
    },
  );

  registerTool(
    server,
    'settle',
    {
      title: 'Settle',
      description:
        "Records what paths hold now, right AFTER you wrote them (the after-state of the last checkpoint, or of `tag`). ckpt then knows what the workspace should contain: a later change nobody recorded is reported as drift, and a restore does not overwrite it without force. Changes no file.",
      inputSchema: z.strictObject({
        session: SESSION_ID.optional(),
        paths: PATHS.min(1),
        tag: z.string().max(40).optional().describe("The checkpoint 'N.K' these paths belong to (default: the last one)"),
      }),
      outputSchema: z.object({ session: z.string(), tag: orNull(z.string(), 'Tag of the checkpoint settled').describe('Tag of the checkpoint these paths were settled for; null when there was none'), files: z.array(FILE_IMAGE), disabled: z.boolean().optional() }),
      annotations: RECORDS,
    },
    async ({ session: id, paths, tag }) => {
      const session = await ctx.session(id);
      const r = await session.settle(paths, { tag });
      const files = r.files.map(publicImage);
      const text = r.disabled ? 'capturing is disabled (CKPT_DISABLE): nothing was recorded' : `settled ${files.length} path(s)${r.tag ? ` of checkpoint ${r.tag}` : ''}`;
      return ok({ session: session.id, tag: r.tag, files, ...(r.disabled ? { disabled: true } : {}) }, text);
    },
  );
}
