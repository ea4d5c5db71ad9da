// Stops the daemon a store names in its claim (store/daemon/daemon.json), started detached by `init`
// or a hook, and waits until it has exited: a daemon shutting down still writes into the store, so a
// test that removes the store right after SIGTERM races it (ENOTEMPTY). Shared by the agent suites,
// `ckpt init` tests and the agent benchmark; never signals the calling process (an in-process daemon).
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

export async function stopStoreDaemon(store: string): Promise<void> {
  const claim = await readFile(join(store, 'daemon', 'daemon.json'), 'utf8').catch(() => undefined);
  let pid: number | undefined;
  try {
    pid = claim ? (JSON.parse(claim) as { pid?: number }).pid : undefined;
  } catch {
    return; // a claim being written: nothing we can name
  }
  if (!pid || pid === process.pid) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone meanwhile */
  }
}

/** Removes a test's folder after its store's daemon stopped; retries while a late hook still writes. */
export async function removeAgentWorld(base: string, store: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await stopStoreDaemon(store);
    try {
      await rm(base, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      return;
    } catch (e) {
      if (attempt >= 5) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
