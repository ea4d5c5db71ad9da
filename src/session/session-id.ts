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
