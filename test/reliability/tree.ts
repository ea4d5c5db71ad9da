// Exact workspace snapshots for the reliability suites: every path with its type, permission bits,
// content hash or link target (no times: a restore need not keep them), and the leftovers a crash
// can strand — restore staging files in the workspace, temp/quarantine files and lock folders in the store.
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

export type Tree = Map<string, string>;

export function snapshotTree(root: string): Tree {
  const out: Tree = new Map();
  const walk = (rel: string): void => {
    const abs = rel ? join(root, rel) : root;
    for (const name of readdirSync(abs).sort()) {
      const childRel = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(abs, name));
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out.set(childRel, `symlink ${readlinkSync(join(abs, name))}`);
      else if (st.isDirectory()) {
        out.set(childRel, `dir ${mode}`);
        walk(childRel);
      } else if (st.isFile()) out.set(childRel, `file ${mode} ${createHash('sha256').update(readFileSync(join(abs, name))).digest('hex').slice(0, 16)}`);
      else out.set(childRel, 'other');
    }
  };
  walk('');
  return out;
}

/** Paths whose entry differs between two trees (missing on one side included), sorted. */
export function treeDiff(a: Tree, b: Tree): string[] {
  const out = new Set<string>();
  for (const [p, v] of a) if (b.get(p) !== v) out.add(p);
  for (const p of b.keys()) if (!a.has(p)) out.add(p);
  return [...out].sort();
}

export function sameTree(a: Tree, b: Tree): boolean {
  return treeDiff(a, b).length === 0;
}

/** Every file or folder under `root` whose name matches `test`, relative to root. */
export function findNames(root: string, test: (name: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    let names: string[];
    try {
      names = readdirSync(rel ? join(root, rel) : root);
    } catch {
      return;
    }
    for (const name of names) {
      const childRel = rel ? `${rel}/${name}` : name;
      if (test(name)) out.push(childRel);
      const st = lstatSync(join(root, childRel));
      if (st.isDirectory() && !st.isSymbolicLink()) walk(childRel);
    }
  };
  walk('');
  return out.sort();
}

export const isStagingName = (name: string): boolean => name.startsWith('.') && name.includes('.ckpt-stage-');
export const isStoreTempName = (name: string): boolean => name.includes('.ckpt-tmp-');
export const isLockName = (name: string): boolean => name.endsWith('.ckpt-lock');
