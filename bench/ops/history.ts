// Real history for the git figures: clones of `../shared/fixtures/history.bundle` (28 trees of the
// Git project, see its README) moved between two of its commits with `git checkout -f` — the change
// an agent's `git checkout`/`git pull` makes. Setup only; nothing here is timed.
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../ckpt-api.js';
import { run } from '../proc.js';

/** The transition measured: c18 → c19 changes 600 paths (85 added, 19 deleted, 493 modified, 3 mode-only). */
export const HISTORY_FROM = 'c18';
export const HISTORY_TO = 'c19';

export function historyBundle(): string {
  for (const p of [path.join(REPO_ROOT, '..', 'shared', 'fixtures', 'history.bundle'), '/work/shared/fixtures/history.bundle']) {
    if (existsSync(p)) return p;
  }
  throw new Error('history fixture not found (../shared/fixtures/history.bundle)');
}

const env = (): NodeJS.ProcessEnv => ({ ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' });

/** A git work tree of the history at `dir` (`gitDir` elsewhere when given: then `dir` is a plain folder). */
export interface HistoryTree {
  dir: string;
  gitDir: string;
  git(...args: string[]): Promise<string>;
  /** `git checkout -q -f <tag>` (the index and the files follow). */
  checkout(tag: string): Promise<void>;
}

/** Clones the bundle into `dir` at `tag`; with `detach`, the repository moves beside it (`dir` is then a plain folder). */
export async function cloneHistory(dir: string, tag: string, options: { detach?: boolean } = {}): Promise<HistoryTree> {
  await fsp.mkdir(path.dirname(dir), { recursive: true });
  await run('git', ['clone', '-q', '--no-checkout', historyBundle(), dir], { env: env() });
  let gitDir = path.join(dir, '.git');
  if (options.detach) {
    const outside = `${dir}.git`;
    await fsp.rename(gitDir, outside);
    gitDir = outside;
  }
  const git = (...args: string[]): Promise<string> => run('git', [`--git-dir=${gitDir}`, `--work-tree=${dir}`, ...args], { env: env(), capture: true, cwd: dir });
  const tree: HistoryTree = {
    dir,
    gitDir,
    git,
    checkout: async (t) => void (await git('checkout', '-q', '-f', t)),
  };
  await tree.checkout(tag);
  return tree;
}

/** Paths that differ between two commits (`git diff --name-only --no-renames`). */
export async function changedPaths(tree: HistoryTree, from: string, to: string): Promise<string[]> {
  return (await tree.git('diff', '--name-only', '--no-renames', '-z', from, to)).split('\0').filter(Boolean);
}

/** Folders one commit has and the other not (ckpt records folders a change creates or removes; git's diff lists files only). */
export async function changedFolders(tree: HistoryTree, from: string, to: string): Promise<string[]> {
  const folders = async (rev: string): Promise<Set<string>> => new Set((await tree.git('ls-tree', '-r', '-d', '--name-only', '-z', rev)).split('\0').filter(Boolean));
  const [a, b] = await Promise.all([folders(from), folders(to)]);
  return [...[...a].filter((d) => !b.has(d)), ...[...b].filter((d) => !a.has(d))].sort();
}
