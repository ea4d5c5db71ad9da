// Shadow git, as today's agents checkpoint: a separate GIT_DIR whose work tree is the workspace,
// `git add -A` then `git commit`, spawned as real processes. Git's own defaults otherwise (it does
// not fsync loose objects); auto-gc is off so a background repack cannot land inside a measurement,
// and user/system config is ignored so the machine's settings do not change the figures.
import { promises as fsp } from 'node:fs';
import { timed } from '../measure.js';
import { run } from '../proc.js';

export function gitEnv(gitDir: string, workTree: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GIT_DIR: gitDir,
    GIT_WORK_TREE: workTree,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'ckpt bench',
    GIT_AUTHOR_EMAIL: 'bench@ckpt.invalid',
    GIT_COMMITTER_NAME: 'ckpt bench',
    GIT_COMMITTER_EMAIL: 'bench@ckpt.invalid',
  };
}

export interface ShadowRepo {
  gitDir: string;
  workTree: string;
  env: NodeJS.ProcessEnv;
}

/** Creates an empty shadow repository (setup, not measured). */
export async function initShadow(gitDir: string, workTree: string): Promise<ShadowRepo> {
  const env = gitEnv(gitDir, workTree);
  await run('git', ['init', '-q'], { env, cwd: workTree });
  await run('git', ['config', 'gc.auto', '0'], { env, cwd: workTree });
  await run('git', ['config', 'commit.gpgsign', 'false'], { env, cwd: workTree });
  return { gitDir, workTree, env };
}

let counter = 0;

/** Milliseconds of a checkpoint: `git add <paths>` (or `-A`) then `git commit -q -m …`. */
export function shadowCheckpoint(repo: ShadowRepo, paths?: string[]): Promise<number> {
  return timed(async () => {
    const opts = { env: repo.env, cwd: repo.workTree };
    await run('git', paths ? ['add', '--', ...paths] : ['add', '-A'], opts);
    await run('git', ['commit', '-q', '-m', `checkpoint ${++counter}`], opts);
  });
}

export async function removeShadow(repo: ShadowRepo | undefined): Promise<void> {
  if (repo) await fsp.rm(repo.gitDir, { recursive: true, force: true });
}
