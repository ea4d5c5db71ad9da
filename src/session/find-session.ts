// Naming a session by a unique prefix of its id, as git accepts short hashes (DESIGN §10 "CLI",
// "Short session ids"): the exact id wins; else the one session whose id starts with the text; else
// the one whose short part (the random part of a generated id: `e46` for `20261202-005836-e460fbc0`)
// starts with it. Several are INVALID_ARGUMENT listing them, none is SESSION_NOT_FOUND.
import { CkptError, isCkptError } from '../errors.js';
import type { SessionHandle } from './session-handle.js';
import { sessionIdTail, shortSessionId } from './session-id.js';
import type { SessionStore } from './session-store.js';

export async function findSession<S extends SessionHandle>(sessions: SessionStore<S>, idOrPrefix: string): Promise<S> {
  try {
    return await sessions.get(idOrPrefix);
  } catch (err) {
    if (!isCkptError(err, 'SESSION_NOT_FOUND')) throw err;
    const ids = (await sessions.list()).map((m) => m.id);
    // A prefix of the whole id first (what was accepted before short ids), then of the short part.
    let candidates = ids.filter((id) => id.startsWith(idOrPrefix));
    if (candidates.length === 0) candidates = ids.filter((id) => sessionIdTail(id)?.startsWith(idOrPrefix));
    if (candidates.length === 1) return sessions.get(candidates[0]!);
    if (candidates.length > 1) {
      const listed = candidates.slice(0, 10).map((id) => `${shortSessionId(id)} (${id})`);
      throw new CkptError(
        'INVALID_ARGUMENT',
        `session ${JSON.stringify(idOrPrefix)} is ambiguous: it could be ${listed.join(', ')}${candidates.length > 10 ? ` and ${candidates.length - 10} more` : ''}; give more characters`,
        { session: idOrPrefix, candidates },
      );
    }
    throw err;
  }
}
