// A folder's whole tree for exact comparisons in model tests: files by content hash and mode, symlinks
// by target, folders by mode (what a restore must give back), nothing followed.
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

export type StrictEntry = { type: 'file'; mode: number; sha: string; bytes?: string } | { type: 'symlink'; target: string } | { type: 'dir'; mode: number };
export type StrictTree = Record<string, StrictEntry>;

/**
 * Every entry under `dir` but the names in `skip` (relative paths, e.g. `.git`). With `bytes`, a file's
 * entry also holds its bytes as a JSON string, so that a failure stays readable (CRLF shows as \r\n).
 */
export async function strictTreeOf(dir: string, options: { skip?: readonly string[]; bytes?: boolean } = {}): Promise<StrictTree> {
  const out: StrictTree = {};
  const skip = new Set(options.skip);
  async function walk(rel: string): Promise<void> {
    for (const name of (await readdir(join(dir, rel))).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (skip.has(r)) continue;
      const info = await lstat(join(dir, r));
      if (info.isSymbolicLink()) out[r] = { type: 'symlink', target: await readlink(join(dir, r)) };
      else if (info.isDirectory()) {
        out[r] = { type: 'dir', mode: info.mode & 0o7777 };
        await walk(r);
      } else {
        const data = await readFile(join(dir, r));
        out[r] = { type: 'file', mode: info.mode & 0o7777, sha: createHash('sha256').update(data).digest('hex'), ...(options.bytes ? { bytes: JSON.stringify(data.toString('latin1')) } : {}) };
      }
    }
  }
  await walk('');
  return out;
}
