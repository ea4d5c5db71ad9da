import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allStoredPaths, isStoredPath } from './stored-path.js';

describe('allStoredPaths', () => {
  it('agrees with isStoredPath on every path of a NUL-joined list', () => {
    const piece = fc.constantFrom('a', 'b', '/', '.', '..', '\\', 'é', ' ');
    const path = fc.array(piece, { maxLength: 7 }).map((p) => p.join(''));
    fc.assert(
      fc.property(fc.array(path, { minLength: 1, maxLength: 6 }), (paths) => {
        expect(allStoredPaths(paths.join('\0'), paths)).toBe(paths.every(isStoredPath));
      }),
      { numRuns: 5000 },
    );
  });

  it('rejects each kind of unclean path wherever it sits in the list', () => {
    for (const bad of ['', '/a', 'a/', 'a//b', '.', '..', './a', '../a', 'a/.', 'a/..', 'a/./b', 'a/../b', 'x'.repeat(65_537)]) {
      for (const paths of [[bad], [bad, 'ok'], ['ok', bad], ['ok', bad, 'ok/x']]) expect(allStoredPaths(paths.join('\0'), paths), JSON.stringify(bad)).toBe(false);
    }
    expect(allStoredPaths('a\0b/c\0.d/..e\0a\\b', ['a', 'b/c', '.d/..e', 'a\\b'])).toBe(true);
  });
});
