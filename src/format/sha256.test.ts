import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from './sha256.js';

describe('sha256Hex', () => {
  it('is the hex sha256 of the bytes, for buffers, views into bigger ones and the empty input', () => {
    const big = randomBytes(70_000);
    for (const data of [Buffer.alloc(0), Buffer.from('a'), big, big.subarray(100, 16_484), new Uint8Array(big.buffer, big.byteOffset + 7, 33)]) {
      expect(sha256Hex(data)).toBe(createHash('sha256').update(data).digest('hex'));
    }
  });
});
