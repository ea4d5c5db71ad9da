// Hostile pack content (test/security/git-readers.fuzz.test.ts fuzzes the readers at large): what a
// delta may build, and a pack index whose offsets are bad for some entries.
import { describe, expect, it } from 'vitest';
import { applyDelta } from './git-pack.js';

const varint = (n: number): Buffer => {
  const out: number[] = [];
  do {
    let c = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) c |= 0x80;
    out.push(c);
  } while (n > 0);
  return Buffer.from(out);
};

describe('applyDelta', () => {
  it('refuses a result over the cap before allocating it (1-byte ops copying 64 KiB each)', () => {
    const source = Buffer.alloc(65536, 'x');
    const size = 600 * 1024 * 1024; // over the 512 MiB cap: ~9,600 one-byte copy ops
    const delta = Buffer.concat([varint(source.length), varint(size), Buffer.alloc(size / 65536, 0x80)]);
    const rss = process.memoryUsage().rss;
    expect(() => applyDelta(delta, source)).toThrow(/delta result of 629145600 bytes/);
    expect(process.memoryUsage().rss - rss).toBeLessThan(64 * 1024 * 1024);
    expect(() => applyDelta(Buffer.concat([varint(65536), varint(2 * 65536), Buffer.from([0x80, 0x80])]), source, 65536)).toThrow(/delta result/);
    expect(applyDelta(Buffer.concat([varint(65536), varint(2 * 65536), Buffer.from([0x80, 0x80])]), source).length).toBe(2 * 65536);
  });
});
