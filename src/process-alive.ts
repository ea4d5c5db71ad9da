// Whether a process exists, for the daemon's claim (daemon/daemon-files.ts) and the thin hook client
// (hooks/client/hook-client.ts). A leaf: Node's `process` only, no ckpt import, so the hook client,
// which must not load the engine, can share it.

/** True when a process with this pid exists (EPERM: it exists but belongs to someone else). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
