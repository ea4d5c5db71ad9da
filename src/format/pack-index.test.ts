import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodePackIndex, encodePackIndex, type PackEntry } from './pack-index.js';

const id = (i: number): string => createHash('sha256').update(String(i)).digest('hex');

describe('pack index', () => {
  it('finds every entry by binary search and nothing else', () => {
    const entries: PackEntry[] = Array.from({ length: 5000 }, (_, i) => ({ id: id(i), offset: 4 + i * 100, length: 100 }));
    const index = decodePackIndex(encodePackIndex(entries, 4 + 5000 * 100));
    expect(index.count).toBe(5000);
    for (const e of entries) expect(index.find(e.id)).toEqual({ offset: e.offset, length: e.length });
    for (let i = 5000; i < 5200; i++) expect(index.find(id(i))).toBeUndefined();
    expect(index.find('nothex')).toBeUndefined();
    const listed = [...index.entries()].map((e) => e.id);
    expect(listed).toEqual([...listed].sort());
  });

  it('handles an empty index and rejects any flipped byte', () => {
    expect(decodePackIndex(encodePackIndex([], 4)).count).toBe(0);
    const buf = encodePackIndex([{ id: id(1), offset: 4, length: 10 }], 14);
    for (const at of [0, 5, 20, 1045, buf.length - 1]) {
      const bad = Buffer.from(buf);
      bad[at] = (bad[at] as number) ^ 0x40;
      expect(() => decodePackIndex(bad)).toThrow(expect.objectContaining({ code: 'BLOB_CORRUPT' }));
    }
    expect(() => decodePackIndex(buf.subarray(0, 100))).toThrow(expect.objectContaining({ code: 'BLOB_CORRUPT' }));
  });

  // Fuzz defect (issue 16): the checksum was the only guard of the fanout, so an index written wrong
  // (or forged with its checksum recomputed) sent find() past the end of the buffer (a RangeError).
  it('rejects a fanout that does not match the entries, even with a valid checksum', () => {
    const resum = (b: Buffer): Buffer => {
      createHash('sha256').update(b.subarray(0, b.length - 32)).digest().copy(b, b.length - 32);
      return b;
    };
    const entries = [1, 2, 3].map((i) => ({ id: id(i), offset: 4 + (i - 1) * 10, length: 10 }));
    const bad = Buffer.from(encodePackIndex(entries, 34));
    bad.writeUInt32BE(0x7fffffff, 16 + 4 * 0x10); // fanout[0x10]: far more entries than exist
    expect(() => decodePackIndex(resum(bad))).toThrow(expect.objectContaining({ code: 'BLOB_CORRUPT' }));
    const huge = Buffer.from(encodePackIndex(entries, 34));
    huge.writeBigUInt64BE(2n ** 63n, 8); // pack size beyond a safe integer
    expect(() => decodePackIndex(resum(huge))).toThrow(expect.objectContaining({ code: 'BLOB_CORRUPT' }));
  });

  it('rejects ids out of order or repeated, and offsets past a safe integer, even with a valid checksum', () => {
    const resum = (b: Buffer): Buffer => {
      createHash('sha256').update(b.subarray(0, b.length - 32)).digest().copy(b, b.length - 32);
      return b;
    };
    const entries = [1, 2, 3, 4].map((i) => ({ id: id(i), offset: 4 + (i - 1) * 10, length: 10 }));
    const good = encodePackIndex(entries, 44);
    const entry = (i: number): number => 1040 + i * 44;
    // Two entries swapped: no longer ascending.
    const swapped = Buffer.from(good);
    good.copy(swapped, entry(1), entry(2), entry(3));
    good.copy(swapped, entry(2), entry(1), entry(2));
    expect(() => decodePackIndex(resum(swapped))).toThrow(/ids not sorted/);
    // An id equal to the one before it, differing only in its last byte from the original.
    const repeated = Buffer.from(good);
    good.copy(repeated, entry(2), entry(1), entry(1) + 32);
    expect(() => decodePackIndex(resum(repeated))).toThrow(/ids not sorted|fanout/);
    const lastByte = Buffer.from(good);
    good.copy(lastByte, entry(2), entry(1), entry(1) + 31);
    lastByte[entry(2) + 31] = (good[entry(1) + 31] as number) - (good[entry(1) + 31] === 0 ? 0 : 1);
    expect(() => decodePackIndex(resum(lastByte))).toThrow(expect.objectContaining({ code: 'BLOB_CORRUPT' }));
    // An offset whose high word makes it larger than 2^53.
    const far = Buffer.from(good);
    far.writeUInt32BE(0x200000, entry(0) + 32);
    expect(() => decodePackIndex(resum(far))).toThrow(/out of bounds/);
    // Offsets above 2^32 that are safe integers still decode exactly.
    const big = decodePackIndex(encodePackIndex([{ id: id(9), offset: 2 ** 40 + 12345, length: 7 }], 2 ** 40 + 20000));
    expect(big.find(id(9))).toEqual({ offset: 2 ** 40 + 12345, length: 7 });
    expect(big.packSize).toBe(2 ** 40 + 20000);
  });
});
