// Shared zod pieces of the HTTP inputs (DESIGN §9 over HTTP): the workspace every session route
// names, tags, paths, durations and booleans given as query strings.
import { z } from 'zod';

export const workspaceField = z.string().min(1).describe('absolute path of the workspace root, or its id (20 hex; another machine\'s workspace of a shared store is read-only here)');
export const tagField = z.string().min(1).max(64).describe('a tag: N, N.K or @S');
export const pathsField = z.array(z.string().min(1).max(4096)).max(10_000);
export const toolField = z.string().min(1).max(200);
/** A boolean in a query string: `1`, `true`, `yes` (and their opposites). */
export const queryBool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no'])
  .optional()
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

export const workspaceQuery = z.object({ workspace: workspaceField });
export const workspaceBody = z.object({ workspace: workspaceField });
