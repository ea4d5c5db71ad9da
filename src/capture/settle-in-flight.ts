// The end of an agent's turn (its `Stop`): every tool call of the turn has ended, so a capture still
// in flight — whose after-tool event never came (a failed call of an agent that sends none, an HTTP
// hook lost while the daemon was down) — is settled with what its paths hold now. Left in flight, it
// stayed so for good: `status` listed it unsettled, and later captures of the path took a hand edit
// of it for the agent's own write in progress (DESIGN §10 "opencode's failed tool calls are settled").
import type { SessionHandle } from '../session/session-handle.js';
import { loadHotState } from '../session/hot-snapshot.js';
import { settle } from './settle.js';

export interface SettledInFlight {
  /** The tags of the captures settled (newest first). */
  tags: string[];
  paths: string[];
}

/**
 * Settles the paths still in flight against the last recent capture that recorded each (the hot
 * state's RECENT_CAPTURES; an older one is left as it is). Run after the turn's end scan, which has
 * recorded whatever those calls changed.
 */
export async function settleInFlight(session: SessionHandle): Promise<SettledInFlight> {
  const state = await loadHotState(session);
  const open = new Set<string>();
  for (const [path, image] of state.known) if (image === null) open.add(path);
  const out: SettledInFlight = { tags: [], paths: [] };
  for (const c of [...state.recent].reverse()) {
    if (open.size === 0) break;
    const paths = c.files.map((f) => f.path).filter((p) => open.delete(p));
    if (paths.length === 0) continue;
    const r = await settle(session, paths, { tag: c.tag });
    if (r.tag) out.tags.push(r.tag);
    out.paths.push(...paths);
  }
  return out;
}
