// Test setup through the library, in this process: the steps before the one a CLI test is about
// (session, turns, captures, settles) cost no child process, so the end-to-end tests stay fast.
import { openStore, type Session } from '../../src/index.js';

export async function libSession(storeDir: string, root: string, id: string): Promise<Session> {
  const store = await openStore({ dir: storeDir });
  return (await store.openWorkspace(root)).create({ id, baseline: false }); // as the CLI tests were written: the first scan takes the baseline
}

/** The session `id` of the workspace at `root`, opened again (after CLI processes changed it). */
export async function openLibSession(storeDir: string, root: string, id: string): Promise<Session> {
  const store = await openStore({ dir: storeDir });
  return (await store.openWorkspace(root)).get(id);
}
