import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertSessionId, generateSessionId, isValidSessionId, sessionIdTail, shortSessionId } from './session-id.js';

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
    // 32 random bits per second: 200 ids in one second collide with a chance of ~5e-6 (1,000: ~1e-4,
    // which a CI run hit once).
    const ids = new Set(Array.from({ length: 200 }, () => generateSessionId()));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(isValidSessionId(id)).toBe(true);
  });

  it('short ids: the random part of a generated id, the agent id of a linked one, none for others', () => {
    expect(sessionIdTail('20261202-005836-e460fbc0')).toBe('e460fbc0');
    expect(shortSessionId('20261202-005836-e460fbc0')).toBe('e460fbc0');
    expect(sessionIdTail('claude-2b7c3f9e-1d4a-4c8e-9f20-6a5b1c0d7e31')).toBe('2b7c3f9e-1d4a-4c8e-9f20-6a5b1c0d7e31');
    expect(shortSessionId('claude-2b7c3f9e-1d4a-4c8e-9f20-6a5b1c0d7e31')).toBe('2b7c3f9e');
    for (const id of ['alpha-1111', 'fix-parser', 'feature-login-page', 'ws1', '20261202-005836-E460FBC0']) {
      expect(sessionIdTail(id)).toBeUndefined();
      expect(shortSessionId(id)).toBe(id);
    }
    fc.assert(fc.property(fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(253402300799000) }), (d) => {
      const id = generateSessionId(d);
      expect(shortSessionId(id)).toBe(id.slice(-8));
    }));
  });
});
