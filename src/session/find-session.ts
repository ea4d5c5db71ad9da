// Naming a session by a unique prefix of its id, as git accepts short hashes (DESIGN §10 "CLI"): the
// exact id wins; else the one session whose id starts with the text; several are INVALID_ARGUMENT
// listing them, none is SESSION_NOT_FOUND.
import { CkptError, isCkptError } from '../errors.js';
import type { SessionHandle } from './session-handle.js';
import type { SessionStore } from './session-store.js';

export async function findSession<S extends SessionHandle>(sessions: SessionStore<S>, idOrPrefix: string): Promise<S> {
  try {
    return await sessions.get(idOrPrefix);
  } catch (err) {
    if (!isCkptError(err, 'SESSION_NOT_FOUND')) throw err;
    const candidates = (await sessions.list()).map((m) => m.id).filter((id) => id.startsWith(idOrPrefix));
    if (candidates.length === 1) return sessions.get(candidates[0]!);
    if (candidates.length > 1) {
      throw new CkptError('INVALID_ARGUMENT', `session prefix ${JSON.stringify(idOrPrefix)} is ambiguous: ${candidates.join(', ')}`, {
        session: idOrPrefix,
        candidates,
      });
    }
    throw err;
  }
}
