// One flush of a whole file system (Linux `syncfs(2)`, through coreutils' `sync -f`), for a restore
// that writes many files: it writes back every dirty file and commits the journal once, where an
// fsync per file and per folder makes the journal commit many times (DESIGN §10 "A large restore
// flushes its file system once"). Node has no binding for syncfs, hence the process. Only where the
// kernel reports write-back errors through syncfs (Linux 5.8 and later); elsewhere, or when the
// program is missing or fails, the caller flushes file by file as before.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { platform, release } from 'node:os';

/** Absolute paths only: a restore never runs whatever `sync` the PATH names first. */
const SYNC_PROGRAMS = ['/usr/bin/sync', '/bin/sync'];

let program: string | null | undefined;

/** The `sync` program to run, or null where syncfs cannot be trusted to report a failed write-back. */
function syncProgram(): string | null {
  if (program !== undefined) return program;
  program = null;
  if (platform() !== 'linux' || !reportsWritebackErrors(release())) return program;
  for (const candidate of SYNC_PROGRAMS) {
    try {
      accessSync(candidate, constants.X_OK);
      return (program = candidate);
    } catch {
      // not there: the next
    }
  }
  return program;
}

/** syncfs returns write-back errors since Linux 5.8 (it returned 0 before). */
export function reportsWritebackErrors(kernelRelease: string): boolean {
  const m = /^(\d+)\.(\d+)/.exec(kernelRelease);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 5 || (major === 5 && minor >= 8);
}

/** True when this machine can flush a file system at once (see syncFileSystem). */
export function canSyncFileSystem(): boolean {
  return syncProgram() !== null;
}

/**
 * Flushes the file system holding the folder `dir` (everything written on it so far, data and
 * metadata, is durable when this resolves true). False when it could not: no usable program, or it
 * failed (a write-back error, the folder gone) — the caller then flushes what it wrote itself.
 */
export function syncFileSystem(dir: string): Promise<boolean> {
  const bin = syncProgram();
  if (bin === null) return Promise.resolve(false);
  // No shell, an empty environment: nothing but the folder reaches the program.
  return new Promise((resolve) => execFile(bin, ['-f', '--', dir], { env: {} }, (err) => resolve(err === null)));
}
