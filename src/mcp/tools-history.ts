// Read-only MCP tools over a session's history: log (checkpoints), show (what a tag names), diff
// (between tags or against the present workspace) and read_file (a file as it was at a tag, from
// blobs this session's log references only).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { McpContext } from './context.js';
import { ok, registerTool } from './results.js';
import { FILE_IMAGE, FILE_STATE, PATH, READ_ONLY, SESSION_ID, SKIPPED, TAG, orNull } from './schemas.js';
import { encodeContent } from './content.js';

const CHECKPOINT = z.object({
  tag: z.string(),
  seq: z.number(),
  turn: z.number(),
  tool: z.string(),
  at: z.string(),
  reason: z.string().optional(),
  // A file's `change`, link `target` and rename as `ckpt log --json` gives them: without them a
  // created file read as merely "absent before", a deleted one as a plain edit.
  files: z.array(
    z.object({
      path: z.string(),
      state: FILE_STATE,
      change: z.enum(['created', 'deleted']).optional(),
      target: z.string().optional(),
      renamedTo: z.string().optional(),
      renamedFrom: z.string().optional(),
    }),
  ),
  restoreTo: z.string().optional().describe("A restore's recovery capture: the tag that restore went to"),
  pruned: z.literal(true).optional().describe('Before the prune point: this tag no longer restores'),
  rewound: z.literal(true).optional().describe('A later rewind moved the conversation back before this checkpoint'),
});

/** A change's mode, type and link as `ckpt diff --json` gives them (a chmod alone is "M +0 -0" otherwise). */
const DIFF_CHANGE = z.object({
  path: z.string(),
  status: z.enum(['A', 'M', 'D']),
  added: z.number(),
  removed: z.number(),
  binary: z.boolean().optional(),
  truncated: z.boolean().optional(),
  mode: z.object({ from: z.string(), to: z.string() }).optional().describe('Permission bits changed (octal)'),
  type: z.object({ from: z.enum(['file', 'symlink']), to: z.enum(['file', 'symlink']) }).optional().describe('The kind of entry changed'),
  dir: z.boolean().optional().describe('A folder: made (A) or removed (D), or its mode changed (M); its files are listed as paths of their own'),
  link: z.object({ from: z.string().optional(), to: z.string().optional() }).optional().describe("A symbolic link's target at either end"),
  unrecorded: z.boolean().optional().describe('Changed since ckpt last recorded the path, no capture of it yet (a hand edit since the last prompt): a restore would put it back, or refuse it as drift'),
});

const MAX_PATCH_CHARS = 200_000;

export function registerHistoryTools(server: McpServer, ctx: McpContext): void {
  registerTool(
    server,
    'log',
    {
      title: 'Checkpoint log',
      description:
        "Lists the session's checkpoints, oldest first: each capture's tag ('N.K'), event seq, turn, tool, time and the paths it recorded (with their state before the change). Restore captures (tool 'restore') are listed too: their tag undoes that restore.",
      inputSchema: z.strictObject({
        session: SESSION_ID.optional(),
        limit: z.number().int().min(1).max(10_000).optional().describe('Only the last N checkpoints (default 100)'),
      }),
      outputSchema: z.object({ session: z.string(), total: z.number(), checkpoints: z.array(CHECKPOINT) }),
      annotations: READ_ONLY,
    },
    async ({ session: id, limit }) => {
      const session = await ctx.session(id);
      const all = await session.checkpoints();
      // The published schema is the projection: it keeps exactly its fields (a checkpoint's others,
      // and a file's blob, size and mode, stay out of the closed output).
      const checkpoints = all.slice(-(limit ?? 100)).map((c) => CHECKPOINT.parse(c));
      const lines = checkpoints.map((c) => `${c.tag.padEnd(8)} @${c.seq}  ${c.tool}  ${c.files.map((f) => f.path).join(', ')}`);
      if (all.length > checkpoints.length) lines.unshift(`(last ${checkpoints.length} of ${all.length} checkpoints)`);
      return ok({ session: session.id, total: all.length, checkpoints }, lines.length ? lines.join('\n') : 'no checkpoints yet');
    },
  );

  registerTool(
    server,
    'show',
    {
      title: 'Show a tag',
      description:
        "Explains what a tag names: its position (event seq), the turn it falls in (with the user's message when recorded), the event just before it, and the checkpoint right after it (for 'N.K', capture N.K: the tool and the paths it was about to change). Also counts what a restore to it would consider.",
      inputSchema: z.strictObject({ session: SESSION_ID.optional(), tag: TAG }),
      outputSchema: z.object({
        session: z.string(),
        tag: z.string(),
        position: z.number(),
        lastSeq: z.number(),
        turn: z.object({ turn: z.number(), seq: z.number().optional(), at: z.string().optional(), messageCount: orNull(z.number(), 'Messages in the conversation at that turn'), text: z.string().optional() }),
        event: z.object({ seq: z.number(), type: z.string(), at: z.string() }).nullable(),
        next: z
          .object({ tag: z.string(), seq: z.number(), turn: z.number(), k: z.number(), tool: z.string(), at: z.string(), reason: z.string().optional(), files: z.array(FILE_IMAGE) })
          .nullable(),
        turnCaptures: z.array(z.string()),
        capturesAfter: z.number(),
        pathsAfter: z.number(),
      }),
      annotations: READ_ONLY,
    },
    async ({ session: id, tag }) => {
      const session = await ctx.session(id);
      const info = await session.show(tag);
      const lines = [
        `tag ${tag} = position @${info.position} of @${info.lastSeq} in session ${session.id}`,
        `turn ${info.turn.turn}${info.turn.messageCount !== null ? ` (${info.turn.messageCount} messages)` : ''}${info.turn.text !== undefined ? `: ${clip(info.turn.text, 500)}` : ''}`,
        info.next
          ? `next checkpoint ${info.next.tag} by ${info.next.tool}: ${info.next.files.map((f) => `${f.path} (${f.state})`).join(', ')}`
          : 'no checkpoint after this point',
        `after it: ${info.capturesAfter} checkpoint(s) over ${info.pathsAfter} path(s)`,
      ];
      return ok({ session: session.id, ...info }, lines.join('\n'));
    },
  );

  registerTool(
    server,
    'diff',
    {
      title: 'Diff',
      description:
        "Shows what changed between two tags of the session, or from a tag to the present workspace (omit `to`): per path A/M/D with added/removed line counts, and with patch=true a unified diff. Only paths ckpt recorded in that range are compared.",
      inputSchema: z.strictObject({
        session: SESSION_ID.optional(),
        from: TAG,
        to: TAG.optional().describe('End tag (default: the present workspace)'),
        patch: z.boolean().optional().describe('Include a unified diff (default false)'),
      }),
      outputSchema: z.object({
        session: z.string(),
        from: z.string(),
        to: orNull(z.string(), 'End tag').describe('End tag; null for the present workspace'),
        changes: z.array(DIFF_CHANGE),
        skipped: SKIPPED,
        patch: z.string().optional(),
        patchTruncated: z.boolean().optional().describe(`The patch was cut at ${MAX_PATCH_CHARS} characters`),
      }),
      annotations: READ_ONLY,
    },
    async ({ session: id, from, to, patch }) => {
      const session = await ctx.session(id);
      const r = await session.diff(from, to, { patch });
      const cut = r.patch !== undefined && r.patch.length > MAX_PATCH_CHARS;
      const shownPatch = r.patch === undefined ? undefined : cut ? r.patch.slice(0, MAX_PATCH_CHARS) : r.patch;
      const changes = r.changes.map((c) => DIFF_CHANGE.parse(c));
      const lines = changes.map((c) => `${c.status} ${c.path}${c.binary ? ' (binary)' : c.dir ? ' (folder)' : ` +${c.added} -${c.removed}`}${describeKind(c)}${c.unrecorded ? ' (not recorded yet)' : ''}`);
      if (lines.length === 0) lines.push(`no changes between ${from} and ${to ?? 'the present workspace'}`);
      for (const s of r.skipped) lines.push(`skipped ${s.path} (${s.why})`);
      if (shownPatch) lines.push('', shownPatch);
      if (cut) lines.push(`… patch cut at ${MAX_PATCH_CHARS} characters`);
      return ok(
        { session: session.id, from: r.from, to: r.to, changes, skipped: r.skipped.map((x) => ({ path: x.path, why: x.why })), ...(shownPatch !== undefined ? { patch: shownPatch } : {}), ...(cut ? { patchTruncated: true } : {}) },
        lines.join('\n'),
      );
    },
  );

  registerTool(
    server,
    'read_file',
    {
      title: 'Read a file at a tag',
      description:
        "Returns a file's content as it was at a tag (what a restore to that tag would put there): from the recorded content when a later checkpoint captured the path or it changed unrecorded since ckpt last looked (a hand edit after the last prompt), else the present file. Text is returned as UTF-8, anything else as base64. Paths outside the workspace are refused (PATH_ESCAPE).",
      inputSchema: z.strictObject({
        session: SESSION_ID.optional(),
        tag: TAG,
        path: PATH,
        maxBytes: z.number().int().min(1).max(16 * 1024 * 1024).optional().describe('Return at most this many bytes (default 262144)'),
      }),
      outputSchema: z.object({
        session: z.string(),
        path: z.string(),
        tag: z.string(),
        position: z.number(),
        state: FILE_STATE,
        source: z.enum(['capture', 'recorded', 'workspace']).describe("capture: a checkpoint's before-image; recorded: ckpt's last record (the present file drifted); workspace: the present file"),
        from: z.string().optional().describe('Tag of the checkpoint the content comes from'),
        drift: z.boolean().optional(),
        bytes: z.number().optional(),
        mode: z.number().optional(),
        target: z.string().optional(),
        why: z.string().optional(),
        encoding: z.enum(['utf8', 'base64']).optional(),
        content: z.string().optional(),
        truncated: z.boolean().optional(),
      }),
      annotations: READ_ONLY,
    },
    async ({ session: id, tag, path, maxBytes }) => {
      const session = await ctx.session(id);
      const f = await session.readFile(tag, path);
      const { content, ...meta } = f;
      const body = content ? encodeContent(content, maxBytes ?? 256 * 1024) : undefined;
      const structured = { session: session.id, ...meta, ...(body ?? {}) };
      const where = f.source === 'capture' ? `from checkpoint ${f.from}` : f.source === 'recorded' ? "from ckpt's last record (the present file drifted from it)" : 'the present file (unchanged since the tag)';
      const head = `${f.path} at ${tag}: ${f.state}${f.state === 'symlink' ? ` -> ${f.target}` : ''}${f.why ? ` (${f.why})` : ''}, ${where}`;
      const text = body ? `${head}${body.encoding === 'base64' ? ' [base64]' : ''}${body.truncated ? ` [first ${maxBytes ?? 256 * 1024} bytes]` : ''}\n${body.content}` : head;
      return ok(structured, text);
    },
  );
}

/** A change's type, link and mode in words, as the diff's text line ends with them. */
function describeKind(c: z.infer<typeof DIFF_CHANGE>): string {
  const parts: string[] = [];
  if (c.type) parts.push(`${c.type.from} -> ${c.type.to}`);
  if (c.link && c.link.from !== c.link.to) parts.push(`link ${c.link.from ?? '(none)'} -> ${c.link.to ?? '(none)'}`);
  if (c.mode) parts.push(`mode ${c.mode.from} -> ${c.mode.to}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
