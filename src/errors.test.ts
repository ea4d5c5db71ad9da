import { describe, expect, it } from 'vitest';
import { CkptError, ERROR_CODES, exitCodeOf, httpStatusOf, isNotWritable, toCkptError, type ErrorCode } from './errors.js';

/** DESIGN §7, code by code: [code, CLI exit code, HTTP status] (UNAUTHORIZED and FORBIDDEN: the daemon's own refusals, §10). */
const SECTION_7: [ErrorCode, number, number][] = [
  ['INVALID_ARGUMENT', 2, 400],
  ['NOT_FOUND', 3, 404],
  ['SESSION_NOT_FOUND', 3, 404],
  ['TAG_NOT_FOUND', 3, 404],
  ['BLOB_NOT_FOUND', 3, 404],
  ['TAG_PRUNED', 3, 410],
  ['PATH_ESCAPE', 2, 400],
  ['DRIFT', 4, 409],
  ['CONFLICT', 4, 409],
  ['BLOB_CORRUPT', 5, 500],
  ['LOG_CORRUPT', 5, 500],
  ['BLOB_TOO_LARGE', 2, 413],
  ['LOCKED', 7, 423],
  ['IO', 6, 503],
  ['TOKEN_INVALID', 2, 400],
  ['TOKEN_STALE', 4, 409],
  ['WRONG_MACHINE', 4, 409],
  ['LIMIT_REACHED', 7, 429],
  ['INTERNAL', 1, 500],
  ['UNAUTHORIZED', 2, 401],
  ['FORBIDDEN', 2, 403],
];

describe('errors', () => {
  it('maps every code once to the exit code and HTTP status of DESIGN §7', () => {
    for (const [code, exit, status] of SECTION_7) {
      expect(exitCodeOf(new CkptError(code, 'x')), code).toBe(exit);
      expect(httpStatusOf(new CkptError(code, 'x')), code).toBe(status);
    }
    expect(SECTION_7.map(([code]) => code).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    expect(exitCodeOf(new Error('plain'))).toBe(1);
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

  it('tells a store this process cannot write (EROFS, EACCES, EPERM) from other IO errors (a reader goes on without a lock)', () => {
    const io = (code: string) => toCkptError(Object.assign(new Error(code), { code, syscall: 'open', path: '/s/x.ckpt-lock' }), 'lock x');
    for (const code of ['EROFS', 'EACCES', 'EPERM']) expect(isNotWritable(io(code))).toBe(true);
    for (const code of ['ENOSPC', 'EIO', 'ENOENT']) expect(isNotWritable(io(code))).toBe(false);
    expect(isNotWritable(new CkptError('LOCKED', 'busy', { errno: 'EACCES' }))).toBe(false);
  });
});
