import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertSessionId, generateSessionId, isValidSessionId } from './session-id.js';

describe('session ids', () => {
  it('accepts exactly the DESIGN pattern (property)', () => {
    const alnum = fc.constantFrom(...'abcXYZ019');
    const rest = fc.constantFrom(...'abcXYZ019_-');
    fc.assert(
      fc.property(alnum, fc.array(rest, { maxLength: 127 }), (first, tail) => {
        expect(isValidSessionId(first + tail.join(''))).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.string(), (s) => {
        const expected = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(s);
        expect(isValidSessionId(s)).toBe(expected);
      }),
    );
  });

  it.each(['', '-a', '_a', 'a/b', '../x', 'a b', 'é', 'a'.repeat(129), 'a.b'])('rejects %j', (id) => {
    expect(() => assertSessionId(id)).toThrowError(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('generates valid, distinct ids', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => generateSessionId()));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(isValidSessionId(id)).toBe(true);
  });
});
