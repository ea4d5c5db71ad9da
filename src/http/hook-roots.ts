// Where a user-scope HTTP hook may record (issue 27 item 6). A hook installed in the user's settings
// (no `?workspace=` in its URL, no project folder from the agent) takes its workspace from the event's
// `cwd`, which the agent (or whoever holds the token) chooses: a home-like cwd made ckpt copy
// `.ssh/id_rsa` into the store. Such hooks record only in a workspace the store already knows (a
// project the user set up: a session was made there through ckpt) or below a folder the user listed
// in `CKPT_HOOK_ROOTS` (the daemon's environment, `:`-separated absolute paths).
import { resolve, sep } from 'node:path';
import { CkptError, isCkptError } from '../index.js';
import type { DaemonState } from './daemon-state.js';

/** The folders of `CKPT_HOOK_ROOTS` (absolute ones only; anything else is ignored). */
export function hookRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.CKPT_HOOK_ROOTS ?? '').split(':').filter((p) => p.startsWith('/')).map((p) => resolve(p));
}

/** FORBIDDEN unless a user-scope hook may record in the workspace at `root` (see above). */
export async function checkHookRoot(state: DaemonState, root: string, roots: readonly string[] = hookRoots()): Promise<void> {
  const real = resolve(root);
  if (roots.some((r) => real === r || real.startsWith(r.endsWith(sep) ? r : r + sep))) return;
  try {
    await state.workspace(real);
    return;
  } catch (err) {
    if (!isCkptError(err, 'NOT_FOUND')) throw err;
  }
  throw new CkptError(
    'FORBIDDEN',
    `a user-scope hook records only in workspaces the store knows or below CKPT_HOOK_ROOTS; ${real} is neither (start a session there with ckpt session new, install the hook for the project with ckpt init, or list the folder in CKPT_HOOK_ROOTS)`,
    { workspace: real },
  );
}
