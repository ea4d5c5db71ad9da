import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCkptError } from '../errors.js';
import { availableCodecs, compress, decompress, hasZstd, planCompression, runCompression } from './blob-codec.js';
import { CODEC_IDS, type CodecName } from './blob-header.js';

const source = Buffer.from('export function add(a: number, b: number): number {\n  return a + b;\n}\n'.repeat(40));

describe('blob codec', () => {
  it('round-trips arbitrary bytes through every available codec', () => {
    const codecs = availableCodecs();
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), fc.constantFrom(...codecs), (bytes, codec: CodecName) => {
        const raw = Buffer.from(bytes);
        const { codec: used, payload } = compress(raw, codec);
        expect(decompress(used, payload, raw.length).equals(raw)).toBe(true);
        // The codec itself, even where compress() would have kept the bytes raw.
        if (codec !== 'raw') {
          const job = planCompression(Buffer.alloc(100), codec);
          if (job) expect(decompress(CODEC_IDS[job.codec], runCompression(job, raw), raw.length).equals(raw)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('compresses source text and keeps tiny or incompressible input raw', () => {
    const text = compress(source);
    expect(text.codec).toBe(CODEC_IDS.brotli);
    expect(text.payload.length).toBeLessThan(source.length / 4);
    expect(compress(Buffer.from('tiny')).codec).toBe(CODEC_IDS.raw);
    const noise = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 2654435761) >>> 24 ^ (i * 40503) & 0xff));
    const random = Buffer.concat([noise, Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(8192)))]);
    expect(compress(random).codec).toBe(CODEC_IDS.raw);
    expect(compress(source, 'raw').codec).toBe(CODEC_IDS.raw);
    expect(compress(source, 'deflate').codec).toBe(CODEC_IDS.deflate);
  });

  it('skips the full pass when a probe of a large input does not compress', () => {
    const big = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(65536)));
    const large = Buffer.concat(Array.from({ length: 5 }, () => big));
    expect(planCompression(large)).toBeUndefined();
  });

  it('fails closed with BLOB_CORRUPT on garbage payloads and wrong lengths', () => {
    const { codec, payload } = compress(source);
    expect(() => decompress(codec, payload, source.length - 1)).toThrow(expect.objectContaining({ code: 'BLOB_CORRUPT' }));
    expect(() => decompress(codec, payload, source.length + 1)).toThrow(expect.objectContaining({ code: 'BLOB_CORRUPT' }));
    expect(() => decompress(CODEC_IDS.raw, source, 3)).toThrow(expect.objectContaining({ code: 'BLOB_CORRUPT' }));
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), fc.constantFrom(1, 3), fc.nat(4096), (bytes, c, len) => {
        try {
          decompress(c as 1 | 3, bytes, len);
        } catch (err) {
          expect(isCkptError(err, 'BLOB_CORRUPT')).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('reports a zstd blob on a Node without zstd as IO, not corruption', () => {
    if (hasZstd()) return;
    expect(() => decompress(CODEC_IDS.zstd, Buffer.from('x'), 1)).toThrow(
      expect.objectContaining({ code: 'IO', message: expect.stringContaining('zstd not supported') }),
    );
    // Asking for zstd where it does not exist falls back to brotli.
    expect(compress(source, 'zstd').codec).toBe(CODEC_IDS.brotli);
  });
});
