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
});
