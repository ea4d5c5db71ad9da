import { describe, expect, it } from 'vitest';
import { isCkptError } from '../errors.js';
import { FLAG_STAT_UNKNOWN, HASH_GIT, HASH_SHA256, KIND_DIR, KIND_FILE, KIND_GONE, KIND_SKIPPED, KIND_SYMLINK, ScanIndex } from './scan-index.js';

const st = (n: number) => ({ size: n, mtimeMs: 1_700_000_000_000.123 + n, ctimeMs: 1_700_000_000_001.5 + n, ino: 2 ** 40 + n, mode: 0o100644 });

describe('scan index', () => {
  it('round-trips every column, targets, reasons, rules and odd paths; grows past its capacity', () => {
    const idx = new ScanIndex(1, 1234.5);
    idx.push('dir', KIND_DIR, undefined);
    idx.flags[0] = 0;
    const f = idx.push('dir/ünï cødé\nname.ts', KIND_FILE, st(1));
    idx.setHash(f, HASH_SHA256, 'ab'.repeat(32));
    const g = idx.push('git.txt', KIND_FILE, st(2));
    idx.setHash(g, HASH_GIT, 'cd'.repeat(20));
    const l = idx.push('link', KIND_SYMLINK, st(3));
    idx.targets.set(l, '../target');
    const s = idx.push('big.bin', KIND_SKIPPED, st(4));
    idx.why.set(s, 'too-large');
    idx.push('unknown', KIND_FILE, undefined);
    for (let i = 0; i < 40; i++) idx.push(`many/${i}`, KIND_FILE, st(10 + i));
    idx.rules.set('', '["x"]');
    const back = ScanIndex.decode(idx.encode());
    expect(back.count).toBe(idx.count);
    expect(back.timeMs).toBe(1234.5);
    // The header alone tells the time (a capture's look reads 48 bytes, not the whole index).
    expect(ScanIndex.headerTime(idx.encode().subarray(0, 48))).toBe(1234.5);
    expect(ScanIndex.headerTime(Buffer.from('CKSI'))).toBeUndefined();
    expect(ScanIndex.headerTime(Buffer.alloc(48))).toBeUndefined();
    expect(back.paths).toEqual(idx.paths);
    expect(back.hashHex(f)).toBe('ab'.repeat(32));
    expect(back.hashHex(g)).toBe('cd'.repeat(20));
    expect(back.targets.get(l)).toBe('../target');
    expect(back.why.get(s)).toBe('too-large');
    expect(back.flags[5]).toBe(FLAG_STAT_UNKNOWN);
    expect(back.statEquals(f, st(1))).toBe(true);
    expect(back.statEquals(f, { ...st(1), ctimeMs: 0 })).toBe(false);
    expect(back.slotOf('many/39')).toBe(idx.count - 1);
    expect(back.rules.get('')).toBe('["x"]');
  });

  it('compact() drops vanished entries; decode fails closed on garbage', () => {
    const idx = new ScanIndex(4, 1);
    idx.push('a', KIND_FILE, st(1));
    idx.push('b', KIND_GONE, st(2));
    const c = idx.push('c', KIND_SYMLINK, st(3));
    idx.targets.set(c, 't');
    const compacted = idx.compact();
    expect(compacted.paths).toEqual(['a', 'c']);
    expect(compacted.targets.get(1)).toBe('t');
    const data = idx.encode();
    for (const bad of [Buffer.from('nope'), data.subarray(0, data.length - 1), Buffer.concat([Buffer.from('XXXX'), data.subarray(4)])]) {
      let err: unknown;
      try {
        ScanIndex.decode(bad);
      } catch (e) {
        err = e;
      }
      expect(isCkptError(err, 'LOG_CORRUPT')).toBe(true);
    }
    // An unaligned buffer decodes too.
    const shifted = Buffer.alloc(data.length + 3);
    data.copy(shifted, 3);
    expect(ScanIndex.decode(shifted.subarray(3)).paths).toEqual(['a', 'b', 'c']);
  });
});
