// The scan index is read back from the store: arbitrary bytes and mutations of a valid index either
// decode to an index whose every path is a clean workspace-relative path, or fail LOG_CORRUPT (the
// scan then rebuilds it) — never another error, never a crash.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CkptError } from '../errors.js';
import { isStoredPath } from '../format/stored-path.js';
import { HASH_SHA256, KIND_DIR, KIND_FILE, KIND_SYMLINK, ScanIndex } from './scan-index.js';

function valid(): Buffer {
  const idx = new ScanIndex(4, 1_000);
  const d = idx.push('src', KIND_DIR, { size: 0, mtimeMs: 1, ctimeMs: 1, ino: 1, mode: 0o40755 });
  idx.flags[d] = 0;
  const f = idx.push('src/a.ts', KIND_FILE, { size: 3, mtimeMs: 2, ctimeMs: 2, ino: 2, mode: 0o100644 });
  idx.setHash(f, HASH_SHA256, 'c'.repeat(64));
  const l = idx.push('link', KIND_SYMLINK, { size: 1, mtimeMs: 3, ctimeMs: 3, ino: 3, mode: 0o120777 });
  idx.targets.set(l, '../x');
  return idx.encode();
}

function check(data: Buffer): void {
  let idx: ScanIndex;
  try {
    idx = ScanIndex.decode(data);
  } catch (err) {
    expect(err).toBeInstanceOf(CkptError);
    expect((err as CkptError).code).toBe('LOG_CORRUPT');
    return;
  }
  for (const p of idx.paths) expect(isStoredPath(p)).toBe(true);
  for (const p of idx.unbaselined) expect(isStoredPath(p)).toBe(true);
}

describe('ScanIndex.decode on untrusted bytes', () => {
  it('decodes the valid index', () => {
    expect(ScanIndex.decode(valid()).paths).toEqual(['src', 'src/a.ts', 'link']);
  });

  it('arbitrary bytes: LOG_CORRUPT or a clean index', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => check(Buffer.from(bytes))), { numRuns: 500 });
  });

  it('mutated valid indexes: LOG_CORRUPT or a clean index', () => {
    const base = valid();
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(base.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }), (edits) => {
        const data = Buffer.from(base);
        for (const [at, v] of edits) data[at] = v;
        check(data);
      }),
      { numRuns: 1000 },
    );
  });

  it('a forged path segment is LOG_CORRUPT', () => {
    const data = valid();
    const at = data.indexOf(Buffer.from('src/a.ts'));
    data.write('../a.ts', at, 'utf8'); // keep the length: `src/a.ts` -> `../a.tss`
    expect(() => ScanIndex.decode(data)).toThrowError(expect.objectContaining({ code: 'LOG_CORRUPT' }));
  });
});
