// Whether a pid is a live process of ours, for the daemon's claim (daemon/daemon-files.ts) and the
// thin hook client (hooks/client/hook-client.ts), which send the store's bearer token to the claimed
// port; and whether a lock file's holder is gone (storage/fs/fs-lock.ts). A leaf: Node's built-ins
// only, no ckpt import, so the hook client, which must not load the engine, can share it.
import { readFileSync } from 'node:fs';

/** Where /proc exists (Linux), a zombie can be told from a live process; elsewhere signal 0 is all there is. */
const HAS_PROC = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

/**
 * True when a process with this pid runs and is ours. A pid we may not signal (EPERM) belongs to
 * another user: never our daemon (it runs as us), and trusting it would hand the token to whatever
 * listens on the claimed port. A zombie (killed, not yet reaped by its parent — a container whose
 * PID 1 does not reap) runs nothing, and kept every new daemon out until it was reaped.
 */
export function processAlive(pid: number): boolean {
  return processStatus(pid) !== 'gone';
}

/**
 * `gone` (no process of ours: none, another user's, a zombie — Z or X in /proc/<pid>/stat), `stopped`
 * (state T or t: Ctrl-Z on a foreground `ckpt serve`, SIGSTOP, a debugger — alive, so its claim holds
 * and no second daemon may start, but it answers nothing while the kernel still accepts connections
 * on its port: the hook client does not wait on it, a round-6 probe saw every hook of every agent wait
 * out the client's two-minute answer timeout), else `running`. One signal and one /proc read.
 */
export function processStatus(pid: number): 'gone' | 'stopped' | 'running' {
  try {
    process.kill(pid, 0);
  } catch {
    return 'gone'; // ESRCH: none; EPERM: someone else's
  }
  const state = HAS_PROC ? procState(pid) : undefined; // a stat that cannot be read says nothing
  if (state === 'Z' || state === 'X' || state === 'gone') return 'gone';
  return state === 'T' || state === 't' ? 'stopped' : 'running';
}

/**
 * True only when no process runs with this pid (ESRCH) or it is a zombie: a lock's holder that can
 * hold nothing any more. Unlike processStatus, a process we may not signal (EPERM) is alive here —
 * another user's process holding a lock in our store is still holding it.
 */
export function pidGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  const state = HAS_PROC ? procState(pid) : undefined;
  return state === 'Z' || state === 'X' || state === 'gone';
}

/** The state letter in /proc/<pid>/stat ('gone' when it vanished; undefined when it cannot be read). */
function procState(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : undefined; // gone since the signal
  }
  // `pid (comm) S …`: comm may hold spaces and parentheses, so the state follows the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}
