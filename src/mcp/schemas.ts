// The zod schemas the MCP tools share: inputs (bounded, so a huge or malformed argument is a schema
// error, never work) and outputs (exact: the SDK publishes them as JSON Schema with closed objects,
// and clients validate structuredContent against them).
import { z } from 'zod';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { publicImage as publicFields, type FileState, type SessionInfoField } from '../index.js';

export const SESSION_ID = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/, 'a session id: letters, digits, _ and -, at most 128')
  .describe("Session id (default: the server's --session, else the most recently updated session of the workspace)");

const TAG_TEXT = z
  .string()
  .max(40)
  .regex(/^(?:\d{1,9}(?:\.\d{1,9})?|@\d{1,15})$/, "a tag: 'N', 'N.K' or '@S'")
  .describe("'N', 'N.K' or '@S'");

/**
 * A tag. Clients that type arguments from a command line (the MCP Inspector CLI's `from=3`) send a
 * bare turn number as a JSON number, so a whole number is accepted as turn N. A fractional number is
 * refused: as numbers 1.1 and 1.10 are the same, and they name different captures.
 */
export const TAG = z
  .union([TAG_TEXT, z.number().describe('A turn number N (the same as the string "N")')])
  .transform((t, ctx) => {
    if (typeof t === 'number' && !Number.isInteger(t)) {
      ctx.addIssue({ code: 'custom', message: `pass 'N.K' tags as strings, e.g. "1.2" (as numbers 1.1 and 1.10 are the same): a tag given as a number is a turn` });
      return z.NEVER;
    }
    return String(t);
  })
  .pipe(TAG_TEXT)
  .describe("A point in the session: 'N' = start of turn N, 'N.K' = just before the K-th capture of turn N, '@S' = just after event S");

/**
 * `inner` or null, published as `anyOf: [inner, {type: null}]`. zod folds a bare nullable primitive
 * into `type: [T, "null"]`, which the MCP Inspector reports as unportable (a client mapping schemas
 * onto a single-`type` dialect, such as Gemini's, may reject the tool); a branch with a description
 * is left as its own branch.
 */
export function orNull<T extends z.ZodType>(inner: T, what: string): z.ZodNullable<T> {
  return inner.describe(what).nullable();
}

export const PATH = z
  .string()
  .min(1)
  .max(4096)
  .describe('A path relative to the workspace root (or absolute inside it); paths outside the workspace are refused (PATH_ESCAPE)');

export const PATHS = z.array(PATH).max(1000);

/** What an agent may say about its run (SESSION_INFO_FIELDS of the library), each optional. */
export const SESSION_INFO = {
  agent: z.string().optional(),
  externalId: z.string().optional(),
  model: z.string().optional(),
  provider: z.string().optional(),
  cwd: z.string().optional(),
  transcriptPath: z.string().optional(),
  taskId: z.string().optional(),
  spawnedFrom: z.string().optional(),
  continues: z.string().optional(),
} satisfies Record<SessionInfoField, z.ZodOptional<z.ZodString>>;

export const SESSION_META = z.object({
  id: z.string(),
  title: z.string(),
  workspace: z.string(),
  kind: z.enum(['root', 'fork', 'child']),
  parent: z.string().optional(),
  forkedFrom: z.object({ session: z.string(), seq: z.number() }).optional(),
  depth: z.number(),
  ...SESSION_INFO,
  createdAt: z.string(),
  updatedAt: z.string(),
  endedAt: z.string().optional(),
  eventCount: z.number(),
  lastEventType: z.string(),
});

export const FILE_STATE = z.enum(['file', 'symlink', 'dir', 'absent', 'skipped'] as const satisfies readonly FileState[]);

export const FILE_IMAGE = z.object({
  path: z.string(),
  state: FILE_STATE,
  bytes: z.number().optional(),
  mode: z.number().optional(),
  target: z.string().optional(),
  why: z.string().optional(),
});

export const SKIPPED = z.array(z.object({ path: z.string(), why: z.string() }));

export const RESTORE_RESULT = {
  session: z.string(),
  to: z.string(),
  restored: z.array(z.string()),
  deleted: z.array(z.string()),
  skipped: SKIPPED,
  drift: z.array(z.string()).describe('Paths changed since ckpt last recorded them (overwritten only with force; kept in the undo capture)'),
  unchanged: z.number().describe('Paths already as they were at the tag'),
  undo: orNull(z.string(), 'Tag of the recovery capture').describe('Tag of the recovery capture: restoring to it undoes this restore (null when nothing changed)'),
};

export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Records history; never changes the user's files. */
export const RECORDS: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
/** Changes files in the workspace (two-step: needs a token from restore_preview). */
export const DESTRUCTIVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

/** Picks the fields of an image the output schemas carry (no blob ids: content is read through read_file). */
export function publicImage(f: { path: string; state: z.infer<typeof FILE_STATE>; bytes?: number; mode?: number; target?: string; why?: string }): z.infer<typeof FILE_IMAGE> {
  return publicFields(f) as z.infer<typeof FILE_IMAGE>;
}

export function publicMeta(m: z.infer<typeof SESSION_META>): z.infer<typeof SESSION_META> {
  return SESSION_META.parse(m);
}
