// Opening a store, its workspace and a new session (with turn 1 started) — setup shared by the ops.
import { loadCkpt, need } from '../ckpt-api.js';
import type { OpenSession } from '../context.js';

export async function startSession(storeDir: string, root: string, title = 'bench'): Promise<OpenSession> {
  const ckpt = await loadCkpt();
  const store = await ckpt.openStore({ dir: storeDir });
  const ws = await need(store, 'openWorkspace', 'store')(root);
  // No baseline at creation: the figures measure the first scan themselves (scan-first) or need none.
  const session = await need(ws, 'createSession', 'workspace', ['create'])({ title, baseline: false });
  if (typeof session.turn === 'function') await session.turn({ messageCount: 1 });
  return { store, ws, session, storeDir };
}
