// Identity of a workspace (DESIGN §2, §3): the real path of its root folder and the store id derived
// from it, `wid` = first 20 hex of sha256(real path).
import { createHash } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { CkptError, toCkptError } from '../errors.js';

export interface WorkspaceIdentity {
  /** Real (symlink-free, absolute) path of the root folder. */
  root: string;
  /** Store id of the workspace: 20 hex characters. */
  id: string;
}

/** `machine` is given for shared stores only: the same path on two machines is two workspaces. */
export function workspaceIdOf(realRoot: string, machine?: string): string {
  const h = createHash('sha256');
  if (machine !== undefined) h.update(`${machine}\0`);
  return h.update(realRoot).digest('hex').slice(0, 20);
}

/** Resolves a folder to its workspace identity; a missing path or a non-folder is INVALID_ARGUMENT. */
export async function resolveWorkspace(dir: string, machine?: string): Promise<WorkspaceIdentity> {
  let root: string;
  try {
    root = await realpath(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new CkptError('INVALID_ARGUMENT', `workspace folder ${JSON.stringify(dir)} does not exist`, { workspace: dir });
    }
    throw toCkptError(err, `resolving workspace ${dir}`);
  }
  const info = await stat(root);
  if (!info.isDirectory()) {
    throw new CkptError('INVALID_ARGUMENT', `workspace ${JSON.stringify(dir)} is not a folder`, { workspace: dir });
  }
  return { root, id: workspaceIdOf(root, machine) };
}
