// Test setup through the library, in this process: the steps before the one a CLI test is about
// (session, turns, captures, settles) cost no child process, so the end-to-end tests stay fast; and
// the per-test world (store, workspace, session) of the library's unit tests.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { openStore, type Session, type Store, type Workspace } from '../../src/index.js';
import { makeTempDirs, type TempDirs } from './temp.js';

export async function libSession(storeDir: string, root: string, id: string): Promise<Session> {
  const store = await openStore({ dir: storeDir });
  return (await store.openWorkspace(root)).create({ id, baseline: false }); // as the CLI tests were written: the first scan takes the baseline
}

/** The session `id` of the workspace at `root`, opened again (after CLI processes changed it). */
export async function openLibSession(storeDir: string, root: string, id: string): Promise<Session> {
  const store = await openStore({ dir: storeDir });
  return (await store.openWorkspace(root)).get(id);
}

export interface LibWorld {
  dirs: TempDirs;
  store: Store;
  ws: Workspace;
  /** A new session of `ws` (unset with `{ session: false }`). */
  session: Session;
}

/**
 * A fresh store, workspace and (unless `session: false`) session for each test of the file, made in a
 * beforeEach and removed in an afterEach: `set` receives each test's world (call at module level).
 */
export function useLibWorld(prefix: string, set: (world: LibWorld) => void, options: { session?: boolean } = {}): void {
  let dirs: TempDirs | undefined;
  beforeEach(async () => {
    dirs = await makeTempDirs(prefix);
    const store = await openStore({ dir: dirs.store });
    const ws = await store.openWorkspace(dirs.workspace);
    set({ dirs, store, ws, session: options.session === false ? (undefined as unknown as Session) : await ws.create() });
  });
  afterEach(() => dirs?.cleanup());
}

/**
 * useLibWorld for tests of what a session recorded, with their verbs: `w(rel)`, a path in the
 * workspace; `agentWrite`, a write by an agent's tool (writeAsAgent); `versions`, a file written
 * outside the agent and then changed by it once in each of the following turns.
 */
export function useAgentWorld(prefix: string, set: (world: LibWorld) => void) {
  let world: LibWorld;
  useLibWorld(prefix, (made) => {
    world = made;
    set(made);
  });
  const w = (rel: string): string => join(world.dirs.workspace, rel);
  const agentWrite = (rel: string, content: string | null, tool?: string): Promise<void> => writeAsAgent(world.session, world.dirs.workspace, rel, content, tool);
  /** `first` written to `rel` before turn 1, then `byAgent[i]` by the agent in turn i + 1. */
  const versions = async (rel: string, first: string, ...byAgent: string[]): Promise<void> => {
    await writeFile(w(rel), first);
    for (const content of byAgent) {
      await world.session.turn();
      await agentWrite(rel, content);
    }
  };
  return { w, agentWrite, versions };
}

/** What an agent's write tool does to `rel` under `root`: capture, write (null: delete), settle. */
export async function writeAsAgent(session: Session, root: string, rel: string, content: string | null, tool = 'Write'): Promise<void> {
  await session.capture([rel], { tool });
  if (content === null) await rm(join(root, rel));
  else await writeFile(join(root, rel), content);
  await session.settle([rel]);
}
