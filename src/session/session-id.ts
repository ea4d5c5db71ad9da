// Session ids (DESIGN §2): validation and generation. Generated ids sort by creation time and carry
// enough randomness that many processes creating sessions at once never collide.
import { randomBytes } from 'node:crypto';
import { CkptError } from '../errors.js';

export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export function isValidSessionId(id: string): boolean {
  return SESSION_ID_PATTERN.test(id);
}

export function assertSessionId(id: string): string {
  if (!isValidSessionId(id)) {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `invalid session id ${JSON.stringify(id)}: use 1-128 letters, digits, '_' or '-', starting with a letter or digit`,
      { id },
    );
  }
  return id;
}

/** `<UTC yyyymmdd-hhmmss>-<8 hex>`: readable, time-ordered, and 32 random bits against collisions. */
export function generateSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(4).toString('hex')}`;
}

const GENERATED = /^\d{8}-\d{6}-([0-9a-f]{8})$/;
const AGENT_LINKED = /^[a-z][a-z0-9]*-([0-9a-f]{8}[0-9A-Za-z_-]*)$/;

/**
 * The part of an id people type and read, like git's short hashes (DESIGN §10 "Short session ids"):
 * the random part of a generated id (`20261202-005836-e460fbc0` -> `e460fbc0`), the agent's own id of
 * an agent-linked one when it starts with 8 hex digits as uuids do (`claude-2b7c3f9e-…` -> `2b7c3f9e-…`);
 * undefined for any other id (`feature-login-page`).
 */
export function sessionIdTail(id: string): string | undefined {
  return GENERATED.exec(id)?.[1] ?? AGENT_LINKED.exec(id)?.[1];
}

/** What to show for an id where space is short: the first 8 characters of its tail, else the id. */
export function shortSessionId(id: string): string {
  const tail = sessionIdTail(id);
  return tail === undefined ? id : tail.slice(0, 8);
}
