// The folder a command runs in. When it was removed — an agent's `rm -rf`, or a restore taking away a
// folder it had created, with the user's shell still sitting in it — process.cwd() throws ENOENT; the
// command then fails with a clear IO error naming that folder (not a stack trace), and only when it
// needs the folder: `--help` and `--version` still answer.
import { readlinkSync } from 'node:fs';
import { CkptError } from '../index.js';

export function currentDir(): string {
  try {
    return process.cwd();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    const gone = removedDir();
    throw new CkptError(
      'IO',
      `the current folder${gone ? ` ${gone}` : ''} no longer exists (removed by an agent or a restore?): cd to a folder that exists, such as the workspace, and run the command again`,
      { errno: code, ...(gone ? { path: gone } : {}), retryable: false },
      { cause: err },
    );
  }
}

/** Where the removed folder was (Linux names it in /proc, marked "(deleted)"). */
function removedDir(): string | undefined {
  try {
    return readlinkSync('/proc/self/cwd').replace(/ \(deleted\)$/, '');
  } catch {
    return undefined;
  }
}
