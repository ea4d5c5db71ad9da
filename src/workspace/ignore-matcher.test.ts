import fc from 'fast-check';
import ignore from 'ignore';
import { describe, expect, it } from 'vitest';
import { createIgnoreMatcher, ruleKey } from './ignore-matcher.js';

const NAMES = ['a', 'b', 'ab', 'a.o', 'x.S', 'Debug', 'git-add', '.git', 'sub'];
const segment = fc.oneof(fc.constantFrom(...NAMES), fc.constantFrom('*', '**', 'a*', '*.o', '?b', '[ab]', 'a\\*', ' a', 'a '));
const pattern = fc
  .tuple(fc.constantFrom('', '!', '\\!', '#', '\\#'), fc.constantFrom('', '/', '**/'), fc.array(segment, { minLength: 1, maxLength: 3 }), fc.constantFrom('', '/', '/**', ' ', '\r'))
  .map(([neg, lead, segs, tail]) => `${neg}${lead}${segs.join('/')}${tail}`);
const path = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 }).chain((parts) => fc.constantFrom(parts.join('/'), `${parts.join('/')}/`));
/** Keyed fillers, so the split (not the whole-text fallback) is what runs. */
const FILLERS = Array.from({ length: 10 }, (_, k) => `/filler${k}`);

describe('ignore matcher split by first segment', () => {
  it('answers as the ignore package does for the whole text', () => {
    for (const ignorecase of [false, true]) {
      fc.assert(
        fc.property(fc.array(pattern, { maxLength: 25 }), fc.array(path, { minLength: 1, maxLength: 30 }), (rules, paths) => {
          const text = [...FILLERS, ...rules, ...FILLERS.map((f) => `!${f}/keep`)].join('\n');
          const want = ignore({ allowRelativePaths: true, ignorecase }).add(text);
          const got = createIgnoreMatcher(text, ignorecase);
          for (const p of [...paths, 'filler3', 'filler3/keep', 'filler3/x/']) {
            const w = want.test(p);
            const g = got.test(p);
            expect({ p, ignored: g.ignored, unignored: g.unignored }).toEqual({ p, ignored: w.ignored, unignored: w.unignored });
          }
        }),
        { numRuns: 300 },
      );
    }
  });

  it('keys only rules anchored with a leading slash whose first segment is a plain name', () => {
    expect(ruleKey('/git-add')).toBe('git-add');
    expect(ruleKey('!/Debug/')).toBe('Debug');
    expect(ruleKey('/gitweb/static/gitweb.js')).toBe('gitweb');
    expect(ruleKey('/a ')).toBe('a');
    for (const unkeyed of ['*.o', 'a/b', '/git-core-*/?*', '/*', '/[ab]', '/\\#x', '\\!a', '/', '/ a', '#/a', '/./a']) expect(ruleKey(unkeyed), unkeyed).toBeUndefined();
  });
});
