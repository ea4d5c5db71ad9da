// Exact pictures of a workspace and their comparison: the promise under test is that `ckpt restore N`
// gives back exactly the tree the user had when sending prompt N. A snapshot holds every path below
// the root (except the ignored top-level names, `.git` by default: git's own store is not workspace
// content ckpt records) with its type, permission bits, content (files) or target (symlinks, never
// followed). `diffTrees` lists every difference in words a failing test can print.
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

export type Entry =
  | { type: 'dir'; mode: number }
  | { type: 'file'; mode: number; content: Buffer }
  | { type: 'symlink'; target: string }
  | { type: 'other'; mode: number };

export type Tree = Map<string, Entry>;

export async function snapshotTree(root: string, ignore: readonly string[] = ['.git']): Promise<Tree> {
  const tree: Tree = new Map();
  const walk = async (dir: string, rel: string) => {
    for (const name of (await readdir(dir)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      if (!rel && ignore.includes(name)) continue;
      const abs = join(dir, name);
      const st = await lstat(abs);
      const mode = st.mode & 0o7777;
      if (st.isSymbolicLink()) tree.set(path, { type: 'symlink', target: await readlink(abs) });
      else if (st.isDirectory()) {
        tree.set(path, { type: 'dir', mode });
        await walk(abs, path);
      } else if (st.isFile()) tree.set(path, { type: 'file', mode, content: await readFile(abs) });
      else tree.set(path, { type: 'other', mode });
    }
  };
  await walk(root, '');
  return tree;
}

function describe(e: Entry | undefined): string {
  if (!e) return 'absent';
  switch (e.type) {
    case 'dir':
      return `dir ${e.mode.toString(8)}`;
    case 'file':
      return `file ${e.mode.toString(8)} ${JSON.stringify(e.content.length > 60 ? `${e.content.subarray(0, 60).toString()}…` : e.content.toString())}`;
    case 'symlink':
      return `symlink -> ${e.target}`;
    default:
      return `other ${e.mode.toString(8)}`;
  }
}

function same(a: Entry, b: Entry): boolean {
  if (a.type !== b.type) return false;
  if (a.type === 'symlink') return a.target === (b as typeof a).target;
  if (a.mode !== (b as typeof a).mode) return false;
  return a.type !== 'file' || a.content.equals((b as typeof a).content);
}

/** Every difference between the expected and the actual tree: `path: expected X, found Y`. Empty when equal. */
export function diffTrees(expected: Tree, actual: Tree): string[] {
  const out: string[] = [];
  for (const path of [...new Set([...expected.keys(), ...actual.keys()])].sort()) {
    const e = expected.get(path);
    const a = actual.get(path);
    if (e && a && same(e, a)) continue;
    out.push(`${path}: expected ${describe(e)}, found ${describe(a)}`);
  }
  return out;
}
