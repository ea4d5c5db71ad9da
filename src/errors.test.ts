import { describe, expect, it } from 'vitest';
import { CkptError, ERROR_CODES, exitCodeOf, httpStatusOf, toCkptError } from './errors.js';

describe('errors', () => {
  it('maps every code once to the exit code and HTTP status of DESIGN §7', () => {
    expect(exitCodeOf(new CkptError('INVALID_ARGUMENT', 'x'))).toBe(2);
    expect(exitCodeOf(new CkptError('SESSION_NOT_FOUND', 'x'))).toBe(3);
    expect(httpStatusOf(new CkptError('TAG_PRUNED', 'x'))).toBe(410);
    expect(exitCodeOf(new CkptError('DRIFT', 'x'))).toBe(4);
    expect(exitCodeOf(new CkptError('BLOB_CORRUPT', 'x'))).toBe(5);
    expect(httpStatusOf(new CkptError('BLOB_TOO_LARGE', 'x'))).toBe(413);
    expect(exitCodeOf(new CkptError('LOCKED', 'x'))).toBe(7);
    expect(httpStatusOf(new CkptError('LOCKED', 'x'))).toBe(423);
    expect(exitCodeOf(new CkptError('IO', 'x'))).toBe(6);
    expect(exitCodeOf(new Error('plain'))).toBe(1);
    expect(httpStatusOf(new CkptError('UNAUTHORIZED', 'x'))).toBe(401);
    expect(httpStatusOf(new CkptError('FORBIDDEN', 'x'))).toBe(403);
    expect(exitCodeOf(new CkptError('TOKEN_INVALID', 'x'))).toBe(2);
    expect(httpStatusOf(new CkptError('TOKEN_STALE', 'x'))).toBe(409);
    expect(exitCodeOf(new CkptError('WRONG_MACHINE', 'x'))).toBe(4);
    expect(httpStatusOf(new CkptError('WRONG_MACHINE', 'x'))).toBe(409);
    expect(httpStatusOf(new CkptError('LIMIT_REACHED', 'x'))).toBe(429);
    expect(exitCodeOf(new CkptError('LIMIT_REACHED', 'x'))).toBe(7);
    expect(Object.keys(ERROR_CODES)).toHaveLength(21);
  });

  it('wraps errno errors as IO and says whether they are retryable', () => {
    const enospc = Object.assign(new Error('no space'), { code: 'ENOSPC', syscall: 'write', path: '/x' });
    const wrapped = toCkptError(enospc, 'writing blob');
    expect(wrapped.code).toBe('IO');
    expect(wrapped.data).toMatchObject({ errno: 'ENOSPC', retryable: true });
    expect(wrapped.message).toContain('writing blob');
    expect(toCkptError(new TypeError('bug')).code).toBe('INTERNAL');
  });

  it('maps an unwrapped errno error the way it prints: IO, exit 6, HTTP 503 (issue 10 item 7)', () => {
    for (const code of ['ELOOP', 'EEXIST', 'ENAMETOOLONG', 'ENOTDIR']) {
      const raw = Object.assign(new Error(code), { code, syscall: 'open', path: '/x' });
      expect(toCkptError(raw).code).toBe('IO');
      expect(exitCodeOf(raw)).toBe(exitCodeOf(toCkptError(raw)));
      expect(exitCodeOf(raw)).toBe(6);
      expect(httpStatusOf(raw)).toBe(503);
    }
  });
});
