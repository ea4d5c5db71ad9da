import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCkptError } from '../errors.js';
import { BLOB_HEADER_LENGTH, CODEC_IDS, decodeBlobHeader, encodeBlob, encodeBlobHeader } from './blob-header.js';

describe('blob header', () => {
  it('lays out magic, format, codec and a big-endian uint64 raw length', () => {
    const h = encodeBlobHeader(CODEC_IDS.brotli, 0x0102030405);
    expect(h.toString('hex')).toBe('434b42' + '01' + '01' + '0000000102030405');
    expect(decodeBlobHeader(h)).toEqual({ codec: 1, rawLength: 0x0102030405, headerLength: BLOB_HEADER_LENGTH });
  });

  it('round-trips a record', () => {
    const raw = Buffer.from('hello');
    const rec = encodeBlob(raw.length, CODEC_IDS.raw, raw);
    const h = decodeBlobHeader(rec);
    expect(h).toMatchObject({ codec: 0, rawLength: 5 });
    expect(rec.subarray(h.headerLength).toString()).toBe('hello');
  });

  it('rejects bad magic, format, codec, length as BLOB_CORRUPT', () => {
    const good = encodeBlobHeader(CODEC_IDS.raw, 3);
    const mutate = (i: number, v: number): Buffer => {
      const b = Buffer.from(good);
      b[i] = v;
      return b;
    };
    for (const bad of [good.subarray(0, 12), mutate(0, 0x58), mutate(3, 2), mutate(4, 9), mutate(5, 0xff)]) {
      expect(() => decodeBlobHeader(bad)).toThrow(expect.objectContaining({ code: 'BLOB_CORRUPT' }));
    }
  });

  it('throws nothing but BLOB_CORRUPT on random garbage', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.boolean(), (bytes, withMagic) => {
        const buf = withMagic ? Buffer.concat([Buffer.from('CKB\x01'), bytes]) : Buffer.from(bytes);
        try {
          const h = decodeBlobHeader(buf);
          expect(Number.isSafeInteger(h.rawLength)).toBe(true);
        } catch (err) {
          expect(isCkptError(err, 'BLOB_CORRUPT')).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
