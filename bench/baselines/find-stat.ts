// Floor for a scan: one bare stat pass over the workspace, `find -printf` of size, mtime, inode,
// mode and path (a `.git` folder at the root is pruned, as ckpt ignores it), output to /dev/null.
import path from 'node:path';
import { timed } from '../measure.js';
import { run } from '../proc.js';

export const FIND_DESCRIPTION = "find -printf '%s %T@ %i %m %p\\n' > /dev/null";

export function findStatPass(root: string): Promise<number> {
  return timed(() => run('find', [root, '-path', path.join(root, '.git'), '-prune', '-o', '-printf', '%s %T@ %i %m %p\\n']));
}
