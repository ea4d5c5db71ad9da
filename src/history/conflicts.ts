// Conflicts and ownership (issue 15, vibekit's cross-chat conflicts): which session last wrote a
// path (the workspace's owner index), and every `conflict` event recorded by the sessions of a
// workspace — a capture that found a path another session had written since this one recorded it.
import type { ConflictEvent, EventBase } from '../format/event.js';
import { readOwners, type OwnerEntry } from '../capture/owner-index.js';
import type { SessionHandle } from '../session/session-handle.js';
import type { SessionStore } from '../session/session-store.js';
import { resolveRecorded } from '../workspace/resolve-path.js';

export interface ConflictEntry {
  /** The session that found the conflict (its capture was about to overwrite another session's write). */
  session: string;
  path: string;
  otherSession: string;
  at: string;
  seq: number;
  /** Image keys: what this session had recorded, and what it found. */
  expected: string | null;
  actual: string | null;
}

/** The conflicts a session recorded, in log order. */
export function conflictsIn(sessionId: string, events: readonly EventBase[]): ConflictEntry[] {
  return events
    .filter((e): e is ConflictEvent => e.type === 'conflict' && typeof e.path === 'string' && typeof e.otherSession === 'string')
    .map((e) => ({ session: sessionId, path: e.path, otherSession: e.otherSession, at: e.at, seq: e.seq, expected: e.expected ?? null, actual: e.actual ?? null }));
}

/** Every conflict recorded by any session of the workspace, oldest first. */
export async function workspaceConflicts(sessions: SessionStore): Promise<ConflictEntry[]> {
  const all: ConflictEntry[] = [];
  for (const meta of await sessions.list()) all.push(...conflictsIn(meta.id, await (await sessions.get(meta.id)).events()));
  return all.sort((a, b) => a.at.localeCompare(b.at) || a.session.localeCompare(b.session) || a.seq - b.seq);
}

export interface OwnerReport {
  path: string;
  /** The session that last recorded writing the path, or null when no session has. */
  owner: (OwnerEntry & { state: string }) | null;
}

/** Which session last wrote `input` (a path beneath the root, relative to `cwd` or the root). */
export async function ownerOf(session: SessionHandle, input: string, cwd?: string): Promise<OwnerReport> {
  const { rel } = await resolveRecorded(session.workspaceRoot, input, cwd ?? session.workspaceRoot);
  const entry = (await readOwners(session))[rel];
  // A copy: the index's records are shared with later reads of the same bytes (owner-index.ts).
  return { path: rel, owner: entry && typeof entry.session === 'string' ? { ...entry } : null };
}
