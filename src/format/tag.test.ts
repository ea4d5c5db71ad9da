import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareTags, formatTag, isTag, parseTag, type Tag } from './tag.js';

const turnTag = fc.record({ kind: fc.constant('turn' as const), turn: fc.nat(99999), k: fc.nat(9999) });
const seqTag = fc.record({ kind: fc.constant('seq' as const), seq: fc.nat(10_000_000) });

describe('tags', () => {
  it('parses the three forms', () => {
    expect(parseTag('3')).toEqual({ kind: 'turn', turn: 3, k: 0 });
    expect(parseTag('3.10')).toEqual({ kind: 'turn', turn: 3, k: 10 });
    expect(parseTag('@42')).toEqual({ kind: 'seq', seq: 42 });
    expect(formatTag(parseTag('3.0'))).toBe('3');
  });

  it.each(['', '-1', '01', '3.', '.3', '3.01', '@', '@-1', '@01', 'a', '3.4.5', ' 3', '1e3', '3.x'])(
    'rejects %j with INVALID_ARGUMENT',
    (text) => {
      expect(() => parseTag(text)).toThrowError(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
      expect(isTag(text)).toBe(false);
    },
  );

  it('round-trips format -> parse (property)', () => {
    fc.assert(
      fc.property(fc.oneof(turnTag, seqTag), (tag: Tag) => {
        expect(parseTag(formatTag(tag))).toEqual(tag);
      }),
    );
  });

  it('orders numerically, not lexically (property)', () => {
    expect(compareTags(parseTag('10'), parseTag('2'))).toBeGreaterThan(0);
    expect(compareTags(parseTag('3.10'), parseTag('3.9'))).toBeGreaterThan(0);
    expect(compareTags(parseTag('3'), parseTag('3.0'))).toBe(0);
    fc.assert(
      fc.property(turnTag, turnTag, (a, b) => {
        const c = compareTags(a, b);
        const expected = a.turn !== b.turn ? Math.sign(a.turn - b.turn) : Math.sign(a.k - b.k);
        expect(Math.sign(c)).toBe(expected);
        expect(Math.sign(compareTags(b, a))).toBe(-expected || 0);
      }),
    );
  });

  it('refuses to order a turn tag against an @seq tag without a log', () => {
    expect(() => compareTags(parseTag('1'), parseTag('@1'))).toThrowError(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});
