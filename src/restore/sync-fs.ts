// One flush of a whole file system (Linux `syncfs(2)`, through coreutils' `sync -f`), for a restore
// that writes many files: it writes back every dirty file and commits the journal once, where an
// fsync per file and per folder makes the journal commit many times (DESIGN §10 "A large restore
// flushes its file system once"). Node has no binding for syncfs, hence the process. Only where the
// kernel reports write-back errors through syncfs (Linux 5.8 and later) and little else waits for
// write-back; elsewhere, or when the program is missing or fails, the caller flushes file by file.
import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
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

/** Written files from which one flush of the file system beats an fsync per file and folder (a process start, ~2–20 ms). */
const AT_ONCE_FROM_FILES = 64;
/** Other data waiting for write-back that a flush at once may take along, at least (see worthSyncingFileSystem). */
const OTHERS_PENDING_MAX = 8 * 1024 * 1024;

/**
 * Whether a restore writing `files` files of `bytes` bytes should flush its file system once: many
 * files, a trusted syncfs, and little else waiting for write-back on this machine — syncfs writes
 * all of it, so a restore right after a large write elsewhere (a build, a checkout) would wait for
 * that too, where an fsync per file waits for its own files only. Read before placing.
 */
export function worthSyncingFileSystem(files: number, bytes: number, pendingBytes: () => number | undefined = pendingWriteback): boolean {
  if (files < AT_ONCE_FROM_FILES || !canSyncFileSystem()) return false;
  const pending = pendingBytes();
  return pending !== undefined && pending <= Math.max(bytes, OTHERS_PENDING_MAX);
}

/** Bytes this machine has yet to write back (Dirty + Writeback of /proc/meminfo); undefined where unknown. */
function pendingWriteback(): number | undefined {
  try {
    return parsePendingWriteback(readFileSync('/proc/meminfo', 'latin1'));
  } catch {
    return undefined;
  }
}

/** Dirty + Writeback of a /proc/meminfo text, in bytes; undefined when either is missing. */
export function parsePendingWriteback(meminfo: string): number | undefined {
  const kb = (name: string) => new RegExp(`^${name}:\\s*(\\d+) kB$`, 'm').exec(meminfo)?.[1];
  const [dirty, writeback] = [kb('Dirty'), kb('Writeback')];
  return dirty === undefined || writeback === undefined ? undefined : (Number(dirty) + Number(writeback)) * 1024;
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
