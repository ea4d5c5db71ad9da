// Finding the workspace a folder belongs to, as git finds its repository (DESIGN §10 "CLI"): walking
// up from the folder, the nearest folder that has a session in the store; else the top of the git
// work tree the folder is in; else the folder itself. Nothing is created or registered on the way.
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Store } from './store.js';
import { resolveWorkspace, workspaceIdOf } from './workspace/workspace-id.js';

export interface LocatedWorkspace {
  /** Real path of the workspace root. */
  root: string;
  /** Why this folder: it has sessions, it is the git top level, or nothing above matched. */
  via: 'session' | 'git' | 'cwd';
}

/**
 * The workspace root for work done in `dir` (an existing folder; INVALID_ARGUMENT otherwise).
 * `withinGitTop`: folders above the git work tree's top are not looked at (an agent's start folder:
 * its project is that tree, not some folder above it that holds sessions).
 */
export async function locateWorkspace(store: Store, dir: string, options: { withinGitTop?: boolean } = {}): Promise<LocatedWorkspace> {
  const start = (await resolveWorkspace(dir)).root;
  let gitTop: string | undefined;
  // The last folder looked at for sessions: the git top, or (outside git) the folder itself.
  let stop: string | undefined;
  if (options.withinGitTop) {
    stop = start;
    for (let d = start; dirname(d) !== d; d = dirname(d)) {
      if (await isGitTop(d)) {
        stop = d;
        break;
      }
    }
  }
  for (let d = start; ; d = dirname(d)) {
    if (await hasSessions(store, d)) return { root: d, via: 'session' };
    if (gitTop === undefined && (await isGitTop(d))) gitTop = d;
    if (d === stop || dirname(d) === d) break;
  }
  return gitTop ? { root: gitTop, via: 'git' } : { root: start, via: 'cwd' };
}

async function hasSessions(store: Store, root: string): Promise<boolean> {
  const sessions = `workspaces/${workspaceIdOf(root)}/sessions`;
  for (const id of await store.ctx.backend.children(sessions)) {
    if (await store.ctx.backend.stat(`${sessions}/${id}/events.jsonl`)) return true;
  }
  return false;
}

/** A `.git` folder or file (worktrees and submodules have a file) marks the top of a work tree. */
async function isGitTop(d: string): Promise<boolean> {
  try {
    await stat(join(d, '.git'));
    return true;
  } catch {
    return false;
  }
}
