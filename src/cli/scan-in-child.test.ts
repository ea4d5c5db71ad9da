import { describe, expect, it } from 'vitest';
import { childError } from './scan-in-child.js';

describe('the error of a child scan', () => {
  it("is the CLI's JSON error with its code and data", () => {
    const e = childError('progress…\n{"error":{"code":"LOCKED","message":"lock x not acquired","data":{"key":"x"}}}\n', 7, null);
    expect([e.code, e.message, e.data]).toEqual(['LOCKED', 'lock x not acquired', { key: 'x' }]);
  });

  it('is IO naming the exit or the signal when the child said nothing ckpt can read', () => {
    expect(childError('Segmentation fault\n', 139, null)).toMatchObject({ code: 'IO', data: { exitCode: 139 } });
    expect(childError('', null, 'SIGKILL').message).toContain('killed (SIGKILL)');
    expect(childError('{"error":{"code":"NOPE"', 1, null).code).toBe('IO');
    expect(childError('{"error":{"code":"NOPE","message":"m"}}', 1, null).code).toBe('IO');
  });
});
