// Shared zod pieces of the HTTP inputs (DESIGN §9 over HTTP): the workspace every session route
// names, tags, paths, durations and booleans given as query strings.
import { z } from 'zod';

/** No control characters (NUL, newlines, ESC, DEL) in a path or id: 400, never a 500 or a forged log line (issue 27 item 8). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;
export const NO_CONTROL_MESSAGE = 'control characters are not allowed';
/** A string naming a path, id or tag: no control characters. */
export const nameString = (): z.ZodString => z.string().regex(NO_CONTROL, NO_CONTROL_MESSAGE);

export const workspaceField = nameString().min(1).describe('absolute path of the workspace root, or its id (20 hex; another machine\'s workspace of a shared store is read-only here)');
export const tagField = nameString().min(1).max(64).describe('a tag: N, N.K or @S');
export const pathField = nameString().min(1).max(4096);
export const pathsField = z.array(pathField).max(10_000);
export const toolField = z.string().min(1).max(200);
/** A boolean in a query string: `1`, `true`, `yes` (and their opposites). */
export const queryBool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no'])
  .optional()
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

export const workspaceQuery = z.object({ workspace: workspaceField });
export const workspaceBody = z.object({ workspace: workspaceField });
