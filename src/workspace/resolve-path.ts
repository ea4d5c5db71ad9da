// Path resolution beneath a workspace root (DESIGN §6). Every recorded path is workspace-relative
// with `/` separators and provably stays under the root: resolve the deepest existing ancestor's real
// path, re-append the missing segments, require the result to be strictly inside the root.
import { lstatSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CkptError } from '../errors.js';
import { isStoredPath } from '../format/stored-path.js';

export interface ResolvedPath {
  /** Workspace-relative, `/`-separated, no `.`/`..` segments, never empty. */
  rel: string;
  /** Absolute path of the entry itself (its last segment is not followed if it is a symlink). */
  abs: string;
}

/**
 * Resolves `input` (relative to `cwd`, or absolute) beneath `root` (a real path). The last segment is
 * kept as is — a symlink there is recorded, not followed — but every ancestor is resolved through
 * symlinks and must stay under the root. PATH_ESCAPE otherwise, and for the root itself.
 */
export async function resolveBeneath(root: string, input: string, cwd: string = root): Promise<ResolvedPath> {
  if (input.length === 0 || input.includes('\0')) {
    throw new CkptError('INVALID_ARGUMENT', `invalid path ${JSON.stringify(input)}`, { path: input });
  }
  const lexical = resolve(cwd, input);
  const escape = () =>
    new CkptError('PATH_ESCAPE', `path ${JSON.stringify(input)} resolves outside the workspace ${root}`, { path: input, root });
  // Judged on real paths, not lexically: `cwd` may be a symlinked alias of the root, and a symlinked
  // ancestor may lead out of it.
  const segments = lexical.split(sep).filter(Boolean);
  const name = segments.pop();
  if (name === undefined) throw escape();
  const parentReal = await realAncestor(`${sep}${segments.join(sep)}`);
  const abs = join(parentReal, name);
  // Both are normalized absolute paths (a real path, and a real folder joined with a plain name): a
  // path below the root is its tail, without path.relative's two resolves (~15 µs of a cold hook call).
  const rel = abs.startsWith(root) && root.length > 1 && abs[root.length] === sep && !root.endsWith(sep) ? abs.slice(root.length + 1) : relative(root, abs);
  if (rel === '') {
    // The root itself is no path in it (a restore or cat of the whole workspace names no path).
    throw new CkptError('PATH_ESCAPE', `path ${JSON.stringify(input)} is the workspace ${root} itself, not a path in it (name the files, or none for the whole workspace)`, { path: input, root });
  }
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw escape();
  return { rel: rel.split(sep).join('/'), abs };
}

/**
 * A path as ckpt records it, for naming a recorded path (a restore's filter, `cat`, `owner`): `input`
 * taken beneath `root` by name, its folders not followed — a folder replaced by a symlink since still
 * names the recorded path, never the link's target (which `restore 1 d/x.txt` would have deleted).
 * A name that reaches the root only through a link (a symlinked alias of it) resolves as
 * `resolveBeneath` does.
 */
export async function resolveRecorded(root: string, input: string, cwd: string = root): Promise<ResolvedPath> {
  if (input.length > 0 && !input.includes('\0')) {
    const abs = resolve(cwd, input);
    const rel = relative(root, abs);
    if (rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)) return { rel: rel.split(sep).join('/'), abs };
  }
  return resolveBeneath(root, input, cwd);
}

/** Real path of `dir`: the deepest existing ancestor resolved through symlinks, missing segments re-appended. */
async function realAncestor(dir: string): Promise<string> {
  const missing: string[] = [];
  let current = dir;
  for (;;) {
    try {
      // Direct (see storage/fs/fs-io.ts); `.native` is one realpath(3) call, not an lstat per segment.
      const real = realpathSync.native(current);
      return missing.length ? join(real, ...missing.reverse()) : real;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      // A dangling symlink in the chain must not be treated as a missing plain folder.
      if (isSymlink(current)) {
        throw new CkptError('PATH_ESCAPE', `path component ${current} is a dangling symlink`, { path: current });
      }
      const parent = resolve(current, '..');
      if (parent === current) return current;
      missing.push(current.slice(parent === sep ? 1 : parent.length + 1));
      current = parent;
    }
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Validates a stored workspace-relative path (from a log or a plan) without touching the disk: the
 * same rule the event decoder applies (format/stored-path.ts). A backslash is an ordinary character.
 */
export function assertRelativePath(rel: string): string {
  if (!isStoredPath(rel)) throw new CkptError('PATH_ESCAPE', `recorded path ${JSON.stringify(rel)} is not a clean workspace-relative path`, { path: rel });
  return rel;
}
