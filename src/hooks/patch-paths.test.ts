// apply_patch headers: adds, updates, deletes and moves, relative or absolute, CRLF, and text that only
// looks like a header inside a hunk (a `+*** Add File:` line is content, not a file).
import { describe, expect, it } from 'vitest';
import { patchPaths } from './patch-paths.js';

describe('patchPaths', () => {
  it('names every file a patch adds, updates, deletes or moves to', () => {
    const patch = ['*** Begin Patch', '*** Add File: b.txt', '+bravo', '*** Update File: /w/a.txt', '*** Move to: sub/c.txt', '@@', '-alpha', '+ALPHA', '*** Delete File: old dir/x y.txt', '*** End Patch', ''].join('\n');
    expect(patchPaths(patch)).toEqual({ paths: ['b.txt', '/w/a.txt', 'sub/c.txt', 'old dir/x y.txt'], isPatch: true });
  });

  it('reads CRLF patches, trims header paths, keeps each path once', () => {
    expect(patchPaths('*** Begin Patch\r\n*** Update File:  a.txt \r\n@@\r\n-a\r\n+b\r\n*** Update File: a.txt\r\n*** End Patch\r\n').paths).toEqual(['a.txt']);
  });

  it('content lines that look like headers are not files', () => {
    const patch = ['*** Begin Patch', '*** Add File: notes.md', '+*** Add File: evil.txt', '+ *** Delete File: x', '*** End Patch'].join('\n');
    expect(patchPaths(patch).paths).toEqual(['notes.md']);
  });

  it('text that is no patch says so', () => {
    expect(patchPaths('echo hello')).toEqual({ paths: [], isPatch: false });
    expect(patchPaths('*** Begin Patch\n*** End Patch\n')).toEqual({ paths: [], isPatch: true });
  });
});
